// Codex CLI (npm @openai/codex, a Rust binary that speaks only the Responses API) run offline against
// the gateway as a custom model provider: `codex exec` in a temporary CODEX_HOME (fixtures/codex/),
// the scripted model calling Codex's freeform `apply_patch` tool (a `custom` tool), then its
// `exec_command` function tool, then answering in text. Skipped where Codex is not installed
// (`npm install --no-save @openai/codex`): the package is not a devDependency.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayServer, serveGateway } from "../../src/gateway/serve.js";
import { scriptedBackend, toolCallText } from "./scripted-backend.js";

const CODEX = fileURLToPath(new URL("../../node_modules/.bin/codex", import.meta.url));
const FIXTURES = fileURLToPath(new URL("./fixtures/codex/", import.meta.url));
const HAS_CODEX = existsSync(CODEX);
if (!HAS_CODEX) console.warn(`codex-cli.int.test.ts: skipped, ${CODEX} is absent (npm install --no-save @openai/codex)`);

const PATCH = "*** Begin Patch\n*** Add File: hello.txt\n+hello from maso\n*** End Patch\n";
const FINAL = "Done: hello.txt says hello from maso.";

const backend = scriptedBackend(["coder"], (call, earlier) => {
  const names = (call.tools ?? []).map((t) => t.function.name);
  const step = earlier.length;
  if (step === 0)
    return names.includes("apply_patch") ? `Adding the file.\n${toolCallText("apply_patch", { input: PATCH })}` : "no apply_patch";
  if (step === 1) return names.includes("exec_command") ? toolCallText("exec_command", { cmd: "cat hello.txt" }) : "no exec_command";
  return FINAL;
});

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `codex exec` in its own process group; kills the group after `timeoutMs`. */
function codexExec(args: string[], env: NodeJS.ProcessEnv, cwd: string, timeoutMs: number): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(CODEX, ["exec", ...args], { cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    const killGroup = () => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      stderr += `\n[test] codex exec ran past ${timeoutMs} ms: killed its process group`;
      killGroup();
    }, timeoutMs);
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      killGroup(); // helpers it left behind (a PTY session of exec_command)
      resolve({ code, signal, stdout, stderr });
    });
  });
}

let g: GatewayServer;
let dir: string;

beforeAll(async () => {
  if (!HAS_CODEX) return;
  g = await serveGateway(backend);
  dir = mkdtempSync(join(tmpdir(), "maso-codex-"));
});
afterAll(async () => {
  await g?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("Codex CLI against the gateway", () => {
  it.skipIf(!HAS_CODEX)(
    "runs codex exec offline: an apply_patch (custom) call, an exec_command (function) call, then an answer",
    async () => {
      const key = backend.open("codex");
      const home = join(dir, "codex-home");
      const work = join(dir, "work");
      mkdirSync(home);
      mkdirSync(work);
      const config = readFileSync(join(FIXTURES, "config.toml"), "utf8")
        .replaceAll("{{BASE_URL}}", g.baseUrlOf("codex"))
        .replaceAll("{{CATALOG}}", join(FIXTURES, "model-catalog.json"));
      writeFileSync(join(home, "config.toml"), config);
      // only what a shell needs: no OPENAI_* or CODEX_* of the caller's, and a HOME of its own
      const env: NodeJS.ProcessEnv = {
        PATH: process.env.PATH,
        LANG: "C.UTF-8",
        HOME: dir,
        CODEX_HOME: home,
        MASO_API_KEY: key,
      };
      const r = await codexExec(
        ["--skip-git-repo-check", "--ephemeral", "--sandbox", "danger-full-access", "--color", "never", "Create hello.txt"],
        env,
        work,
        90_000,
      );
      const why = `codex exit ${r.code} ${r.signal ?? ""}\n--- stderr ---\n${r.stderr.slice(-4000)}\n--- stdout ---\n${r.stdout.slice(-2000)}`;
      expect(r.code, why).toBe(0);
      expect(r.stdout.trim(), why).toBe(FINAL);

      const recs = backend.episodes.get("codex")!;
      expect(recs.length, why).toBeGreaterThanOrEqual(3);
      // what Codex offered: its freeform apply_patch as a custom tool, exec_command as a function tool
      const tools = recs[0].call.tools ?? [];
      expect(tools.find((t) => t.function.name === "apply_patch")).toMatchObject({ custom: true });
      expect(tools.find((t) => t.function.name === "exec_command")?.custom).toBeUndefined();
      expect(recs[0].call).toMatchObject({ api: "responses", role: "coder" });

      // the 2nd call replays the custom_tool_call and carries its custom_tool_call_output
      const patchCall = recs[0].reply.toolCalls[0];
      expect(patchCall).toMatchObject({ name: "apply_patch" });
      const second = recs[1].call.messages;
      expect(second.find((m) => m.role === "assistant")?.toolCalls?.[0]).toMatchObject({ id: patchCall.id, custom: true });
      const patchOut = second.find((m) => m.role === "tool" && m.toolCallId === patchCall.id);
      expect(patchOut?.content, why).toMatch(/Success\. Updated the following files:\s+A hello\.txt/);
      expect(readFileSync(join(work, "hello.txt"), "utf8")).toBe("hello from maso\n");

      // the 3rd call carries the exec_command's function_call_output
      const execCall = recs[1].reply.toolCalls[0];
      expect(execCall).toMatchObject({ name: "exec_command" });
      expect(JSON.parse(execCall.arguments)).toEqual({ cmd: "cat hello.txt" });
      const execOut = recs[2].call.messages.find((m) => m.role === "tool" && m.toolCallId === execCall.id);
      expect(execOut?.content, why).toContain("hello from maso");
      expect(recs[2].completion.text).toBe(FINAL);
    },
    120_000,
  );
});
