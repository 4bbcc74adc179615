// `maso dashboard <runDir>...`: serves the runs' live dashboard (several runs overlaid on every
// chart) until Ctrl-C (SIGINT/SIGTERM), then closes the server and returns 0. The only command that
// waits on signals; it never exits itself.
import { existsSync } from "node:fs";
import { serveDashboard } from "../../dashboard/serve.js";
import { MasoError } from "../../errors.js";
import { num, parseFlags, str } from "../args.js";
import { usageError } from "../exit-codes.js";
import { untilSignal } from "../until-signal.js";
import { type Command, println } from "./types.js";

export const dashboardCommand: Command = {
  name: "dashboard",
  summary: "serve runs' live metrics and trajectory viewer on a local port",
  help: `usage: maso dashboard <runDir> [<runDir>...] [--port <n>] [--host <addr>]

Serves a local web page with live per-role curves grouped by kind (rewards, policy, lengths,
timing, eval, other) read from <runDir>/metrics.jsonl, a run summary (before/after eval metric,
best step, wall time, steps, cast), and a trajectory viewer for <runDir>/trajectories. Several
run directories (seeds, variants) are overlaid on every chart, one colour per run. Stops on Ctrl-C.

options:
  --port <n>      port (default 8377; 0 picks a free one)
  --host <addr>   address to bind (default 127.0.0.1)`,
  async run(argv, io) {
    const p = parseFlags("dashboard", argv, { port: { type: "string" }, host: { type: "string" } }, Number.POSITIVE_INFINITY);
    const runDirs = p.positionals;
    if (runDirs.length === 0) throw usageError("dashboard: missing the run directory", "dashboard");
    for (const d of runDirs)
      if (!existsSync(d)) throw new MasoError("RUN_NOT_FOUND", `no run directory ${d}`, "pass directories a maso run wrote");
    const server = await serveDashboard({
      runDirs,
      port: num(p, "port", "dashboard", { int: true, min: 0 }) ?? 8377,
      host: str(p, "host"),
    });
    println(io, `dashboard for ${runDirs.join(", ")}: ${server.url}  (Ctrl-C to stop)`);
    await untilSignal();
    await server.close();
    return 0;
  },
};
