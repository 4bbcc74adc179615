// Least-privilege NATS users for one run: the controller, one user per model's workers and a
// read-only observer, each allowed only the run's subjects its role uses. The run key already
// keeps what travels secret and unforgeable; these permissions keep a credential holder from
// publishing or listening where its role has no business (deleting KV entries, flooding another
// model's subjects, forging a reply into the controller's inbox). docs/security.md has the layout.
import { DP_FORWARD_OP, DP_SHARE_OP, DP_STEP_OP } from "./data-parallel-peers.js";
import { randomBytes } from "node:crypto";
import type { NatsAuth } from "./connect.js";
import { partStream } from "./part-transfer.js";
import { type NatsRole, roleInbox, runBucket } from "./subjects.js";

/** One user of the server's `authorization { users = [...] }`, with its role. */
export interface NatsUser {
  user: string;
  password: string;
  role: NatsRole;
}

/** What one user may do: nats-server's `permissions` map. */
export interface NatsPermissions {
  publish: { allow?: string[]; deny?: string[] };
  subscribe: { allow: string[] };
  /** Replies to requests it received (workers); expires after the reply window. */
  allow_responses?: { max: number; expires: string };
}

/** The user name of a role in a run: `maso-<run>-controller`, `maso-<run>-worker-<model>`, `maso-<run>-observer`. */
export const roleUser = (run: string, role: NatsRole): string =>
  `maso-${run}-${role.kind === "worker" ? `worker-${role.model}` : role.kind}`;

/** One user per role of `run` (the controller, each model's workers, the observer), with random passwords. */
export function runUsers(run: string, models: readonly string[]): NatsUser[] {
  const roles: NatsRole[] = [{ kind: "controller" }, ...models.map((model) => ({ kind: "worker" as const, model })), { kind: "observer" }];
  return roles.map((role) => ({ user: roleUser(run, role), password: randomBytes(24).toString("hex"), role }));
}

/** The credentials of `role` among `users` (what its process gets through MASO_NATS_USER / MASO_NATS_PASSWORD). */
export function authOf(users: readonly NatsUser[], run: string, role: NatsRole): NatsAuth {
  const u = users.find((x) => x.user === roleUser(run, role));
  if (!u) throw new Error(`no NATS user ${roleUser(run, role)}`);
  return { user: u.user, pass: u.password };
}

/**
 * The JetStream API requests on one stream: looking it up, reading messages by subject, creating
 * it (either side may come first), and `more` operations `$JS.API.<op>.<stream>` (e.g. "STREAM.PURGE").
 */
function streamApi(stream: string, ...more: string[]): string[] {
  const api = (op: string) => `$JS.API.${op}.${stream}`;
  return [api("STREAM.INFO"), api("STREAM.CREATE"), api("STREAM.MSG.GET"), api("DIRECT.GET"), `${api("DIRECT.GET")}.>`, ...more.map(api)];
}

/**
 * What `role` may publish and subscribe to in `run`. `replyWindowMs` bounds how long after a
 * request a worker may still reply to it (the run's callTimeoutMs, or longer).
 * @example rolePermissions("r1", { kind: "worker", model: "coder" }, 600_000).subscribe.allow; // ["maso.r1.coder.>", "_INBOX.maso.r1.worker.coder.>"]
 */
export function rolePermissions(run: string, role: NatsRole, replyWindowMs: number): NatsPermissions {
  const bucket = runBucket(run);
  const kvStream = `KV_${bucket}`;
  // both sides upload and download checkpoint parts, and purge a transfer once it is received
  const parts = [`maso-parts.${run}.>`, ...streamApi(partStream(run), "STREAM.PURGE")];
  const inbox = `${roleInbox(run, role)}.>`;
  if (role.kind === "observer") return { publish: { deny: [">"] }, subscribe: { allow: [`$KV.${bucket}.>`] } };
  if (role.kind === "controller")
    return {
      publish: {
        allow: [
          `maso.${run}.>`,
          `$KV.${bucket}.>`,
          "$JS.API.INFO",
          // the membership watch is an ordered consumer (created, renewed, flow-controlled)
          ...streamApi(kvStream),
          `$JS.API.CONSUMER.CREATE.${kvStream}`,
          `$JS.API.CONSUMER.CREATE.${kvStream}.>`,
          `$JS.API.CONSUMER.DELETE.${kvStream}.*`,
          `$JS.API.CONSUMER.INFO.${kvStream}.*`,
          `$JS.FC.${kvStream}.>`,
          ...parts,
        ],
      },
      subscribe: { allow: [inbox] },
    };
  const m = role.model;
  return {
    publish: {
      allow: [
        // a replica hands samples to, and fetches weights from, rank 0 of its own model; rank 0
        // sends its data-parallel ranks their shares and steps (each rank checks the sender)
        `maso.${run}.${m}.0.*`,
        `maso.${run}.${m}.*.${DP_FORWARD_OP}`,
        `maso.${run}.${m}.*.${DP_SHARE_OP}`,
        `maso.${run}.${m}.*.${DP_STEP_OP}`,
        `$KV.${bucket}.workers.${m}.*`,
        `$KV.${bucket}.waiting.${m}.*`,
        "$JS.API.INFO",
        ...streamApi(kvStream),
        ...parts,
      ],
    },
    subscribe: { allow: [`maso.${run}.${m}.>`, inbox] },
    // a chunked reply is several messages: no count limit, only the window
    allow_responses: { max: -1, expires: `${Math.ceil(replyWindowMs / 1000)}s` },
  };
}

const q = JSON.stringify;
const list = (xs: readonly string[]) => `[${xs.map((x) => q(x)).join(", ")}]`;

/** One user's entry in nats-server's config syntax. */
function userEntry(u: NatsUser, run: string, replyWindowMs: number): string {
  const p = rolePermissions(run, u.role, replyWindowMs);
  const pub = [p.publish.allow && `allow: ${list(p.publish.allow)}`, p.publish.deny && `deny: ${list(p.publish.deny)}`]
    .filter(Boolean)
    .join(", ");
  const resp = p.allow_responses
    ? `,\n        allow_responses: { max: ${p.allow_responses.max}, expires: ${q(p.allow_responses.expires)} }`
    : "";
  return `    {
      user: ${q(u.user)}, password: ${q(u.password)},
      permissions: {
        publish: { ${pub} },
        subscribe: { allow: ${list(p.subscribe.allow)} }${resp}
      }
    }`;
}

/**
 * nats-server's `authorization { users = [...] }` block for `users` of `run`.
 * @example authorizationBlock("r1", runUsers("r1", ["coder"]), 660_000);
 */
export function authorizationBlock(run: string, users: readonly NatsUser[], replyWindowMs: number): string {
  return `authorization {\n  users = [\n${users.map((u) => userEntry(u, run, replyWindowMs)).join("\n")}\n  ]\n}\n`;
}
