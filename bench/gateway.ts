// Benchmark (not a test): the gateway against the DSL runtime on the same workload (writer → judge →
// writer on models/base, 32 new tokens a call), in one process, alternating. Prints one JSON object:
// overhead_share — the gateway's added time per call (HTTP, SDK, parsing, records) as a share of
// generation time, at 16 concurrent agents (target ≤ 0.05), over Chat Completions — and calls/s and
// episodes/s at 32 concurrent episodes for the gateway and for the DSL runtime. overhead_share_server
// is the part spent inside the gateway's handler; the rest is HTTP and the client SDK. `apis` gives,
// per wire API through its own SDK (chat, responses, messages), the same overhead share and, for
// streamed calls at 1 and 16 concurrent agents, the median time to the first text delta (ttft_ms)
// and of the whole call (total_ms). prefill_ms and decode_step_ms are the engine's own times for the
// same calls at 1 agent: a streamed call's first token should come within prefill + 2 decode steps.
// overhead_share_lanes_level is chat's overhead share with generation lanes at the main thread's
// priority (MASO_LANE_NICE=0), alternated with the default runs in the same rounds.
// bare_round_trip_ms: a request that generates nothing (GET /v1/models) through the API's SDK, at
// 1 agent: the floor of SDK, HTTP and routing time inside every call's time to first token.
// Run: npx tsx bench/gateway.ts [episodes per round] [rounds]
import { untrainedCast } from "../scripts/lib/untrained-cast.js";
import { ms, overheadShares, streamFigures } from "./gateway/figures.js";
import { median } from "./median.js";
import { samplerReference } from "./gateway/sampler-reference.js";
import type { Api, Timed } from "./gateway/sdk-calls.js";
import { machine } from "./machine.js";

const episodes = Number(process.argv[2] ?? 64);
const rounds = Number(process.argv[3] ?? 2);
const DSL = "bench/gateway/workload.ts";
const AGENT = "bench/gateway/agent.ts";
const APIS: readonly Api[] = ["chat", "responses", "messages"];

/** How the agent makes its calls: its tasks say so (agent.ts); the DSL workload ignores it. */
interface Mode {
  api: Api;
  stream: boolean;
  bare?: boolean;
}

async function run(file: string, variant: string, round: number, mode?: Mode, tag = "") {
  const { mod, rt } = await untrainedCast(file, variant);
  const tasks = mod.tasks.train as object[];
  const label = `${tag}${mode ? `${mode.api}${mode.stream ? "-stream" : ""}-` : ""}`;
  const items = Array.from({ length: episodes }, (_, i) => {
    const task = { ...tasks[i % tasks.length], ...mode };
    return { episode: { id: `b${round}-${variant}-${label}${i}`, state: mod.initialState(task), taskId: `t${i % tasks.length}` }, task };
  });
  const t0 = performance.now();
  const trajectories = await rt.controller.evaluate(items, {});
  const seconds = (performance.now() - t0) / 1000;
  const calls = trajectories.reduce((a, t) => a + t.records.filter((r) => r.kind === "role").length, 0);
  const failed = trajectories.filter((t) => t.status === "error").length;
  // the module instance `maso` loaded (the agent's exports travel with it) holds the agent's call timings
  const timings = ((mod as unknown as { timings?: Timed[] }).timings ?? []).splice(0);
  return { calls_per_s: calls / seconds, episodes_per_s: episodes / seconds, failed, timings };
}

/** One API's calls over the rounds. */
interface ApiRuns {
  shares: number[];
  serverShares: number[];
  tokens: number[];
  c1: Timed[];
  c16: Timed[];
  bare: Timed[];
  failed: number;
}

/** Chat's overhead share at 16 agents with lanes as nice as the main thread (lanes read it as they start). */
async function levelLanesShare(round: number): Promise<number> {
  const saved = process.env.MASO_LANE_NICE;
  process.env.MASO_LANE_NICE = "0";
  try {
    return overheadShares((await run(AGENT, "c16", round, { api: "chat", stream: false }, "level-")).timings).share;
  } finally {
    if (saved === undefined) delete process.env.MASO_LANE_NICE;
    else process.env.MASO_LANE_NICE = saved;
  }
}

