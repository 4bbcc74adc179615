// Sample ownership: rewards reach the samples their role calls generated, whatever a reward function
// does to the trajectory it is handed (the controller matches them through its own ledger), and a
// worker group refuses a reward claimed for another episode or role, or a second one in a step.
import { describe, expect, it } from "vitest";
import { combineRewards } from "../../src/rewards/combine.js";
import { sharedOutcome } from "../../src/rewards/outcome.js";
import type { NamedReward } from "../../src/rewards/types.js";
import { resolveModelSpec } from "../../src/runtime/worker-group/models.js";
import { ownedRecords, sampleLedger } from "../../src/runtime/controller/sample-ledger.js";
import { createWorkerGroup } from "../../src/runtime/worker-group/worker-group.js";
import { runEpisodes } from "../../src/workflow/runner.js";
import { scriptedCaller } from "../../src/workflow/scripted-caller.js";
import type { SampleHandle, Trajectory } from "../../src/workflow/trajectory.js";
import { ask, items, type OneState, oneRoleWorkflow, type TwoState, tinyConfig, twoRoleWorkflow } from "../runtime/helpers.js";
import { spyRuntime } from "./helpers.js";

const errorOf = async (p: Promise<unknown>) =>
  p.then(
    () => expect.unreachable("expected a MasoError"),
    (e: { code: string; message: string }) => e,
  );

describe("a worker group checks every reward against what it stored at generation", () => {
  it("refuses another episode's or role's claim and a second reward, naming both, and changes nothing when it refuses", async () => {
    const wg = await createWorkerGroup(resolveModelSpec({ name: "m", source: { config: tinyConfig(), seed: 9 } }), {
      roles: { a: null, b: null },
    });
    const gen = (episodeId: string, role: string) =>
      wg.generate({
        call: {
          episodeId,
          role,
          node: role,
          visit: 0,
          turn: 0,
          messages: ask(`prompt ${episodeId}`),
          sampling: { temperature: 1, topP: 1, topK: 0 },
          stop: [],
          maxNewTokens: 3,
        },
        adapter: null,
        seed: 1,
      });
    const [e0a, e1a, e0b] = await Promise.all([gen("e0", "a"), gen("e1", "a"), gen("e0", "b")]);
    const item = (g: { sampleHandle: SampleHandle | null }, episodeId: string, role: string, reward = 1) => ({
      id: g.sampleHandle!.id,
      episodeId,
      role,
      reward,
      groupKey: "g",
    });

    const swapped = await errorOf(wg.assignRewards({ items: [item(e0a, "e0", "a"), item(e1a, "e0", "a")] }));
    expect(swapped.code).toBe("SAMPLE_OWNER");
    expect(swapped.message).toContain(
      `sample ${e1a.sampleHandle!.id} of worker group "m" was generated for episode "e1" role "a", but its reward claims episode "e0" role "a"`,
    );
    const wrongRole = await errorOf(wg.assignRewards({ items: [item(e0b, "e0", "a")] }));
    expect(wrongRole.code).toBe("SAMPLE_OWNER");
    expect(wrongRole.message).toContain('generated for episode "e0" role "b", but its reward claims episode "e0" role "a"');
    const inOneMessage = await errorOf(wg.assignRewards({ items: [item(e0a, "e0", "a"), item(e0a, "e0", "a", 2)] }));
    expect(inOneMessage.code).toBe("SAMPLE_REWARDED_TWICE");

    // the refused messages left no reward behind: the right one is accepted once, and only once
    expect(await wg.assignRewards({ items: [item(e0a, "e0", "a"), item(e1a, "e1", "a"), item(e0b, "e0", "b")] })).toEqual({ accepted: 3 });
    const twice = await errorOf(wg.assignRewards({ items: [item(e1a, "e1", "a", 5)] }));
    expect(twice).toMatchObject({
      code: "SAMPLE_REWARDED_TWICE",
      message: expect.stringContaining(
        `sample ${e1a.sampleHandle!.id} of worker group "m" (episode "e1", role "a") got a second reward this step`,
      ),
    });
    await wg.release({});
  });
});

