// Starts sandbox children from a small long-lived launcher process instead of from the trainer.
// Spawning forks the caller first, and forking a process that holds gigabytes of weights copies
// its page tables: ~110 ms of blocked event loop and ~60 ms of kernel time per child at 3 GB. The
// launcher stays at a few tens of MB, so its forks cost a few ms. It only spawns and relays; all
// limits, grading and the verdict channel's checks stay in the trainer (run-submission.ts).

import { type ChildProcess, spawn } from "node:child_process";

/** What the trainer hears about one sandbox child, in this order: spawn, then output, then close. */
export interface SandboxEvents {
  spawned(pid: number): void;
  /** Text from the verdict channel (fd 3), decoded as UTF-8 across chunk boundaries. */
  channel(text: string): void;
  /** Bytes the child wrote to stdout (never read: nothing on stdout is trusted). */
  stdout(bytes: number): void;
  /** Text from stderr, at most the first {@link STDERR_CHARS} characters. */
  stderr(text: string): void;
  closed(code: number | null, signal: string | null): void;
  failed(message: string): void;
}

export interface SandboxHandle {
  /** SIGKILLs the child's process group (now if its pid is known, and again from the launcher). */
  kill(): void;
}

export const STDERR_CHARS = 8192;

/**
 * The launcher: plain CommonJS for `node -e`. Messages in: `{ op: "spawn", id, file, args, cwd,
 * stdin }`, `{ op: "kill", id }`. Messages out: `{ id, ev: "spawn" | "channel" | "stdout" |
 * "stderr" | "close" | "error", ... }`. It kills every child it started when the trainer goes away.
 */
const LAUNCHER_SOURCE = `
"use strict";
const { spawn } = require("node:child_process");
const kids = new Map();
const post = (m) => { if (process.connected) process.send(m); };
const killGroup = (c) => { try { process.kill(-c.pid, "SIGKILL"); } catch { try { c.kill("SIGKILL"); } catch {} } };
process.on("message", (m) => {
  if (m.op === "kill") { const c = kids.get(m.id); if (c && c.pid) killGroup(c); return; }
  if (m.op !== "spawn") return;
  let child;
  try {
    child = spawn(m.file, m.args, { env: {}, cwd: m.cwd, stdio: ["pipe", "pipe", "pipe", "pipe"], detached: true, windowsHide: true });
  } catch (e) { post({ id: m.id, ev: "error", message: String((e && e.message) || e) }); return; }
  kids.set(m.id, child);
  child.on("spawn", () => post({ id: m.id, ev: "spawn", pid: child.pid }));
  child.stdio[3].setEncoding("utf8");
  child.stdio[3].on("data", (text) => post({ id: m.id, ev: "channel", text }));
  child.stdout.on("data", (b) => post({ id: m.id, ev: "stdout", bytes: b.length }));
  let stderrChars = 0;
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (text) => {
    if (stderrChars >= ${STDERR_CHARS}) return;
    stderrChars += text.length;
    post({ id: m.id, ev: "stderr", text });
  });
  child.stdin.on("error", () => {});
  child.on("error", (e) => { kids.delete(m.id); post({ id: m.id, ev: "error", message: e.message }); });
  child.on("close", (code, signal) => { kids.delete(m.id); post({ id: m.id, ev: "close", code, signal }); });
  child.stdin.end(m.stdin);
});
process.on("disconnect", () => { for (const c of kids.values()) killGroup(c); process.exit(0); });
`;

type LauncherMessage =
  | { id: number; ev: "spawn"; pid: number }
  | { id: number; ev: "channel" | "stderr"; text: string }
  | { id: number; ev: "stdout"; bytes: number }
  | { id: number; ev: "close"; code: number | null; signal: string | null }
  | { id: number; ev: "error"; message: string };

let launcher: ChildProcess | null = null;
const running = new Map<number, { events: SandboxEvents; pid?: number }>();
let nextId = 1;

/** The launcher is held open only while a child runs, so an idle one never keeps the trainer alive. */
function hold(on: boolean): void {
  if (!launcher) return;
  const channel = launcher.channel as { ref(): void; unref(): void } | undefined;
  if (on) {
    launcher.ref();
    channel?.ref();
  } else {
    launcher.unref();
    channel?.unref();
  }
}

function deliver(m: LauncherMessage): void {
  const run = running.get(m.id);
  if (!run) return;
  const { events } = run;
  switch (m.ev) {
    case "spawn":
      run.pid = m.pid;
      events.spawned(m.pid);
      break;
    case "channel":
      events.channel(m.text);
      break;
    case "stdout":
      events.stdout(m.bytes);
      break;
    case "stderr":
      events.stderr(m.text);
      break;
    case "close":
      end(m.id);
      events.closed(m.code, m.signal);
      break;
    case "error":
      end(m.id);
      events.failed(m.message);
      break;
  }
}

function end(id: number): void {
  running.delete(id);
  if (running.size === 0) hold(false);
}

function killGroup(pid: number | undefined): void {
  try {
    if (pid) process.kill(-pid, "SIGKILL");
  } catch {
    // the group is already gone
  }
}

/** Every child in flight is killed and fails when the launcher goes; the next request starts a new one. */
function lost(proc: ChildProcess, why: string): void {
  if (launcher !== proc) return;
  launcher = null;
  const orphans = [...running.values()];
  running.clear();
  for (const { events, pid } of orphans) {
    killGroup(pid);
    events.failed(`the sandbox launcher ${why}`);
  }
}

function start(): ChildProcess {
  const proc = spawn(process.execPath, ["-e", LAUNCHER_SOURCE], { env: {}, stdio: ["ignore", "ignore", "inherit", "ipc"] });
  proc.on("message", (m) => deliver(m as LauncherMessage));
  proc.on("error", (err) => lost(proc, `could not start: ${err.message}`));
  proc.on("exit", (code, signal) => lost(proc, `exited (${signal ?? `exit ${code}`})`));
  return proc;
}

/**
 * Spawns `argv` (cwd `cwd`, empty environment, its own process group, `stdin` written then closed)
 * through the launcher and reports what happens to `events`. Every run ends in exactly one of
 * `closed` or `failed`.
 */
export function launchSandbox(argv: readonly string[], cwd: string, stdin: string, events: SandboxEvents): SandboxHandle {
  launcher ??= start();
  const proc = launcher;
  const id = nextId++;
  const run: { events: SandboxEvents; pid?: number } = { events };
  running.set(id, run);
  hold(true);
  proc.send({ op: "spawn", id, file: argv[0], args: argv.slice(1), cwd, stdin }, (err) => {
    if (err && running.has(id)) {
      end(id);
      events.failed(`the sandbox launcher did not take the request: ${err.message}`);
    }
  });
  return {
    kill() {
      killGroup(run.pid);
      if (proc.connected && running.has(id)) proc.send({ op: "kill", id }, () => {});
    },
  };
}
