// `maso dashboard <runDir>`: serves the run's live dashboard until Ctrl-C (SIGINT/SIGTERM), then
// closes the server and returns 0. The only command that waits on signals; it never exits itself.
import { existsSync } from "node:fs";
import { serveDashboard } from "../../dashboard/serve.js";
import { MasoError } from "../../errors.js";
import { num, parseFlags, str } from "../args.js";
import { usageError } from "../exit-codes.js";
import { untilSignal } from "../until-signal.js";
import { type Command, println } from "./types.js";

export const dashboardCommand: Command = {
  name: "dashboard",
  summary: "serve a run's live metrics and trajectory viewer on a local port",
  help: `usage: maso dashboard <runDir> [--port <n>] [--host <addr>]

Serves a local web page with live per-role curves (reward by kind, entropy, KL, grad norm,
lengths, eval metric, loss) read from <runDir>/metrics.jsonl, and a trajectory viewer for
<runDir>/trajectories. Stops on Ctrl-C.

options:
  --port <n>      port (default 8377; 0 picks a free one)
  --host <addr>   address to bind (default 127.0.0.1)`,
  async run(argv, io) {
    const p = parseFlags("dashboard", argv, { port: { type: "string" }, host: { type: "string" } }, 1);
    const runDir = p.positionals[0];
    if (!runDir) throw usageError("dashboard: missing the run directory", "dashboard");
    if (!existsSync(runDir)) throw new MasoError("RUN_NOT_FOUND", `no run directory ${runDir}`, "pass a directory a maso run wrote");
    const server = await serveDashboard({ runDir, port: num(p, "port", "dashboard", { int: true, min: 0 }) ?? 8377, host: str(p, "host") });
    println(io, `dashboard for ${runDir}: ${server.url}  (Ctrl-C to stop)`);
    await untilSignal();
    await server.close();
    return 0;
  },
};