/** One round of an API: not streamed at 16 agents (overhead share), then streamed at 16 and at 1. */
async function apiRound(api: Api, round: number, into: ApiRuns) {
  const plain = await run(AGENT, "c16", round, { api, stream: false });
  const { share, server } = overheadShares(plain.timings);
  into.shares.push(share);
  into.serverShares.push(server);
  into.tokens.push(...plain.timings.map((t) => t.outputTokens ?? Number.NaN));
  into.failed += plain.failed;
  into.bare.push(...(await run(AGENT, "c1", round, { api, stream: false, bare: true })).timings);
  for (const [variant, calls] of [["c16", into.c16] as const, ["c1", into.c1] as const]) {
    const streamed = await run(AGENT, variant, round, { api, stream: true });
    calls.push(...streamed.timings);
    into.failed += streamed.failed;
  }
}

function apiFigures(a: ApiRuns, engine: { prefill_ms: number; decode_step_ms: number }) {
  const c1 = streamFigures(a.c1);
  return {
    overhead_share: median(a.shares),
    overhead_share_server: median(a.serverShares),
    tokens_per_call: median(a.tokens),
    stream_c1: c1,
    stream_c16: streamFigures(a.c16),
    ttft_within_prefill_plus_2_decode: c1.ttft_ms <= engine.prefill_ms + 2 * engine.decode_step_ms,
    bare_round_trip_ms: ms(median(a.bare.map((t) => t.wallMs))),
    failed: a.failed,
  };
}

type Throughput = Awaited<ReturnType<typeof run>>;
const summary = (xs: Throughput[]) => ({
  calls_per_s: median(xs.map((x) => x.calls_per_s)),
  episodes_per_s: median(xs.map((x) => x.episodes_per_s)),
  failed: xs.reduce((a, x) => a + x.failed, 0),
});

const seen = { dsl: [] as Throughput[], gateway: [] as Throughput[], levelLanes: [] as number[] };
const runs = Object.fromEntries(
  APIS.map((api) => [api, { shares: [], serverShares: [], tokens: [], c1: [], c16: [], bare: [], failed: 0 } as ApiRuns]),
) as Record<Api, ApiRuns>;
// warm-up: the gateway server, the page cache, each SDK's and each route's code paths
for (const api of APIS) for (const stream of [false, true]) await run(AGENT, "c16", -1, { api, stream });
for (let r = 0; r < rounds; r++) {
  seen.dsl.push(await run(DSL, "c32", r));
  seen.gateway.push(await run(AGENT, "c32", r));
  for (const api of APIS) await apiRound(api, r, runs[api]);
  seen.levelLanes.push(await levelLanesShare(r));
}
const engine = await samplerReference((await untrainedCast(AGENT, "c1")).rt.cast, episodes);
const gateway = summary(seen.gateway);
const dsl = summary(seen.dsl);
console.log(
  JSON.stringify({
    bench: "gateway",
    model: "models/base",
    precision: engine.precision,
    machine: machine(),
    episodes,
    rounds,
    overhead_share: median(runs.chat.shares),
    overhead_share_server: median(runs.chat.serverShares),
    overhead_share_lanes_level: median(seen.levelLanes),
    calls_per_s: gateway.calls_per_s,
    episodes_per_s: gateway.episodes_per_s,
    dsl: { calls_per_s: dsl.calls_per_s, episodes_per_s: dsl.episodes_per_s },
    gateway_vs_dsl: gateway.episodes_per_s / dsl.episodes_per_s,
    prefill_ms: engine.prefill_ms,
    decode_step_ms: engine.decode_step_ms,
    apis: Object.fromEntries(APIS.map((api) => [api, apiFigures(runs[api], engine)])),
    failed: { gateway: gateway.failed + APIS.reduce((a, api) => a + runs[api].failed, 0), dsl: dsl.failed },
  }),
);
// the process's one gateway keeps listening, and the runtimes' lanes idle: nothing else ends it
process.exit(0);
