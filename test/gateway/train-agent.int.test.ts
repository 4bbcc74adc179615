// `maso train` and `maso eval` on an agent module (plain `openai` SDK code, two roles, a replayed
// history): the calls become records with samples, the agent's rewards reach training, the third
// call's prompt reuses the first call's sampled ids, a client that edits history is counted, and an
// agent that hangs is a recorded EPISODE_TIMEOUT while the run goes on.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { freshRunDir, jsonl } from "../cli/run-files.js";
import OpenAI from "openai";
import { cliInProcess, startCli } from "../cli/cli-harness.js";

const AGENT = "test/gateway/fixtures/two-role-agent.ts";
const fresh = () => freshRunDir("maso-agent-");
type Rec = {
  kind: string;
  role: string | null;
  node: string;
  visit: number;
  sampleHandle: unknown;
  output: { responseId?: string; retokenized?: boolean };
};

afterEach(() => {
  delete process.env.MASO_TEST_EDIT;
  delete process.env.MASO_TEST_HANG;
  delete process.env.MASO_TEST_LONG;
});

/** The metrics rows of the steps (the step-0 row is the untrained cast's dev evaluation). */
const stepRows = (runDir: string) => jsonl(join(runDir, "metrics.jsonl")).filter((r: { step: number }) => r.step > 0);

