// An out-of-process agent: any program, in any language, run once per episode with the episode's
// endpoints, call key and task in its environment and its result key on a pipe. It reports its
// result by POST; maso kills its process group at the episode's deadline. Process handling only.

import { spawn } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import { MasoError } from "../errors.js";
import type { AgentContext, AgentFn, AgentResult } from "./agent-module.js";

export interface CommandAgentOptions {
  cwd?: string;
  /** Extra environment (the agent also inherits maso's own). */
  env?: Readonly<Record<string, string>>;
}

/**
 * An AgentFn that runs `command args…` for each episode. The program sees OPENAI_BASE_URL,
 * OPENAI_API_KEY, ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY, MASO_TASK (the task as JSON), MASO_EPISODE,
 * MASO_REWARD_URL and MASO_END_URL in its environment, and reads its result key as one line from
 * file descriptor MASO_RESULT_KEY_FD (3). It POSTs `{ "reward": … }` (an AgentResult) to
 * MASO_REWARD_URL with `Authorization: Bearer <result key>` and ends by exiting or by POSTing to
 * MASO_END_URL. The key travels on a pipe, not in the environment, so the processes the agent starts
 * (tools running model-written code, say) cannot read it and forge the episode's reward. An exit
 * without a posted result fails the episode, naming the exit code and the end of the program's stderr.
 * @example export const agent = commandAgent("python3", ["agent.py"]);
 */
export function commandAgent<T>(command: string, args: readonly string[] = [], opts: CommandAgentOptions = {}): AgentFn<T> {
  return (task: T, ctx: AgentContext) =>
    new Promise<AgentResult>((resolve, reject) => {
      const child = spawn(command, [...args], {
        cwd: opts.cwd,
        env: {
          ...process.env,
          ...opts.env,
          OPENAI_BASE_URL: ctx.baseURL,
          OPENAI_API_KEY: ctx.apiKey,
          ANTHROPIC_BASE_URL: ctx.baseURL.replace(/\/v1$/, ""),
          ANTHROPIC_API_KEY: ctx.apiKey,
          MASO_TASK: JSON.stringify(task),
          MASO_EPISODE: ctx.episodeId,
          MASO_REWARD_URL: ctx.rewardURL,
          MASO_END_URL: ctx.endURL,
          MASO_RESULT_KEY_FD: "3",
        },
        stdio: ["ignore", "ignore", "pipe", "pipe"],
        detached: true, // its own process group: the deadline kills whatever it started
      });
      // the key is read once; a descendant that inherits the descriptor finds it drained
      const keyPipe = child.stdio[3] as Writable | null;
      keyPipe?.on("error", () => {}); // a program that never reads it may close it first
      keyPipe?.end(`${ctx.resultKey}\n`);
      let stderr = "";
      const errStream = child.stdio[2] as Readable;
      errStream.setEncoding("utf8");
      errStream.on("data", (d: string) => {
        stderr = (stderr + d).slice(-2000);
      });
      let settled = false;
      const killGroup = () => {
        try {
          if (child.pid) process.kill(-child.pid, "SIGKILL");
        } catch {
          // already gone
        }
      };
      const settle = (how: () => void) => {
        if (settled) return;
        settled = true;
        ctx.signal.removeEventListener("abort", onAbort);
        how();
      };
      const onAbort = () =>
        settle(() => {
          killGroup();
          reject(new MasoError("AGENT_TIMEOUT", `agent process ${command} was still running at the episode's deadline`));
        });
      ctx.signal.addEventListener("abort", onAbort, { once: true });
      const finish = (why: string) => {
        const r = ctx.reported();
        settle(() => {
          killGroup();
          if (r) resolve(r);
          else
            reject(
              new MasoError(
                "AGENT_NO_REWARD",
                `agent process ${command} ${why} without posting a result to MASO_REWARD_URL${stderr ? `; stderr: ${stderr.trim().split("\n").slice(-3).join(" | ")}` : ""}`,
                'POST {"reward": <number>} to MASO_REWARD_URL before exiting',
              ),
            );
        });
      };
      void ctx.ended.then(() => finish("ended"));
      child.on("error", (err) =>
        settle(() => reject(new MasoError("AGENT_SPAWN", `cannot start agent process ${command}: ${err.message}`))),
      );
      child.on("close", (code, signal) => finish(`exited (${signal ?? `code ${code}`})`));
    });
}
