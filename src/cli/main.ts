// The `maso` command line: parses the subcommand and returns an exit code (0 ok, 1 failure,
// 2 usage error). Never calls process.exit, so it can be driven from tests.
import { doctorReport, formatDoctor } from "./doctor.js";

const USAGE = `usage: maso <command> [options]

commands:
  doctor [--json]   report the native build: BLAS in use, threads, OpenMP
  help              show this message`;

export async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  switch (cmd) {
    case "doctor": {
      const report = doctorReport();
      console.log(rest.includes("--json") ? JSON.stringify(report, null, 2) : formatDoctor(report));
      return report.nativeBuild === "ok" ? 0 : 1;
    }
    case undefined:
    case "help":
    case "--help":
    case "-h":
      console.log(USAGE);
      return 0;
    default:
      console.error(`maso: unknown command '${cmd}'\n\n${USAGE}`);
      return 2;
  }
}
