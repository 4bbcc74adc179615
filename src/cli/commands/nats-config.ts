// `maso nats-config`: the per-role users of one run for a nats-server the user runs (attached
// workers): prints the server's `authorization` block and, as comments above it, the credentials
// each process gets. It connects to nothing and writes no file; the output holds the passwords.
import { authorizationBlock, roleUser, runUsers } from "../../distributed/nats-users.js";
import { checkToken } from "../../distributed/subjects.js";
import { num, parseFlags, str } from "../args.js";
import { usageError } from "../exit-codes.js";
import { type CliIo, type Command, println } from "./types.js";

const FLAGS = {
  run: { type: "string" },
  models: { type: "string" },
  "call-timeout-ms": { type: "string" },
} as const;

/** runtime.nats.callTimeoutMs's default: a worker may reply this long after a request, and a minute more. */
const DEFAULT_CALL_TIMEOUT_MS = 600_000;

async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const p = parseFlags("nats-config", argv, FLAGS);
  const runId = str(p, "run");
  const models = str(p, "models")
    ?.split(",")
    .map((m) => m.trim())
    .filter(Boolean);
  if (!runId || !models?.length) throw usageError("nats-config: --run and --models are required", "nats-config");
  checkToken("run id", runId);
  for (const m of models) checkToken("model name", m);
  if (new Set(models).size !== models.length)
    throw usageError(`nats-config: --models names a model twice: ${models.join(",")}`, "nats-config");
  const callTimeoutMs = num(p, "call-timeout-ms", "nats-config", { int: true, min: 100, max: 86_400_000 }) ?? DEFAULT_CALL_TIMEOUT_MS;
  const users = runUsers(runId, models);
  println(io, `# maso: NATS users of run ${runId} (one per role). This holds their passwords: keep the server's config file mode 0600.`);
  println(io, "# Give each process its own pair, in its environment:");
  for (const u of users) {
    const who = u.role.kind === "worker" ? `maso worker --model ${u.role.model} (every rank)` : u.role.kind;
    println(io, `#   ${who}: MASO_NATS_USER=${roleUser(runId, u.role)} MASO_NATS_PASSWORD=${u.password}`);
  }
  io.out.write(authorizationBlock(runId, users, callTimeoutMs + 60_000));
  return 0;
}

export const natsConfigCommand: Command = {
  name: "nats-config",
  summary: "print a nats-server authorization block with least-privilege users for one run",
  help: `usage: maso nats-config --run <id> --models <a,b,…> [--call-timeout-ms <ms>]

Prints, for a nats-server you run yourself, an 'authorization { users = [...] }' block with one
user per role of run <id>: the controller, the workers of each model (all its ranks), and a
read-only observer, each with random passwords and publish/subscribe permissions limited to what
that role does in this run. Comment lines above the block give each process its
MASO_NATS_USER and MASO_NATS_PASSWORD. Paste the block into the server's config (next to listen
and jetstream), keep that file mode 0600, and start the controller with --run-id <id> --workers
attach. See docs/distributed.md and docs/security.md.

options:
  --run <id>              the run id (runtime.nats.run, maso worker --run)
  --models <a,b,…>        the models of the run's cast
  --call-timeout-ms <ms>  the run's runtime.nats.callTimeoutMs (default 600000): a worker may
                          reply to a request for this long, and a minute more`,
  run,
};
