// Starts sandbox children from a small long-lived launcher process instead of the trainer, and holds
// each child's phases to their CPU budget. Forking a trainer that holds gigabytes of weights costs
// ~110 ms of blocked event loop and ~60 ms of kernel time per child at 3 GB; the launcher's forks cost
// a few ms, and its idle event loop answers the child's phase handshakes at once. It relays the
// verdict channel unparsed: grading and the channel's checks stay in the trainer (run-submission.ts).

import { type ChildProcess, spawn } from "node:child_process";

/** What the trainer hears about one sandbox child, in this order: spawn, then output, then close. */
export interface SandboxEvents {
  spawned(pid: number): void;
  /** The launcher stopped the child (SIGKILL follows) because `phase` went over a limit. */
  limit?(stop: PhaseStop): void;
  /** Text from the verdict channel (fd 3), decoded as UTF-8 across chunk boundaries. */
  channel(text: string): void;
  /** Bytes the child wrote to stdout (never read: nothing on stdout is trusted). */
  stdout(bytes: number): void;
  /** Text from stderr, at most the first {@link STDERR_CHARS} characters. */
  stderr(text: string): void;
  closed(code: number | null, signal: string | null): void;
  failed(message: string): void;
}

/**
 * Per-phase limits the launcher enforces on a child that speaks the phase handshake on fd 4: before
 * each phase the child writes `"<phase> <its CPU time in µs>\n"` and blocks until the launcher
 * answers one byte. The child cannot move on without that byte, so the CPU time measured from then
 * on belongs to that phase and no other, however late anyone else hears of it.
 */
export interface PhaseLimits {
  /** CPU time of the child process per phase, from /proc (Linux; elsewhere wall time stands in). */
  cpuMs: number;
  /** Wall-clock backstop per phase (a phase asleep in Atomics.wait uses no CPU). */
  wallMs: number;
}

/** Why a phase was stopped, with what it had used (for messages only; verdicts never depend on it). */
export interface PhaseStop {
  kind: "cpu" | "wall";
  phase: number;
  cpuMs: number;
  wallMs: number;
}

export interface SandboxHandle {
  /** SIGKILLs the child's process group (now if its pid is known, and again from the launcher). */
  kill(): void;
}

export const STDERR_CHARS = 8192;

/**
 * The launcher: plain CommonJS for `node -e`. Messages in: `{ op: "spawn", id, file, args, cwd,
 * stdin, phases? }`, `{ op: "kill", id }`. Messages out: `{ id, ev: "spawn" | "channel" | "stdout" |
 * "stderr" | "limit" | "close" | "error", ... }`. It kills every child it started when the trainer
 * goes away. With `phases`, it answers the child's handshakes on fd 4 and, every 10 ms, reads the
 * child's CPU time (utime + stime of the node process, the leaf of the prlimit/unshare chain) from
 * /proc: a phase past its budget by one clock tick, or past its wall backstop, is reported and killed.
 */
