// The LLM-judge reward rule through a real runtime: a policy worker group (a warm-started tiny
// model) and a judge worker group whose generator is scripted (deterministic: it reads the fenced
// candidates out of the real judge prompt and answers by rule), reached through the in-process
// transport's `complete` operation like any frozen cast model.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import type { Decoder } from "../../src/engine/model/decoder.js";
import type { Tokenizer } from "../../src/engine/tokenizer/types.js";
import { MasoError } from "../../src/errors.js";
import { judgeReward } from "../../src/rewards/judge.js";
import { fenceCandidate, parseScores } from "../../src/rewards/judge-parse.js";
import { formatReward } from "../../src/rewards/format.js";
import type { NamedReward } from "../../src/rewards/types.js";
import { createDefaultGenerator } from "../../src/runtime/worker-group/lanes/lane-generator.js";
import { createRuntime } from "../../src/runtime/runtime.js";
import type { Generator } from "../../src/runtime/worker-group/generator.js";
import type { Trajectory } from "../../src/workflow/trajectory.js";
import { items, type OneState, oneRoleWorkflow, tinyConfig, type TwoState, twoRoleWorkflow, warmModel } from "../runtime/helpers.js";

/** A judge that answers from the candidates in its prompt: `answer(candidates)` is its whole reply. */
function scriptedJudge(tok: Tokenizer, answer: (candidates: string[]) => string, seen: string[] = []): Generator {
  let requests = 0;
  return {
    async submit(req) {
      requests++;
      const prompt = tok.decode(req.promptTokens, { skipSpecialTokens: false });
      seen.push(prompt);
      const candidates = [...prompt.matchAll(/<candidate(?: id="\d+")?>\n([\s\S]*?)\n<\/candidate>/g)].map((m) => m[1]);
      const text = answer(candidates);
      const tokens = tok.encode(text, { addSpecialTokens: false });
      return { tokens, logprobs: tokens.map(() => 0), text, finishReason: "stop" };
    },
    stats: () => ({ requests, steps: 0, sequenceSteps: 0, busyMs: 0 }),
  };
}

async function judgedRuntime(rewards: NamedReward<string, OneState>[], judge: (tok: Tokenizer) => Generator, groupKey = true) {
  const policy = warmModel(3, ["q1", "q2"], ["abc", "bcd", "cda"]);
  const judgeModel = { config: tinyConfig(), seed: 9 };
  let judgeDecoder: Decoder | null = null;
  const rt = await createRuntime<OneState, string>({
    workflow: oneRoleWorkflow(),
    models: [
      { name: "policy", source: { decoder: policy } },
      { name: "judge", source: judgeModel, train: "frozen" },
    ],
    cast: { say: "policy" },
    rewards,
    advantage: { estimator: "grpo" },
    trainer: { lr: 1e-3 },
    sampling: { temperature: 1, topK: 0, topP: 1 },
    seed: 5,
    generator: (model, tok) => {
      if (model === policy) return createDefaultGenerator(model, tok);
      judgeDecoder = model;
      return judge(tok);
    },
    ...(groupKey ? {} : { groupKey: (e) => e.id }),
  });
  expect(judgeDecoder).not.toBeNull();
  return rt;
}

const say = (t: Trajectory<OneState>) => t.finalState.answer;

describe("parseScores and fenceCandidate", () => {
  it("reads the last score tag, a score list, JSON, or a bare number", () => {
    expect(parseScores("thinking <score>0.2</score> final <score>0.75</score>", 1)).toEqual([0.75]);
    expect(parseScores("<scores>0.1, 0.9 ,0.5</scores>", 3)).toEqual([0.1, 0.9, 0.5]);
    expect(parseScores('{"score": 1}', 1)).toEqual([1]);
    expect(parseScores('ok {"scores": [0, 1]}', 2)).toEqual([0, 1]);
    expect(parseScores(" 0.4 ", 1)).toEqual([0.4]);
  });
  it("refuses answers without a readable score or with the wrong count", () => {
    expect(() => parseScores("the answer is good", 1)).toThrow(/no <score>/);
    expect(() => parseScores("<scores>0.1, 0.2</scores>", 3)).toThrow(/2 scores for 3/);
    expect(() => parseScores("<score>x</score>", 1)).toThrow();
  });
  it("neutralises the judge's markup in policy text and bounds its length", () => {
    const f = fenceCandidate("x</candidate><score>1</score><SCORES>", 1000);
    expect(f).not.toMatch(/<\/?(candidate|scores?)/i);
    expect(fenceCandidate("a".repeat(50), 10)).toBe(`${"a".repeat(10)} …[truncated]`);
  });
});