describe("maso train <agent module>", () => {
  it("trains the agent's roles on its own rewards, with every call a record", async () => {
    const runDir = fresh();
    const r = await cliInProcess("train", AGENT, "--run-dir", runDir);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain("roles writer, judge");
    const rows = stepRows(runDir);
    expect(rows).toHaveLength(2);
    expect(rows[1].roles.writer.samples).toBe(8);
    expect(rows[1].roles.judge.reward.total).toBe(0.5);
    expect(rows[1].episodes.metrics.retokenizedTurns).toBe(0);
    const [traj] = jsonl(join(runDir, "trajectories", "step-000001.jsonl"));
    const records = traj.records as Rec[];
    expect(records.map((x) => [x.kind, x.role, x.visit])).toEqual([
      ["role", "writer", 0],
      ["role", "judge", 1],
      ["role", "writer", 2],
      ["agent", null, 3],
    ]);
    expect(records.slice(0, 3).every((x) => x.sampleHandle !== null && x.output.retokenized === false)).toBe(true);
    expect(records[0].output.responseId).toBe(`chatcmpl-${traj.episodeId}-0`);
    const rewards = jsonl(join(runDir, "rewards", "step-000001.jsonl"));
    const judge = rewards
      .flatMap((e: { rewards: { role: string; value: number }[] }) => e.rewards)
      .filter((x: { role: string }) => x.role === "judge");
    expect(judge.map((x: { value: number }) => x.value)).toEqual([0.5, 0.5, 0.5, 0.5]);
  });

  it("counts a call whose history the client edited as retokenized", async () => {
    process.env.MASO_TEST_EDIT = "1";
    const runDir = fresh();
    const r = await cliInProcess("train", AGENT, "--run-dir", runDir, "--steps", "1");
    expect(r.code, r.err).toBe(0);
    const [row] = stepRows(runDir);
    expect(row.episodes.metrics.retokenizedTurns).toBe(1);
    const [traj] = jsonl(join(runDir, "trajectories", "step-000001.jsonl"));
    expect((traj.records as Rec[])[2].output.retokenized).toBe(true);
  });

  it("records an agent that never returns as EPISODE_TIMEOUT and goes on", async () => {
    process.env.MASO_TEST_HANG = "1";
    const runDir = fresh();
    const cfg = join(runDir, "..", "cfg.json");
    const { config } = await import("./fixtures/two-role-agent.js");
    const { writeFileSync } = await import("node:fs");
    writeFileSync(cfg, JSON.stringify({ ...config, schedule: { ...config.schedule, steps: 3, tasksPerStep: 2, episodeTimeoutMs: 3000 } }));
    const r = await cliInProcess("train", AGENT, "--config", cfg, "--run-dir", runDir);
    expect(r.code, r.err).toBe(0);
    const rows = stepRows(runDir);
    expect(rows).toHaveLength(3);
    const failed = rows.reduce((a: number, x: { episodes: { failed: number } }) => a + x.episodes.failed, 0);
    expect(failed).toBe(2); // one task of six hangs; it is drawn once in three steps of two tasks
    expect(rows.some((x: { episodes: { failures?: Record<string, number> } }) => x.episodes.failures?.EPISODE_TIMEOUT === 2)).toBe(true);
    expect(readdirSync(join(runDir, "trajectories"))).toHaveLength(3);
  });

  it("answers a prompt longer than the context with a 400 the agent can handle, and loses nothing", async () => {
    process.env.MASO_TEST_LONG = "1";
    const runDir = fresh();
    const r = await cliInProcess("train", AGENT, "--run-dir", runDir, "--steps", "2");
    expect(r.code, r.err).toBe(0);
    const rows = stepRows(runDir);
    expect(
      rows.map((x: { episodes: { failed: number } }) => x.episodes.failed),
      r.out,
    ).toEqual([0, 0]);
    // the refused call made no sample: every episode still has exactly its three calls
    for (const t of jsonl(join(runDir, "trajectories", "step-000001.jsonl")))
      expect((t.records as Rec[]).filter((x) => x.kind === "role")).toHaveLength(3);
  });

  it("fails an episode whose agent reports no reward at all, naming why", async () => {
    process.env.MASO_TEST_NO_REWARD = "1";
    const runDir = fresh();
    const r = await cliInProcess("train", AGENT, "--run-dir", runDir, "--steps", "1");
    delete process.env.MASO_TEST_NO_REWARD;
    expect(r.code).toBe(1);
    expect(r.err).toContain("STEP_FAILED");
    expect(r.err).toContain("the agent returned no reward, roleRewards or callRewards");
  });

  it.each([
    ["unknown-call", "callRewards names response ids this episode never returned"],
    ["unknown-role", "roleRewards names roles the agent does not declare: editor"],
    ["string-reward", "reward 1 (a finite number is needed)"],
    ["no-calls", "made no model call through the gateway"],
  ])("fails an episode whose result names what does not exist (%s)", async (kind, message) => {
    process.env.MASO_TEST_RESULT = kind;
    const r = await cliInProcess("train", AGENT, "--run-dir", fresh(), "--steps", "1");
    delete process.env.MASO_TEST_RESULT;
    expect(r.code).toBe(1);
    expect(r.err).toContain("STEP_FAILED");
    expect(r.err).toContain(message);
  });

  it("evaluates the untrained agent greedily on its test tasks", async () => {
    const r = await cliInProcess("eval", AGENT, "--json");
    expect(r.code, r.err).toBe(0);
    const out = JSON.parse(r.out.trim().split("\n").at(-1)!);
    expect(out.episodes).toBe(2);
    expect(out.metric).toBeGreaterThanOrEqual(0);
  });

  it("serves the trained cast with maso serve, greedy by default", async () => {
    const runDir = fresh();
    expect((await cliInProcess("train", AGENT, "--run-dir", runDir, "--steps", "1")).code).toBe(0);
    const serve = startCli(["serve", runDir, "--port", "0", "--api-key", "sk-serve", "--checkpoint", "latest"]);
    try {
      await serve.waitFor((out) => /serving .* at (http\S+)/.test(out));
      const url = /at (http\S+)/.exec(serve.stdout())![1];
      expect(serve.stdout()).toContain("checkpoint, step 1");
      const client = new OpenAI({ baseURL: url, apiKey: "sk-serve", maxRetries: 0 });
      await expect(new OpenAI({ baseURL: url, apiKey: "any", maxRetries: 0 }).models.list()).rejects.toMatchObject({ status: 401 });
      expect((await client.models.list()).data.map((m) => m.id)).toEqual(["writer", "judge"]);
      const ask = () =>
        client.chat.completions.create({ model: "writer", messages: [{ role: "user", content: "Write about the sea." }], max_tokens: 6 });
      const [a, b] = [await ask(), await ask()];
      expect(a.choices[0].message.content).toBe(b.choices[0].message.content);
      expect(a.usage?.completion_tokens).toBeGreaterThan(0);
      // a request's seed makes a sampled answer repeatable, and another seed samples another
      const sampled = async (seed: number) =>
        (
          await client.chat.completions.create({
            model: "writer",
            messages: [{ role: "user", content: "Write about the sea." }],
            max_tokens: 6,
            temperature: 1,
            seed,
          })
        ).choices[0].message.content;
      expect(await sampled(7)).toBe(await sampled(7));
      expect(await sampled(7)).not.toBe(await sampled(8));
      // top log-probs from the sampler's own logits: greedy, so the chosen token is the most likely
      const lp = await client.chat.completions.create({
        model: "writer",
        messages: [{ role: "user", content: "Write about the sea." }],
        max_tokens: 6,
        logprobs: true,
        top_logprobs: 3,
      });
      const content = lp.choices[0].logprobs!.content!;
      expect(content.length).toBeGreaterThan(0);
      for (const t of content) {
        expect(t.top_logprobs).toHaveLength(3);
        const top = t.top_logprobs.map((x) => x.logprob);
        expect(top).toEqual([...top].sort((x, y) => y - x));
        expect(t.logprob).toBe(top[0]);
        expect(t.top_logprobs[0].bytes).toEqual([...Buffer.from(t.top_logprobs[0].token, "utf8")]);
      }
    } finally {
      serve.child.kill("SIGINT");
    }
    expect((await serve.done).code).toBe(0);
  }, 60_000);
});
