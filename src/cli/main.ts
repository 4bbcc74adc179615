// The `maso` command line: picks the subcommand, runs it and returns an exit code (0 ok,
// 1 failure, 2 usage error). Errors are printed with their code and hint. Never calls
// process.exit, so it can be driven from tests; main-entry.ts sets the process exit code.
import { readFileSync } from "node:fs";
import { MasoError } from "../errors.js";
import { compareCommand } from "./commands/compare.js";
import { dashboardCommand } from "./commands/dashboard.js";
import { doctorCommand } from "./commands/doctor.js";
import { evalCommand } from "./commands/eval.js";
import { exportCommand } from "./commands/export.js";
import { exportMetricsCommand } from "./commands/export-metrics.js";
import { exportTrajectoriesCommand } from "./commands/export-trajectories.js";
import { natsConfigCommand } from "./commands/nats-config.js";
import { pretrainCommand } from "./commands/pretrain.js";
import { rmCommand } from "./commands/rm.js";
import { serveCommand } from "./commands/serve.js";
import { sftCommand } from "./commands/sft.js";
import { trainCommand } from "./commands/train.js";
import { workerCommand } from "./commands/worker.js";
import type { CliIo, Command } from "./commands/types.js";
import { EXIT_CODES_HELP, EXIT_OK, EXIT_USAGE, exitCodeFor } from "./exit-codes.js";

/** Every command, in help order. */
export const COMMANDS: readonly Command[] = [
  trainCommand,
  evalCommand,
  compareCommand,
  pretrainCommand,
  sftCommand,
  rmCommand,
  exportCommand,
  exportMetricsCommand,
  exportTrajectoriesCommand,
  dashboardCommand,
  serveCommand,
  workerCommand,
  natsConfigCommand,
  doctorCommand,
];

const NAME_WIDTH = Math.max(...COMMANDS.map((c) => c.name.length));

export const USAGE = `usage: maso <command> [options]

commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(NAME_WIDTH)} ${c.summary}`).join("\n")}
  ${"help".padEnd(NAME_WIDTH)} show this message ('maso <command> --help' for one command)
  ${"--version".padEnd(NAME_WIDTH)} print maso's version

${EXIT_CODES_HELP}`;

/** The package's version (package.json sits two folders up from src/cli/ and from dist/cli/ alike). */
export function masoVersion(): string {
  return (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;
}

const defaultIo = (): CliIo => ({ out: process.stdout, err: process.stderr, env: process.env });

/**
 * Runs `maso <argv…>` and resolves to the exit code.
 * @example
 * process.exitCode = await main(["pretrain", "--steps", "20"]);
 */
export async function main(argv: readonly string[], io: CliIo = defaultIo()): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "help" || name === "--help" || name === "-h") {
    const cmd = COMMANDS.find((c) => c.name === rest[0]);
    io.out.write(`${cmd ? `${cmd.help}\n\n${EXIT_CODES_HELP}` : USAGE}\n`);
    return EXIT_OK;
  }
  if (name === "--version" || name === "-v" || name === "version") {
    io.out.write(`maso ${masoVersion()}\n`);
    return EXIT_OK;
  }
  const cmd = COMMANDS.find((c) => c.name === name);
  if (!cmd) {
    io.err.write(`maso: unknown command '${name}'\n\n${USAGE}\n`);
    return EXIT_USAGE;
  }
  if (rest.includes("--help") || rest.includes("-h")) {
    io.out.write(`${cmd.help}\n\n${EXIT_CODES_HELP}\n`);
    return EXIT_OK;
  }
  try {
    return await cmd.run(rest, io);
  } catch (err) {
    if (err instanceof MasoError) io.err.write(`maso ${name}: error ${err.code}: ${err.message}\n`);
    else io.err.write(`maso ${name}: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    return exitCodeFor(err);
  }
}
