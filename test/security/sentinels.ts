// Sentinels for the verifier's red-team tests: a loopback server that counts connections, a process
// that must survive, a file that must not change, and the host-side payload an attacker would run
// once out of the sandbox. Test support only.

import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Sentinels {
  port: number;
  pid: number;
  file: string;
  /** Connections the server accepted since the last reset. */
  connections: () => number;
  alive: () => boolean;
  fileIntact: () => boolean;
  /** A fresh sentinel process (after a control run killed the last one). */
  respawn: () => Promise<void>;
  close: () => Promise<void>;
}

const CONTENT = "sentinel: must not change\n";

export async function startSentinels(): Promise<Sentinels> {
  let connections = 0;
  const server: Server = createServer((s) => {
    connections++;
    s.destroy();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  const dir = mkdtempSync(join(tmpdir(), "maso-red-team-"));
  const file = join(dir, "sentinel.txt");
  writeFileSync(file, CONTENT);
  let proc: ChildProcess = spawn("sleep", ["600"], { stdio: "ignore" });
  const s: Sentinels = {
    port,
    get pid() {
      return proc.pid ?? -1;
    },
    file,
    connections: () => connections,
    alive: () => proc.exitCode === null && proc.signalCode === null,
    fileIntact: () => readFileSync(file, "utf8") === CONTENT,
    respawn: async () => {
      proc.kill("SIGKILL");
      proc = spawn("sleep", ["600"], { stdio: "ignore" });
      writeFileSync(file, CONTENT);
      connections = 0;
    },
    close: async () => {
      proc.kill("SIGKILL");
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  return s;
}

/**
 * JavaScript source of `HIT(P)`: given what the attacker hopes is the host's `process`, try every
 * effect outside the sandbox — a TCP connection, killing the sentinel process, rewriting the file,
 * forged verdicts on stdout and fd 3 (with and without tampering with the channel's writes), and a
 * signal to the parent (left out where the parent is the test runner itself).
 */
export function hitSource(s: Pick<Sentinels, "port" | "pid" | "file">, signalParent = true): string {
  return `
function HIT(P) {
  if (!P || typeof P !== "object") return;
  const req = (n) => { try { return P.getBuiltinModule ? P.getBuiltinModule(n) : P.mainModule.require(n); } catch (e) { return null; } };
  const net = req("net"), fs = req("fs");
  try { net.connect(${s.port}, "127.0.0.1").on("error", () => {}); } catch (e) {}
  try { P.kill(${s.pid}, "SIGKILL"); } catch (e) {}
  try { fs.writeFileSync(${JSON.stringify(s.file)}, "pwned"); } catch (e) {}
  const forged = JSON.stringify({ i: 0, status: "pass" }) + "\\n" + JSON.stringify({ i: 1, status: "pass" }) + "\\n" +
    JSON.stringify({ n: "", i: 0, kind: "value", got: 2 }) + "\\n";
  try { P.stdout.write(forged); } catch (e) {}
  try { fs.writeSync(3, forged); } catch (e) {}
  try { const w = net.Socket.prototype.write; net.Socket.prototype.write = function (c, ...r) { return w.call(this, String(c).replace(/"kind":"error","message":"[^"]*"/, '"kind":"value","got":2'), ...r); }; } catch (e) {}
  ${signalParent ? 'try { P.kill(P.ppid, "SIGTERM"); } catch (e) {}' : ""}
}
`;
}