const LAUNCHER_SOURCE = `
"use strict";
const { spawn } = require("node:child_process");
const { readFileSync } = require("node:fs");
const kids = new Map();
const post = (m) => { if (process.connected) process.send(m); };
const killGroup = (c) => { try { process.kill(-c.pid, "SIGKILL"); } catch { try { c.kill("SIGKILL"); } catch {} } };
// /proc/<pid>/stat counts CPU in clock ticks (USER_HZ, 100 on Linux), truncated, so its reading
// never runs ahead of the child's own (getrusage, the same kernel counter); one tick of slack more
const TICK_US = 10000;
const children = (pid) => readFileSync("/proc/" + pid + "/task/" + pid + "/children", "utf8").trim().split(/\\s+/).filter(Boolean);
function leafOf(pid) {
  for (let p = String(pid), d = 0; d < 8; d++) {
    const c = children(p);
    if (c.length !== 1) return c.length === 0 ? Number(p) : 0;
    p = c[0];
  }
  return 0;
}
function cpuUs(k) {
  try {
    k.leaf ||= leafOf(k.child.pid);
    const f = readFileSync("/proc/" + k.leaf + "/stat", "utf8").split(") ")[1].split(" ");
    return (Number(f[11]) + Number(f[12])) * TICK_US;
  } catch { return null; }
}
let watchdog = null;
function watch() {
  let active = 0;
  for (const [id, k] of kids) {
    if (!k.phase || k.stopped) continue;
    active++;
    const wall = Date.now() - k.phase.wall;
    const now = cpuUs(k);
    const used = now === null ? wall * 1000 : now - k.phase.cpu;
    const kind = used >= k.limits.cpuMs * 1000 + TICK_US ? "cpu" : wall >= k.limits.wallMs ? "wall" : null;
    if (!kind) continue;
    // after this turn's I/O: a handshake the child has already sent means the phase is over
    const phase = k.phase;
    setImmediate(() => {
      if (k.stopped || k.phase !== phase) return;
      k.stopped = true;
      post({ id, ev: "limit", kind, phase: phase.p, cpuMs: Math.max(0, Math.round(used / 1000)), wallMs: wall });
      killGroup(k.child);
    });
  }
  if (active === 0) { clearInterval(watchdog); watchdog = null; }
}
function phases(k) {
  const ctl = k.child.stdio[4];
  let buf = "";
  ctl.setEncoding("latin1");
  ctl.on("error", () => {});
  ctl.on("data", (text) => {
    buf += text;
    for (let nl = buf.indexOf("\\n"); nl >= 0; nl = buf.indexOf("\\n")) {
      const [p, cpu] = buf.slice(0, nl).split(" ").map(Number);
      buf = buf.slice(nl + 1);
      if (!Number.isInteger(p) || !Number.isFinite(cpu) || k.stopped) { killGroup(k.child); return; }
      k.phase = { p, cpu, wall: Date.now() };
      ctl.write("\\n");
      watchdog ??= setInterval(watch, 10);
    }
    if (buf.length > 256) killGroup(k.child);
  });
}
process.on("message", (m) => {
  if (m.op === "kill") { const k = kids.get(m.id); if (k && k.child.pid) killGroup(k.child); return; }
  if (m.op !== "spawn") return;
  let child;
  try {
    child = spawn(m.file, m.args, { env: {}, cwd: m.cwd, stdio: ["pipe", "pipe", "pipe", "pipe", "pipe"], detached: true, windowsHide: true });
  } catch (e) { post({ id: m.id, ev: "error", message: String((e && e.message) || e) }); return; }
  const k = { child, limits: m.phases, phase: null, stopped: false, leaf: 0 };
  kids.set(m.id, k);
  if (m.phases) phases(k);
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
process.on("disconnect", () => { for (const k of kids.values()) killGroup(k.child); process.exit(0); });
`;

type LauncherMessage =
  | { id: number; ev: "spawn"; pid: number }
  | { id: number; ev: "channel" | "stderr"; text: string }
  | { id: number; ev: "stdout"; bytes: number }
  | ({ id: number; ev: "limit" } & PhaseStop)
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
    case "limit":
      events.limit?.({ kind: m.kind, phase: m.phase, cpuMs: m.cpuMs, wallMs: m.wallMs });
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
 * through the launcher and reports what happens to `events`; with `phases`, the launcher holds the
 * child to them (see {@link PhaseLimits}). Every run ends in exactly one of `closed` or `failed`.
 */
export function launchSandbox(
  argv: readonly string[],
  cwd: string,
  stdin: string,
  events: SandboxEvents,
  phases?: PhaseLimits,
): SandboxHandle {
  launcher ??= start();
  const proc = launcher;
  const id = nextId++;
  const run: { events: SandboxEvents; pid?: number } = { events };
  running.set(id, run);
  hold(true);
  proc.send({ op: "spawn", id, file: argv[0], args: argv.slice(1), cwd, stdin, phases }, (err) => {
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
