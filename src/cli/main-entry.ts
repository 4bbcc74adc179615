// Process entry for running the CLI from source (`npx tsx src/cli/main-entry.ts …`): calls main()
// and sets the exit code. The published launcher bin/maso.js does the same with dist/cli/main.js,
// and like it never exits 0 with work unfinished (the event loop emptied while main() was pending).
import { main } from "./main.js";

let settled = false;
process.on("beforeExit", () => {
  if (settled) return;
  settled = true;
  console.error(
    "maso stopped with work unfinished: the command was still waiting on a promise that can never settle (nothing left to run)",
  );
  process.exitCode = 1;
});
main(process.argv.slice(2)).then(
  (code) => {
    settled = true;
    process.exitCode = code;
  },
  (err: unknown) => {
    settled = true;
    console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
    process.exitCode = 1;
  },
);
