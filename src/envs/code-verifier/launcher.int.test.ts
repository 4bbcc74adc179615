import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { launchSandbox, type PhaseLimits, type PhaseStop, type SandboxEvents } from "./launcher.js";

interface Outcome {
  pid?: number;
  channel: string;
  stdoutBytes: number;
  stderr: string;
  limit?: PhaseStop;
  closed?: { code: number | null; signal: string | null };
  failed?: string;
}

/** Runs `argv` through the launcher; `onSpawn` sees the pid while the child is alive. */
function launch(argv: string[], stdin: string, onSpawn?: (pid: number, kill: () => void) => void, phases?: PhaseLimits): Promise<Outcome> {
  return new Promise((resolve) => {
    const out: Outcome = { channel: "", stdoutBytes: 0, stderr: "" };
    const events: SandboxEvents = {
      spawned: (pid) => {
        out.pid = pid;
        onSpawn?.(pid, () => handle.kill());
      },
      limit: (stop) => void (out.limit = stop),
      channel: (t) => void (out.channel += t),
      stdout: (n) => void (out.stdoutBytes += n),
      stderr: (t) => void (out.stderr += t),
      closed: (code, signal) => resolve({ ...out, closed: { code, signal } }),
      failed: (message) => resolve({ ...out, failed: message }),
    };
    const handle = launchSandbox(argv, tmpdir(), stdin, events, phases);
  });
}

/** The fields of /proc/<pid>/stat after the command name: state, parent pid, ... */
const statOf = (pid: number) => readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
const parentOf = (pid: number) => Number(statOf(pid)[1]);
/** Running or sleeping; a killed orphan can stay a zombie until init reaps it. */
const alive = (pid: number) => {
  try {
    return statOf(pid)[0] !== "Z";
  } catch {
    return false;
  }
};

describe.runIf(process.platform === "linux")("sandbox launcher", () => {
  it("relays stdin, the verdict channel, stdout and stderr, and the child is not the trainer's", async () => {
    let parent = 0;
    const r = await launch(["/bin/sh", "-c", "cat; echo err >&2; echo verdict >&3; sleep 0.2"], "hello", (pid) => {
      parent = parentOf(pid);
    });
    expect(r.closed).toEqual({ code: 0, signal: null });
    expect(r.channel).toBe("verdict\n");
    expect(r.stdoutBytes).toBe(5);
    expect(r.stderr).toBe("err\n");
    expect(parent).toBeGreaterThan(0);
    expect(parent).not.toBe(process.pid);
  });

  it("kills the child's whole process group", async () => {
    let grandchild = 0;
    const r = await launch(["/bin/sh", "-c", "sleep 30 & echo $! >&3; wait"], "", (_pid, kill) => setTimeout(kill, 300));
    grandchild = Number(r.channel.trim());
    expect(r.closed?.signal).toBe("SIGKILL");
    expect(grandchild).toBeGreaterThan(0);
    await new Promise((res) => setTimeout(res, 100));
    expect(alive(grandchild)).toBe(false);
  });

  it("fails the runs in flight when the launcher dies, kills their children, and starts a new launcher", async () => {
    let child = 0;
    const r = await launch(["/bin/sleep", "30"], "", (pid) => {
      child = pid;
      process.kill(parentOf(pid), "SIGKILL");
    });
    expect(r.failed).toMatch(/sandbox launcher exited/);
    await new Promise((res) => setTimeout(res, 100));
    expect(alive(child)).toBe(false);
    const again = await launch(["/bin/sh", "-c", "echo ok >&3"], "");
    expect(again.closed?.code).toBe(0);
    expect(again.channel).toBe("ok\n");
  });

  it("answers each phase's handshake and stops the phase that goes over its CPU time or wall clock", async () => {
    // a child speaking the handshake: phases 0 and 1 are quick, phase 2 does what argv[1] says
    const child = (last: string) => [
      process.execPath,
      "-e",
      `const fs = require("fs"); const b = Buffer.alloc(1);
       const begin = (p) => { const u = process.cpuUsage(); fs.writeSync(4, p + " " + (u.user + u.system) + "\\n"); fs.readSync(4, b, 0, 1, null); fs.writeSync(3, "phase " + p + "\\n"); };
       begin(0); begin(1); begin(2); ${last}`,
    ];
    const limits = { cpuMs: 200, wallMs: 1500 };
    const quick = await launch(child(""), "", undefined, limits);
    expect(quick.closed).toEqual({ code: 0, signal: null });
    expect(quick.channel).toBe("phase 0\nphase 1\nphase 2\n");
    expect(quick.limit).toBeUndefined();
    const t0 = Date.now();
    const spin = await launch(child("for (;;) {}"), "", undefined, limits);
    expect(spin.limit).toMatchObject({ kind: "cpu", phase: 2 });
    expect(spin.limit?.cpuMs).toBeGreaterThanOrEqual(200);
    expect(spin.closed?.signal).toBe("SIGKILL");
    const asleep = await launch(child("Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);"), "", undefined, limits);
    expect(asleep.limit).toMatchObject({ kind: "wall", phase: 2 });
    expect(asleep.limit?.cpuMs).toBeLessThan(200);
    expect(Date.now() - t0).toBeLessThan(6000);
  });

  it("reports a program that cannot be started", async () => {
    const r = await launch(["/nonexistent/program"], "");
    expect(r.failed).toMatch(/ENOENT/);
  });
});
