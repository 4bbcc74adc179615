// Process entry for running the CLI from source (`npx tsx src/cli/main-entry.ts …`): calls main()
// and sets the exit code. The published launcher bin/maso.js does the same with dist/cli/main.js.
import { main } from "./main.js";

process.exitCode = await main(process.argv.slice(2));
