// The CLI's process entry (bin/maso.js runs its compiled form; `npx tsx src/cli/main-entry.ts …` runs
// it from source): calls main() and sets the exit code. It never exits 0 with work unfinished: if the
// event loop empties while main() is still pending (something awaited a promise that can never
// settle), that is an error, exit code 1.
import { MasoError } from "../errors.js";
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
    // a MasoError is the user's to fix (its message says how); anything else is a bug, so show where
    console.error(err instanceof MasoError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err));
    process.exitCode = 1;
  },
);
