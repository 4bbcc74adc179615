// `maso serve <run | module>`: serves a trained cast (or a module's untrained one) through the
// gateway's OpenAI-compatible endpoint without training, until Ctrl-C. Never exits itself.
import { randomBytes } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import { MasoError } from "../../errors.js";
import { castBackend } from "../../gateway/cast-backend.js";
import { serveGateway } from "../../gateway/serve.js";
import { createRuntime } from "../../runtime/runtime.js";
import { restoreRun } from "../../run/resume.js";
import { num, parseFlags, str } from "../args.js";
import { usageError } from "../exit-codes.js";
import { untilSignal } from "../until-signal.js";
import { workflowRun } from "./eval-workflow.js";
import { savedConfig } from "./train.js";
import { type Command, println } from "./types.js";

export const serveCommand: Command = {
  name: "serve",
  summary: "serve a trained cast through the OpenAI-compatible gateway",
  help: `usage: maso serve <runDir | workflow-or-agent file> [--checkpoint best|latest|<step>|init] [--port <n>] [--host <addr>] [--api-key <key>] [--config <file>]

Loads the run's cast at a checkpoint (default: best on dev, else the newest) — or, for a module
file, its untrained cast — and serves POST /v1/chat/completions, /v1/responses, /v1/messages and
GET /v1/models, the requested \`model\` naming the role. Sampling is the request's, greedy by
default; the run config's sampling.maxNewTokens caps every call. Every request needs the API key
(Bearer or x-api-key): --api-key, else MASO_API_KEY, else a random one printed at start.
Stops on Ctrl-C.

options:
  --checkpoint <which>  best, latest, a step, or init (untrained)
  --port <n>            port (default 8400; 0 picks a free one)
  --host <addr>         address to bind (default 127.0.0.1; another address also accepts its own Host name)
  --api-key <key>       the key clients must send (default: MASO_API_KEY, else a random one)
  --config <file>       module file: the run config (default: its 'config' export)`,
  async run(argv, io) {
    const p = parseFlags(
      "serve",
      argv,
      {
        checkpoint: { type: "string" },
        port: { type: "string" },
        host: { type: "string" },
        "api-key": { type: "string" },
        config: { type: "string" },
      },
      1,
    );
    const src = p.positionals[0];
    if (!src) throw usageError("serve: missing the run directory or module file", "serve");
    if (!existsSync(src)) throw new MasoError("RUN_NOT_FOUND", `no run directory or file ${src}`, "pass a run directory or a module file");
    const rc = statSync(src).isDirectory() ? await savedConfig(src) : null;
    const { roles, opts, choice, runDir } = await workflowRun(src, rc, p, "serve");
    const { rt, step, checkpoint } = await restoreRun({
      runDir,
      checkpoint: choice,
      build: (s) => createRuntime({ ...opts, startStep: s }),
    });
    const port = num(p, "port", "serve", { int: true, min: 0 }) ?? 8400;
    const given = str(p, "api-key") ?? process.env.MASO_API_KEY;
    const apiKey = given || `maso-${randomBytes(18).toString("base64url")}`;
    const host = str(p, "host");
    const backend = castBackend(rt.cast, rt.transport, roles, { apiKey, maxNewTokens: opts.maxNewTokens });
    const server = await serveGateway(backend, { port, host });
    const what = checkpoint === "init" ? "untrained" : `${checkpoint} checkpoint, step ${step}`;
    println(io, `serving ${roles.join(", ")} (${what}) at ${server.url}/v1  (Ctrl-C to stop)`);
    if (!given) println(io, `API key: ${apiKey}`);
    await untilSignal();
    await server.close();
    return 0;
  },
};
