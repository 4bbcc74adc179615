// Benchmark (not a test): the gateway against the DSL runtime on the same workload (writer → judge →
// writer on models/base, 32 new tokens a call), in one process, alternating. Prints one JSON object:
// overhead_share — the gateway's added time per call (HTTP, SDK, parsing, records) as a share of
// generation time, at 16 concurrent agents (target ≤ 0.05) — and calls/s and episodes/s at 32
// concurrent episodes for the gateway and for the DSL runtime. overhead_share_server is the part spent
// inside the gateway's handler; the rest is HTTP and the client SDK.
// Run: npx tsx bench/gateway.ts [episodes per round] [rounds]
import { untrainedCast } from "../scripts/lib/untrained-cast.js";
import type { timings as Timings } from "./gateway/agent.js";

const episodes = Number(process.argv[2] ?? 64);
const rounds = Number(process.argv[3] ?? 2);
const DSL = "bench/gateway/workload.ts";
const AGENT = "bench/gateway/agent.ts";

async function run(file: string, variant: string, round: number) {
  const { mod, rt } = await untrainedCast(file, variant);
  const tasks = mod.tasks.train;
  const items = Array.from({ length: episodes }, (_, i) => ({
    episode: { id: `b${round}-${variant}-${i}`, state: mod.initialState(tasks[i % tasks.length]), taskId: `t${i % tasks.length}` },
    task: tasks[i % tasks.length],
  }));
  const t0 = performance.now();
  const trajectories = await rt.controller.evaluate(items, {});
  const seconds = (performance.now() - t0) / 1000;
  const calls = trajectories.reduce((a, t) => a + t.records.filter((r) => r.kind === "role").length, 0);
  const failed = trajectories.filter((t) => t.status === "error").length;
  // the module instance `maso` loaded (the agent's exports travel with it) holds the agent's call timings
  const timings = ((mod as unknown as { timings?: typeof Timings }).timings ?? []).splice(0);
  return { calls_per_s: calls / seconds, episodes_per_s: episodes / seconds, failed, timings };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const seen = { dsl: [] as ReturnType<typeof run> extends Promise<infer R> ? R[] : never, gateway: [] as Awaited<ReturnType<typeof run>>[] };
const shares: number[] = [];
const serverShares: number[] = [];
await run(AGENT, "c16", -1); // warm-up: the gateway server, the page cache
for (let r = 0; r < rounds; r++) {
  seen.dsl.push(await run(DSL, "c32", r));
  seen.gateway.push(await run(AGENT, "c32", r));
  const { timings } = await run(AGENT, "c16", r);
  const gen = timings.reduce((a, t) => a + t.generationMs, 0);
  const extra = timings.reduce((a, t) => a + (t.wallMs - t.generationMs), 0);
  shares.push(extra / gen);
  // the part of it spent in the gateway's handler (validation, parsing, records) rather than HTTP and the SDK
  serverShares.push(timings.reduce((a, t) => a + (t.handlerMs - t.generationMs), 0) / gen);
}
const summary = (xs: Awaited<ReturnType<typeof run>>[]) => ({
  calls_per_s: median(xs.map((x) => x.calls_per_s)),
  episodes_per_s: median(xs.map((x) => x.episodes_per_s)),
  failed: xs.reduce((a, x) => a + x.failed, 0),
});
const gateway = summary(seen.gateway);
const dsl = summary(seen.dsl);
console.log(
  JSON.stringify({
    bench: "gateway",
    model: "models/base",
    episodes,
    rounds,
    overhead_share: median(shares),
    overhead_share_server: median(serverShares),
    calls_per_s: gateway.calls_per_s,
    episodes_per_s: gateway.episodes_per_s,
    dsl: { calls_per_s: dsl.calls_per_s, episodes_per_s: dsl.episodes_per_s },
    gateway_vs_dsl: gateway.episodes_per_s / dsl.episodes_per_s,
    failed: { gateway: gateway.failed, dsl: dsl.failed },
  }),
);