describe("the controller matches rewards to samples through its own ledger", () => {
  it("a reward function that points every trajectory at one sample still trains each sample once, on its own reward", async () => {
    let stash: SampleHandle | null = null;
    const hijack: NamedReward<string, OneState> = {
      name: "hijack",
      fn: (t) => {
        const rec = t.records[0];
        stash ??= rec.sampleHandle;
        rec.sampleHandle = stash; // every record now claims the first episode's sample
        rec.role = "someone-else";
        return [{ recordIndex: 0, kind: "trajectory", value: t.finalState.answer.length }];
      },
    };
    const rt = await spyRuntime<OneState, string>({
      workflow: oneRoleWorkflow(),
      models: [{ name: "m", source: { config: tinyConfig(), seed: 4 } }],
      cast: { say: "m" },
      rewards: [hijack],
      advantage: { estimator: "grpo", options: { groupBy: ["role"] } },
    });
    const report = await rt.controller.step(items(["a", "b"], 2, (q) => ({ q, answer: "" })));
    const sent = rt.sent.flat();
    expect(sent).toHaveLength(4);
    expect(new Set(sent.map((i) => i.id)).size).toBe(4);
    expect(sent.map((i) => [i.episodeId, i.role])).toEqual(report.trajectories.map((t) => [t.episodeId, "say"]));
    for (const [k, t] of report.trajectories.entries()) expect(sent[k].reward).toBe(t.finalState.answer.length);
    // what the files will show is what trained: each record's own handle, each reward's own sample
    expect(report.trajectories.every((t) => t.records[0].role === "say")).toBe(true);
    const handles = report.trajectories.map((t) => t.records[0].sampleHandle!.id);
    expect(handles).toEqual(sent.map((i) => i.id));
    expect(report.rewards.episodes.map((e) => [e.rewards[0].sampleHandle.id, e.rewards[0].role])).toEqual(handles.map((h) => [h, "say"]));
    expect(report.roles.say).toMatchObject({ samples: 4, updated: true });
  });

  it("two roles of one episode swapped by a reward function keep their own rewards", async () => {
    const swap: NamedReward<string, TwoState> = {
      name: "swap",
      fn: (t) => {
        const [a, b] = t.records;
        [a.sampleHandle, b.sampleHandle] = [b.sampleHandle, a.sampleHandle];
        return [
          { recordIndex: 0, kind: "node", value: 1 },
          { recordIndex: 1, kind: "node", value: 2 },
        ];
      },
    };
    const rt = await spyRuntime<TwoState, string>({
      workflow: twoRoleWorkflow(),
      models: [{ name: "m", source: { config: tinyConfig(), seed: 5 } }],
      cast: { writer: "m", answerer: "m" },
      rewards: [swap],
      advantage: { estimator: "grpo", options: { groupBy: ["role"] } },
    });
    await rt.controller.step(items(["q"], 2, (q) => ({ q, note: "", answer: "" })));
    expect(rt.sent.flat().map((i) => [i.role, i.reward])).toEqual([
      ["writer", 1],
      ["answerer", 2],
      ["writer", 1],
      ["answerer", 2],
    ]);
  });

  it("a record whose handle no role call of its episode returned is SAMPLE_UNOWNED", async () => {
    const ledger = sampleLedger(() => {});
    const ts = await runEpisodes(
      oneRoleWorkflow(),
      [0, 1].map((i) => ({ id: `e${i}`, state: { q: "q", answer: "" } })),
      { caller: ledger.wrap(scriptedCaller(() => "x")) },
    );
    ledger.close();
    expect([...ownedRecords(ts[0] as Trajectory<unknown>, ledger).values()].map((r) => r.sample.episodeId)).toEqual(["e0"]);
    ts[0].records[0].sampleHandle = { ...ts[1].records[0].sampleHandle! };
    expect(() => ownedRecords(ts[0] as Trajectory<unknown>, ledger)).toThrow(
      expect.objectContaining({
        code: "SAMPLE_UNOWNED",
        message: expect.stringContaining('episode "e0", node "say" visit 0 (record 0) holds sample scripted#1'),
      }),
    );
  });
});

describe("combineRewards reads which records need rewards before any reward function runs", () => {
  it("a function that drops a record's handle cannot make it skip its reward (REWARD_MISSING), nor relabel it", async () => {
    const [t] = await runEpisodes(oneRoleWorkflow(), [{ id: "e0", state: { q: "q", answer: "" } }], { caller: scriptedCaller(() => "x") });
    const dropper: NamedReward<null, OneState> = {
      name: "dropper",
      fn: (tr) => {
        tr.records[0].sampleHandle = null;
        return [];
      },
    };
    expect(() => combineRewards(structuredClone(t), null, [dropper])).toThrow(expect.objectContaining({ code: "REWARD_MISSING" }));
    const relabel: NamedReward<null, OneState> = {
      name: "relabel",
      fn: (tr) => {
        Object.assign(tr.records[0], { role: "other", node: "elsewhere", sampleHandle: { model: "x", id: 99 } });
        return sharedOutcome<null, OneState>(() => 1).fn(tr, null);
      },
    };
    const out = combineRewards(structuredClone(t), null, [relabel]);
    expect(out.rewards[0]).toMatchObject({ node: "say", role: "say", sampleHandle: t.records[0].sampleHandle });
  });
});
