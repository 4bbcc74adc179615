import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { launchSandbox, type SandboxEvents } from "./launcher.js";

interface Outcome {
  pid?: number;
  channel: string;
  stdoutBytes: number;
  stderr: string;
  closed?: { code: number | null; signal: string | null };
  failed?: string;
}

/** Runs `argv` through the launcher; `onSpawn` sees the pid while the child is alive. */
function launch(argv: string[], stdin: string, onSpawn?: (pid: number, kill: () => void) => void): Promise<Outcome> {
  return new Promise((resolve) => {
    const out: Outcome = { channel: "", stdoutBytes: 0, stderr: "" };
    const events: SandboxEvents = {
      spawned: (pid) => {
        out.pid = pid;
        onSpawn?.(pid, () => handle.kill());
      },
      channel: (t) => void (out.channel += t),
      stdout: (n) => void (out.stdoutBytes += n),
      stderr: (t) => void (out.stderr += t),
      closed: (code, signal) => resolve({ ...out, closed: { code, signal } }),
      failed: (message) => resolve({ ...out, failed: message }),
    };
    const handle = launchSandbox(argv, tmpdir(), stdin, events);
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

  it("reports a program that cannot be started", async () => {
    const r = await launch(["/nonexistent/program"], "");
    expect(r.failed).toMatch(/ENOENT/);
  });
});