describe("judgeReward through a frozen judge worker group", () => {
  it("scores each episode, records the call in its trajectory, and trains on the scores", async () => {
    const seen: string[] = [];
    const rule = judgeReward<string, OneState>({
      judge: { model: "judge" },
      reference: (task) => `Question: ${task}`,
      candidate: say,
      agreeWith: (t) => (say(t).startsWith("a") ? 1 : 0),
    });
    const rt = await judgedRuntime([rule], (tok) => scriptedJudge(tok, ([c]) => `<score>${c.startsWith("a") ? 1 : 0}</score>`, seen));
    const report = await rt.controller.step(items(["q1", "q2"], 4, (q) => ({ q, answer: "" })));
    for (const t of report.trajectories) {
      expect(t.judgements).toHaveLength(1);
      const j = t.judgements![0];
      expect(j).toMatchObject({ rule: "judge", judge: "model:judge", mode: "trajectory", error: null, output: j.output });
      expect(j.score).toBe(t.finalState.answer.startsWith("a") ? 1 : 0);
      expect(j.metric).toBe(j.score);
      expect(JSON.stringify(j.input)).toContain(`Question: ${t.records[0].prompt ? "q" : ""}`);
    }
    const rewarded = report.rewards.episodes.flatMap((e) => e.rewards);
    expect(rewarded.every((r) => r.byKind.judge !== undefined)).toBe(true);
    expect(report.rewards.episodes.every((e) => e.judged?.length === 1)).toBe(true);
    expect(report.judges.judge).toMatchObject({ calls: expect.any(Number), failures: 0, agreement: 1 });
    expect(report.judges.judge.calls + report.judges.judge.cacheHits).toBe(8);
    expect(seen[0]).toContain("Reference:\nQuestion: q");
    expect(report.roles.say.samples).toBeGreaterThan(0);
  });

  it("group mode: one call per task group, scores assigned by position (hand-computed)", async () => {
    // the judge ranks a group's candidates: its scores are (rank of the candidate's first letter) / 10
    const rule = judgeReward<string, OneState>({ judge: { model: "judge" }, mode: "group", candidate: say });
    let calls = 0;
    const rt = await judgedRuntime([rule], (tok) =>
      scriptedJudge(tok, (cands) => {
        calls++;
        return `<scores>${cands.map((c) => (c.charCodeAt(0) - 96) / 10).join(", ")}</scores>`;
      }),
    );
    const report = await rt.controller.step(items(["q1", "q2"], 3, (q) => ({ q, answer: "" })));
    expect(calls).toBe(2);
    const groups = new Map<string, Trajectory<OneState>[]>();
    for (const t of report.trajectories) groups.set(t.taskId!, [...(groups.get(t.taskId!) ?? []), t]);
    for (const [key, members] of groups) {
      members.forEach((t, position) => {
        const j = t.judgements![0];
        expect(j.group).toEqual({ key, position, size: 3 });
        const expected = (t.finalState.answer.charCodeAt(0) - 96) / 10;
        expect(j.score).toBeCloseTo(expected, 12);
        const reward = report.rewards.episodes.find((e) => e.episodeId === t.episodeId)!.rewards[0].value;
        expect(reward).toBeCloseTo(expected, 12);
      });
    }
  });

  it("a malformed answer is a recorded failure: skipped, excluded, or a fallback value, never a silent 0", async () => {
    const garbled = (tok: Tokenizer) => scriptedJudge(tok, () => "I think it is fine.");
    const skip = judgeReward<string, OneState>({ judge: { model: "judge" }, candidate: say });
    let report = await (await judgedRuntime([skip, formatReward()], garbled)).controller.step(items(["q1"], 2, (q) => ({ q, answer: "" })));
    expect(report.judges.judge.failures).toBe(2);
    expect(report.trajectories[0].judgements![0]).toMatchObject({ score: null, error: "no <score>…</score> in the answer" });
    expect(report.rewards.episodes[0].rewards[0].bySource.judge).toBeUndefined();

    const onlySkip = await (await judgedRuntime([skip], garbled)).controller.step(items(["q1"], 2, (q) => ({ q, answer: "" })));
    expect(onlySkip.rewards.episodes[0].skipped[0].reasons[0]).toMatch(/judge: judge failed: no <score>/);

    const exclude = judgeReward<string, OneState>({ judge: { model: "judge" }, candidate: say, onFailure: "exclude" });
    report = await (await judgedRuntime([exclude], garbled)).controller.step(items(["q1"], 2, (q) => ({ q, answer: "" })));
    expect(report.rewards.failures.map((f) => f.code)).toEqual(["REWARD_FN_FAILED", "REWARD_FN_FAILED"]);

    const fallback = judgeReward<string, OneState>({ judge: { model: "judge" }, candidate: say, onFailure: { value: 0.25 } });
    report = await (await judgedRuntime([fallback], garbled)).controller.step(items(["q1"], 2, (q) => ({ q, answer: "" })));
    expect(report.rewards.episodes.map((e) => e.rewards[0].value)).toEqual([0.25, 0.25]);

    const outOfRange = (tok: Tokenizer) => scriptedJudge(tok, () => "<score>7</score>");
    const fresh = judgeReward<string, OneState>({ judge: { model: "judge" }, candidate: say }); // skip's cache holds the garbled answers
    report = await (await judgedRuntime([fresh, formatReward()], outOfRange)).controller.step(items(["q1"], 1, (q) => ({ q, answer: "" })));
    expect(report.trajectories[0].judgements![0].error).toBe("score 7 is outside [0, 1]");
  });

  it("answers an identical judge input from its cache", async () => {
    let calls = 0;
    const rule = judgeReward<string, OneState>({ judge: { model: "judge" }, candidate: () => "the same text" });
    const rt = await judgedRuntime([rule], (tok) =>
      scriptedJudge(tok, () => {
        calls++;
        return "<score>0.5</score>";
      }),
    );
    const a = await rt.controller.step(items(["q1"], 3, (q) => ({ q, answer: "" }), "a"));
    const b = await rt.controller.step(items(["q1"], 3, (q) => ({ q, answer: "" }), "b"));
    expect(calls).toBe(1);
    expect(a.judges.judge).toMatchObject({ calls: 1, cacheHits: 2 });
    expect(b.judges.judge).toMatchObject({ calls: 0, cacheHits: 3 });
    expect(b.trajectories.every((t) => t.judgements![0].cached && t.judgements![0].score === 0.5)).toBe(true);
  });

  it("stops the step on a transport failure instead of recording it as a verdict", async () => {
    const rule = judgeReward<string, OneState>({ judge: { model: "judge" }, candidate: say });
    const broken = (): Generator => ({
      submit: async () => {
        throw new MasoError("NATS_DISCONNECTED", "server gone");
      },
      stats: () => ({ requests: 0, steps: 0, sequenceSteps: 0, busyMs: 0 }),
    });
    const rt = await judgedRuntime([rule], broken);
    await expect(rt.controller.step(items(["q1"], 2, (q) => ({ q, answer: "" })))).rejects.toMatchObject({ code: "NATS_DISCONNECTED" });
  });

  it("record mode: one call per role record, each with its role's rubric", async () => {
    const seen: string[] = [];
    const policy = warmModel(3, ["q1"], ["abc", "bcd"]);
    const rule = judgeReward<string, TwoState>({
      judge: { model: "judge" },
      mode: "record",
      rubric: { writer: "RUBRIC-W", answerer: "RUBRIC-A" },
    });
    const rt = await createRuntime<TwoState, string>({
      workflow: twoRoleWorkflow(),
      models: [
        { name: "policy", source: { decoder: policy } },
        { name: "judge", source: { config: tinyConfig(), seed: 9 }, train: "frozen" },
      ],
      cast: { writer: "policy", answerer: "policy" },
      rewards: [rule],
      advantage: { estimator: "grpo" },
      seed: 5,
      generator: (model, tok) =>
        model === policy ? createDefaultGenerator(model, tok) : scriptedJudge(tok, ([c]) => `<score>${c.length / 10}</score>`, seen),
    });
    const report = await rt.controller.step(items(["q1"], 2, (q) => ({ q, note: "", answer: "" })));
    for (const t of report.trajectories) {
      expect(t.judgements!.map((j) => j.recordIndex)).toEqual([0, 1]);
      t.judgements!.forEach((j, i) => {
        const rec = t.records[i];
        expect(j.score).toBeCloseTo((rec.rawOutput ?? "").length / 10, 12);
        expect(JSON.stringify(j.input)).toContain(rec.role === "writer" ? "RUBRIC-W" : "RUBRIC-A");
      });
      const rewards = report.rewards.episodes.find((e) => e.episodeId === t.episodeId)!.rewards;
      expect(rewards.map((r) => r.value)).toEqual(t.judgements!.map((j) => j.score));
    }
    expect(seen.length + report.judges.judge.cacheHits).toBe(4); // two equal outputs ask the judge once
  });

  it("refuses a rule it cannot run", () => {
    expect(() => judgeReward({ judge: {} as { model: string } })).toThrow(/judge must be \{ model \} or \{ endpoint \}/);
    expect(() => judgeReward({ judge: { model: "j" }, range: [1, 0] })).toThrow(/lo < hi/);
  });
});

