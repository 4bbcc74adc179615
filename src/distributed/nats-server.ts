// `--nats embedded`: a nats-server (Debian's `nats-server` package) for one run, bound to
// 127.0.0.1 on a free port, with JetStream for the membership bucket and either a random token or
// the run's users (one per role: nats-users.ts), so no open listener and no unauthenticated client
// ever exists. Tests start their servers the same way. The server never outlives the process that
// started it (WRAPPER below), and its config file, which holds the secrets, is removed as soon as
// the server has read it.
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, connect as tcpConnect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MasoError } from "../errors.js";

export interface NatsServer {
  url: string;
  /** The token every client needs; empty when an `authorization` block (per-role users) replaced it. */
  token: string;
  port: number;
  /** The server's directory: its config and JetStream store (kept by stop({ keepStore }) for a restart). */
  storeDir: string;
  /** Stops the server process; `keepStore` leaves the JetStream directory for a restart. */
  stop(o?: { keepStore?: boolean }): Promise<void>;
}

/**
 * Runs nats-server ($1, config $2) so that it dies with this process, however this process dies.
 * Node has no prctl(PR_SET_PDEATHSIG), and a SIGKILLed parent runs no cleanup, so a small sh holds
 * the read end of a pipe (our stdin to it, kept as fd 3) whose only write end is ours: the kernel
 * closes it when we die, `read` returns, and the watcher stops the server (TERM, KILL after 5 s).
 * The watcher runs in the background, so sh still notices a server that exits on its own and exits
 * with its status. After the server ends, sh removes the config file (if a start failed before we
 * did) and, when we are dead and $3 is "own", the whole temporary directory (the JetStream store).
 * We are dead when the watcher saw the pipe close with nothing written (stop() writes a line
 * first); it leaves a mark beside the config, as the server can be gone while we are still exiting
 * and kill -0 then still finds us.
 * This needs no polling of our pid and cannot hit a reused one: $s is sh's own unreaped child.
 */
const WRAPPER = `exec 3<&0 </dev/null
"$1" -c "$2" & s=$!
{ read _ <&3 || : >"$2.gone"; kill -TERM "$s"; i=0; while kill -0 "$s" && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done; kill -KILL "$s"; } 2>/dev/null &
w=$!
wait "$s"; st=$?
kill "$w" 2>/dev/null
gone=no
if [ -e "$2.gone" ] || ! kill -0 "$PPID" 2>/dev/null; then gone=yes; fi
rm -f "$2" "$2.gone"
if [ "$3" = own ] && [ $gone = yes ]; then rm -rf "$(dirname "$2")"; fi
exit $st`;

/** A TCP port nothing listens on right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const c = tcpConnect(port, "127.0.0.1");
    c.once("connect", () => {
      c.destroy();
      resolve(true);
    });
    c.once("error", () => resolve(false));
  });

/**
 * Starts nats-server on 127.0.0.1 (a free port unless given) with JetStream and token auth, or
 * with `authorization`, a config block of its own (nats-users.ts: one user per role).
 * Throws NATS_SERVER_MISSING when the binary is not installed.
 * @example
 * const server = await startNatsServer(); // server.url, server.token
 * await server.stop();
 */
export async function startNatsServer(
  o: { port?: number; token?: string; authorization?: string; storeDir?: string; binary?: string } = {},
): Promise<NatsServer> {
  const port = o.port ?? (await freePort());
  const token = o.authorization ? "" : (o.token ?? randomBytes(24).toString("hex"));
  const own = !o.storeDir;
  const storeDir = o.storeDir ?? (await mkdtemp(join(tmpdir(), "maso-nats-")));
  const bin = o.binary ?? process.env.MASO_NATS_SERVER ?? "nats-server";
  // the secrets go in a private config file, not argv, where any local user could read them
  const conf = join(storeDir, "server.conf");
  const q = JSON.stringify;
  const auth = o.authorization ?? `authorization { token: ${q(token)} }\n`;
  await writeFile(conf, `listen: ${q(`127.0.0.1:${port}`)}\njetstream { store_dir: ${q(join(storeDir, "js"))} }\n${auth}`, { mode: 0o600 });
  let child: ChildProcess;
  let stderr = "";
  const exited = new Promise<string>((resolve) => {
    child = spawn("/bin/sh", ["-c", WRAPPER, "maso-nats", bin, conf, own ? "own" : "given"], { stdio: ["pipe", "ignore", "pipe"] });
    child.stdin?.on("error", () => {}); // EPIPE once the wrapper has exited
    child.stderr?.on("data", (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4000);
    });
    child.once("error", (e: NodeJS.ErrnoException) => resolve(e.code === "ENOENT" ? "ENOENT" : e.message));
    // 127: sh found no such command
    child.once("exit", (code, signal) => resolve(code === 127 ? "ENOENT" : `exited with ${signal ?? code}`));
  });
  let early: string | null = null;
  void exited.then((why) => {
    early = why;
  });
  const t0 = Date.now();
  while (!(await accepts(port))) {
    if (early === "ENOENT")
      throw new MasoError(
        "NATS_SERVER_MISSING",
        `${bin} is not installed`,
        "install it (Debian/Ubuntu: apt-get install nats-server), or give --nats <url> of a running server",
      );
    if (early) throw new MasoError("NATS_SERVER", `nats-server ${early}: ${stderr.trim().split("\n").at(-1) ?? ""}`, "see its log above");
    if (Date.now() - t0 > 15_000) {
      child!.stdin?.end();
      throw new MasoError("NATS_SERVER", "nats-server did not start listening within 15 s", stderr.trim().split("\n").at(-1) ?? "");
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  // read at start and never again (nothing reloads it): the secrets need not stay on disk
  await rm(conf, { force: true });
  return {
    url: `nats://127.0.0.1:${port}`,
    token,
    port,
    storeDir,
    async stop({ keepStore = false } = {}) {
      // closing the pipe is what stops the server (the wrapper's watcher kills it, KILL after 5 s);
      // the line says we live, so the wrapper leaves the store to us
      child.stdin?.end("stop\n");
      await exited;
      if (!keepStore) await rm(storeDir, { recursive: true, force: true });
    },
  };
}