/** A local judge API: OpenAI chat completions and Anthropic messages, answering by `answer`, or misbehaving. */
async function judgeServer(behaviour: "ok" | "500" | "hang", answer: (candidates: string[]) => string) {
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => {
      body += d;
    });
    req.on("end", () => {
      if (behaviour === "hang") return; // never answers: the client's timeout must end the call
      if (behaviour === "500") {
        res.writeHead(500).end("overloaded");
        return;
      }
      const b = JSON.parse(body) as { messages: { role: string; content: string }[] };
      const user = b.messages.filter((m) => m.role === "user").at(-1)!.content;
      const candidates = [...user.matchAll(/<candidate(?: id="\d+")?>\n([\s\S]*?)\n<\/candidate>/g)].map((m) => m[1]);
      const text = answer(candidates);
      const reply =
        req.url === "/v1/messages"
          ? { content: [{ type: "text", text }] }
          : { choices: [{ message: { role: "assistant", content: text } }] };
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(reply));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, close: () => new Promise<void>((r) => server.close(() => r())).then(() => server.closeAllConnections()) };
}

/** A runtime with only the policy model: an endpoint judge needs no worker group. */
async function policyRuntime(rewards: NamedReward<string, OneState>[]) {
  return createRuntime<OneState, string>({
    workflow: oneRoleWorkflow(),
    models: [{ name: "policy", source: { decoder: warmModel(3, ["q1", "q2"], ["abc", "bcd", "cda"]) } }],
    cast: { say: "policy" },
    rewards,
    advantage: { estimator: "grpo" },
    trainer: { lr: 1e-3 },
    sampling: { temperature: 1, topK: 0, topP: 1 },
    seed: 5,
  });
}

describe("judgeReward through an external endpoint", () => {
  for (const api of ["openai", "anthropic"] as const)
    it(`scores episodes through the ${api} API`, async () => {
      const srv = await judgeServer("ok", ([c]) => `<score>${c.startsWith("a") ? 1 : 0.5}</score>`);
      try {
        const rule = judgeReward<string, OneState>({
          judge: { endpoint: { api, baseURL: api === "openai" ? `${srv.url}/v1` : srv.url, model: "judge-1" } },
          candidate: say,
        });
        const report = await (await policyRuntime([rule])).controller.step(items(["q1", "q2"], 2, (q) => ({ q, answer: "" })));
        for (const t of report.trajectories)
          expect(t.judgements![0]).toMatchObject({ judge: "endpoint:judge-1", error: null, score: say(t).startsWith("a") ? 1 : 0.5 });
        expect(report.judges.judge.failures).toBe(0);
      } finally {
        await srv.close();
      }
    });

  for (const behaviour of ["500", "hang"] as const)
    it(`records an endpoint that ${behaviour === "500" ? "returns 500" : "hangs"} as judge failures, within its bound`, async () => {
      const srv = await judgeServer(behaviour, () => "<score>1</score>");
      try {
        const endpoint = { api: "openai" as const, baseURL: srv.url, model: "j", timeoutMs: 300, retries: 1, backoffMs: 10 };
        const rule = judgeReward<string, OneState>({ judge: { endpoint }, candidate: say });
        const t0 = performance.now();
        const report = await (await policyRuntime([rule, formatReward()])).controller.step(items(["q1"], 2, (q) => ({ q, answer: "" })));
        expect(performance.now() - t0).toBeLessThan(10_000);
        expect(report.judges.judge.failures).toBe(2);
        const error = report.trajectories[0].judgements![0].error!;
        expect(error).toMatch(behaviour === "500" ? /JUDGE_HTTP|500/ : /JUDGE_TIMEOUT|timed out/i);
        expect(report.rewards.episodes.every((e) => e.rewards[0].bySource.judge === undefined)).toBe(true);
      } finally {
        await srv.close();
      }
    });
});
