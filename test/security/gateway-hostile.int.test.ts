// Hostile clients against a real gateway server: calls, rewards and ends on another episode's routes,
// floods and bombs in bodies, content types a web page can send without a preflight, foreign Host
// headers, a prompt at the size limit and a trickled body. Each attack must get a clear 4xx (or be
// recorded as failed), leave the victim's records as they were, keep memory flat, and leave honest
// episodes calling the whole time with their own answers. Figures go to the log as `[hostile]` lines.
import { monitorEventLoopDelay } from "node:perf_hooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentResult } from "../../src/gateway/agent-module.js";
import { checkAgentResult } from "../../src/gateway/agent-workflow.js";
import { MAX_BODY_BYTES, MAX_REWARD_BYTES } from "../../src/gateway/app.js";
import { hostAllowed } from "../../src/gateway/episode-auth.js";
import { PROCESS_API_KEY } from "../../src/gateway/host.js";
import { type GatewayServer, serveGateway } from "../../src/gateway/serve.js";
import { scriptedBackend } from "../gateway/scripted-backend.js";
import { type Answer, chatBody, exchange, flood, honestTraffic, latencySummary, send, trickle } from "./hostile-http.js";

const VICTIM = "s1-t0-g0"; // the ids a run gives, so an attacker could guess them
const ATTACKER = "s1-t0-g1";
const HONEST = ["s1-t1-g0", "s1-t1-g1", "s1-t2-g0", "s1-t2-g1"];
const MiB = 1 << 20;

/** What the scripted model answers: the calling episode and its prompt, so cross-talk would show. */
const reply = (episode: string, prompt: string) => `${episode}: ${prompt.slice(0, 40)}`;

/**
 * The scripted backend with a run's reward and end endpoints: results need the episode's result key
 * (`rk-<id>`), apart from its call key (`sk-<id>`), and rewards are checked as the run checks them.
 */
function rewardingBackend() {
  const base = scriptedBackend(["coder"], (call) => reply(call.episodeId, call.messages.at(-1)!.content));
  const reports = new Map<string, AgentResult[]>();
  const ends = new Map<string, number>();
  return Object.assign(base, {
    reports,
    ends,
    episodeOfKey(key: string, scope: "calls" | "results" = "calls") {
      const id = key.slice(3);
      return key.startsWith(scope === "calls" ? "sk-" : "rk-") && base.episodes.has(id) ? id : null;
    },
    report(id: string, body: unknown) {
      const checked = checkAgentResult(body);
      reports.set(id, [...(reports.get(id) ?? []), checked]);
    },
    end(id: string) {
      ends.set(id, (ends.get(id) ?? 0) + 1);
    },
  });
}

const backend = rewardingBackend();
let g: GatewayServer;

const keyOf = (id: string) => `sk-${id}`;
const resultKeyOf = (id: string) => `rk-${id}`;
const json = { "content-type": "application/json" };
/** Headers of a call by episode `id`, or of its result (reward, end) with `results`. */
const as = (id: string, results = false) => ({ ...json, authorization: `Bearer ${results ? resultKeyOf(id) : keyOf(id)}` });
/** An episode's records as one string: its calls, rewards and ends. */
const recordsOf = (id: string) =>
  JSON.stringify({ calls: backend.episodes.get(id), reports: backend.reports.get(id) ?? [], ends: backend.ends.get(id) ?? 0 });
const rss = () => process.memoryUsage().rss;
const log = (what: string, figures: object) => console.info(`[hostile] ${what}: ${JSON.stringify(figures)}`);
/** The error code of an OpenAI-shaped error body, or the type of an Anthropic-shaped one. */
const codeOf = (a: Answer) => a.json.error?.code ?? a.json.error?.type;

/** Runs `attack` while the honest episodes call; fails on any wrong or failed honest answer. */
async function underAttack<T>(attack: () => Promise<T>): Promise<T> {
  const traffic = honestTraffic(g.port, HONEST, reply);
  const result = await attack();
  const { latencies, failures } = await traffic.stop();
  expect(failures, "an honest episode's call failed during the attack").toEqual([]);
  expect(latencies.length).toBeGreaterThanOrEqual(HONEST.length);
  return result;
}

let victimBefore: string;

beforeAll(async () => {
  for (const id of [VICTIM, ATTACKER, ...HONEST]) backend.open(id);
  g = await serveGateway(backend);
  // the victim has a call (one with an Idempotency-Key), a reward and an end on record
  const call = await send(g.port, {
    path: `/episodes/${VICTIM}/v1/chat/completions`,
    headers: { ...as(VICTIM), "idempotency-key": "retry-1" },
    body: chatBody("victim's secret plan"),
  });
  expect(call.status).toBe(200);
  expect((await send(g.port, { path: `/episodes/${VICTIM}/reward`, headers: as(VICTIM, true), body: '{"reward":0.5}' })).status).toBe(200);
  expect((await send(g.port, { path: `/episodes/${VICTIM}/end`, headers: as(VICTIM, true) })).status).toBe(200);
  victimBefore = recordsOf(VICTIM);
});
afterAll(() => g?.close());

describe("cross-episode: no call, reward or end reaches another episode", () => {
  const ROUTES = [
    { name: "chat", path: "/v1/chat/completions", body: chatBody("steal") },
    { name: "responses", path: "/v1/responses", body: JSON.stringify({ model: "coder", input: "steal" }) },
    {
      name: "messages",
      path: "/v1/messages",
      body: JSON.stringify({ model: "coder", max_tokens: 8, messages: [{ role: "user", content: "x" }] }),
    },
    {
      name: "messages (AI SDK path)",
      path: "/messages",
      body: JSON.stringify({ model: "coder", max_tokens: 8, messages: [{ role: "user", content: "x" }] }),
    },
    { name: "models", path: "/v1/models", method: "GET" },
    { name: "reward", path: "/reward", body: '{"reward":-1}', results: true },
    { name: "end", path: "/end", body: "{}", results: true },
  ];
  const anthropic = (route: string) => route.startsWith("messages");
  type Want = readonly [number, string] | null;
  const no: Want = [401, "invalid_api_key"];
  const mismatch: Want = [409, "episode_mismatch"];
  // what a call route and a result route (reward, end) answer; results never read the stamped header
  const CREDENTIALS: { name: string; headers: Record<string, string>; calls: Want; results: Want }[] = [
    { name: "no key", headers: {}, calls: no, results: no },
    { name: "a wrong key", headers: { authorization: "Bearer sk-nobody" }, calls: no, results: no },
    { name: "the episode id as the key", headers: { authorization: `Bearer ${VICTIM}` }, calls: no, results: no },
    { name: "another episode's key (Bearer)", headers: { authorization: `Bearer ${keyOf(ATTACKER)}` }, calls: no, results: no },
    { name: "another episode's key (x-api-key)", headers: { "x-api-key": keyOf(ATTACKER) }, calls: no, results: no },
    { name: "another episode's result key", headers: { authorization: `Bearer ${resultKeyOf(ATTACKER)}` }, calls: no, results: no },
    {
      name: "the victim's result key, on call routes",
      headers: { authorization: `Bearer ${resultKeyOf(VICTIM)}` },
      calls: no,
      results: null,
    },
    { name: "the victim's call key, on result routes", headers: { authorization: `Bearer ${keyOf(VICTIM)}` }, calls: null, results: no },
    { name: "the victim's call key stamped, on result routes", headers: { "x-maso-episode-key": keyOf(VICTIM) }, calls: null, results: no },
    { name: "another episode's stamped key", headers: { "x-maso-episode-key": keyOf(ATTACKER) }, calls: mismatch, results: no },
    {
      name: "another episode's stamped key beside the victim's id as Bearer",
      headers: { "x-maso-episode-key": keyOf(ATTACKER), authorization: `Bearer ${VICTIM}` },
      calls: mismatch,
      results: no,
    },
    { name: "a stamped key of no episode", headers: { "x-maso-episode-key": "sk-nobody" }, calls: no, results: no },
  ];
  let traffic: ReturnType<typeof honestTraffic>;
  beforeAll(() => {
    traffic = honestTraffic(g.port, HONEST, reply);
  });
  afterAll(() => traffic.stop());

  it.each(CREDENTIALS)("/episodes/<victim>/… with $name: refused on every route", async (cred) => {
    for (const route of ROUTES) {
      const want = route.results ? cred.results : cred.calls;
      if (want === null) continue; // the victim's own key on its own kind of route: not an attack
      const a = await send(g.port, {
        method: route.method,
        path: `/episodes/${VICTIM}${route.path}`,
        headers: { ...(route.body ? json : {}), ...cred.headers },
        body: route.body,
      });
      const code = anthropic(route.name) ? (want[0] === 401 ? "authentication_error" : "invalid_request_error") : want[1];
      expect([a.status, codeOf(a)], route.name).toEqual([want[0], code]);
    }
  });

  it("the plain /v1 routes with a key that names no episode: 401", async () => {
    for (const key of [undefined, "sk-nobody", PROCESS_API_KEY, `${keyOf(VICTIM)}x`, ` ${VICTIM}`]) {
      const auth: Record<string, string> = key === undefined ? {} : { authorization: `Bearer ${key}`, "x-api-key": key };
      for (const path of ["/v1/chat/completions", "/v1/responses", "/v1/models", "/reward", "/end"]) {
        const get = path.endsWith("models");
        const a = await send(g.port, {
          method: get ? "GET" : "POST",
          path,
          headers: { ...json, ...auth },
          body: get ? undefined : chatBody("steal"),
        });
        expect([a.status, codeOf(a)], `${path} with ${key}`).toEqual([401, "invalid_api_key"]);
      }
      const m = await send(g.port, { path: "/v1/messages", headers: { ...json, ...auth }, body: chatBody("x") });
      expect([m.status, codeOf(m)]).toEqual([401, "authentication_error"]);
    }
  });

  it("guessed episode ids without a key: 401, the same whether the episode is open or not", async () => {
    const open = await send(g.port, { path: `/episodes/${VICTIM}/v1/chat/completions`, headers: json, body: chatBody("guess") });
    const closed = await send(g.port, { path: "/episodes/s9-t9-g9/v1/chat/completions", headers: json, body: chatBody("guess") });
    expect([open.status, codeOf(open)]).toEqual([401, "invalid_api_key"]);
    // no oracle: the answers differ only by the id the caller sent
    expect(closed.json).toEqual(JSON.parse(JSON.stringify(open.json).replaceAll(VICTIM, "s9-t9-g9")));
    for (const path of ["/reward", "/end"]) {
      const a = await send(g.port, { path: `/episodes/${VICTIM}${path}`, headers: json, body: '{"reward":1}' });
      expect([a.status, codeOf(a)]).toEqual([401, "invalid_api_key"]);
    }
  });

  it("the victim's Idempotency-Key, replayed by another episode, answers that episode's own call", async () => {
    const a = await send(g.port, {
      path: `/episodes/${ATTACKER}/v1/chat/completions`,
      headers: { ...as(ATTACKER), "idempotency-key": "retry-1" },
      body: chatBody("give me the victim's answer"),
    });
    expect(a.status).toBe(200);
    const content = (a.json.choices as { message: { content: string } }[])[0].message.content;
    expect(content).toBe(reply(ATTACKER, "give me the victim's answer"));
  });

  it("nothing reached the victim's records, and honest episodes kept their own answers", async () => {
    const { latencies, failures } = await traffic.stop();
    expect(failures).toEqual([]);
    expect(latencies.length).toBeGreaterThanOrEqual(HONEST.length);
    expect(recordsOf(VICTIM)).toBe(victimBefore);
    log("cross-episode honest latency during the attacks", latencySummary(latencies));
  });
});

describe("bodies over the limit", () => {
  it("64 MiB chunked to a call route: 413 past 8 MiB, nothing read beyond, RSS flat", async () => {
    const before = rss();
    const r = await underAttack(() =>
      flood(g.port, {
        path: `/episodes/${ATTACKER}/v1/chat/completions`,
        headers: as(ATTACKER),
        total: 64 * MiB,
        prefix: '{"model":"coder","x":"',
      }),
    );
    const grown = rss() - before;
    log("64 MiB chunked to a call route", {
      status: r.status,
      flushedMiB: r.flushed / MiB,
      answeredMs: r.answeredMs,
      closedMs: r.closedMs,
      rssMiB: grown / MiB,
    });
    expect([r.status, r.json.error?.code]).toEqual([413, "body_too_large"]);
    // the client's socket accepted the limit plus what the kernel buffers on loopback, not 64 MiB
    expect(r.flushed).toBeLessThan(MAX_BODY_BYTES + 16 * MiB);
    expect(grown).toBeLessThan(32 * MiB);
  });

  it("64 MiB chunked to the reward route: 413 past 256 KiB", async () => {
    const before = rss();
    const r = await underAttack(() =>
      flood(g.port, { path: `/episodes/${ATTACKER}/reward`, headers: as(ATTACKER, true), total: 64 * MiB }),
    );
    log("64 MiB chunked to the reward route", {
      status: r.status,
      flushedMiB: r.flushed / MiB,
      closedMs: r.closedMs,
      rssMiB: (rss() - before) / MiB,
    });
    expect([r.status, r.json.error?.code]).toEqual([413, "body_too_large"]);
    expect(r.flushed).toBeLessThan(MAX_REWARD_BYTES + 16 * MiB);
    expect(rss() - before).toBeLessThan(32 * MiB);
    expect(backend.reports.get(ATTACKER)).toBeUndefined();
  });

  it("1 GiB chunked without a key: 401 before any body is read, a bounded drain, RSS flat", async () => {
    const before = rss();
    const r = await underAttack(() => flood(g.port, { path: `/episodes/${VICTIM}/v1/chat/completions`, headers: json, total: 1 << 30 }));
    const grown = rss() - before;
    log("1 GiB chunked without a key", {
      status: r.status,
      answeredMs: r.answeredMs,
      closedMs: r.closedMs,
      flushedMiB: r.flushed / MiB,
      rssMiB: grown / MiB,
    });
    expect([r.status, r.json.error?.code]).toEqual([401, "invalid_api_key"]);
    // the HTTP adapter drains (and drops) an unread body for about 500 ms, then closes
    expect(r.closedMs - r.answeredMs).toBeLessThan(3000);
    expect(r.flushed).toBeLessThan(512 * MiB);
    // this process's RSS: the drained chunks are garbage that GC returns late, so it grows with the
    // bytes drained (4-25 MiB for 52-267 MiB flushed, 39 MiB once under load); a body kept in
    // memory would add all of them
    expect(grown).toBeLessThan(32 * MiB + r.flushed / 8);
  });

  it("a Content-Length of 1 GiB: 413 before the body, the connection closed after a bounded drain", async () => {
    const before = rss();
    const headers = { ...as(ATTACKER), "content-length": String(1 << 30) };
    const r = await underAttack(() => flood(g.port, { path: `/episodes/${ATTACKER}/v1/chat/completions`, headers, total: 1 << 30 }));
    log("Content-Length 1 GiB", { status: r.status, answeredMs: r.answeredMs, closedMs: r.closedMs, flushedMiB: r.flushed / MiB });
    expect([r.status, r.json.error?.code]).toEqual([413, "body_too_large"]);
    expect(r.closedMs - r.answeredMs).toBeLessThan(3000);
    expect(r.flushed).toBeLessThan(512 * MiB);
    expect(rss() - before).toBeLessThan(64 * MiB);
  });

  it("a Content-Length that lies short: the excess is parsed as a next request and refused, never read as the body", async () => {
    const body = chatBody("short");
    const head = (id: string, auth: string, length: number) =>
      `POST /episodes/${id}/v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}Content-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;
    const calls = backend.episodes.get(ATTACKER)!.length;
    const before = rss();
    // the declared bytes are a whole call; 8 MiB of junk follow on the same connection
    const junk = await underAttack(() =>
      exchange(g.port, [head(ATTACKER, `Authorization: Bearer ${keyOf(ATTACKER)}\r\n`, body.length) + body, Buffer.alloc(8 * MiB, 0x41)]),
    );
    expect(junk.closedByServer).toBe(true);
    expect(junk.text).toMatch(/^HTTP\/1\.1 (200|400) /);
    expect(junk.text).toContain("400 Bad Request");
    expect(rss() - before).toBeLessThan(32 * MiB);
    // the excess is a request for the victim's episode, without its key: answered on its own, 401
    const smuggled = await exchange(g.port, [
      head(ATTACKER, `Authorization: Bearer ${keyOf(ATTACKER)}\r\n`, body.length) + body + head(VICTIM, "", body.length) + body,
    ]);
    const answers = smuggled.text.match(/HTTP\/1\.1 \d{3}/g);
    expect(answers, smuggled.text).toEqual(["HTTP/1.1 200", "HTTP/1.1 401"]);
    expect(smuggled.text).toContain(reply(ATTACKER, "short"));
    // the attacker's own episode got at most its declared calls; the victim nothing
    expect(backend.episodes.get(ATTACKER)!.length - calls).toBeLessThanOrEqual(2);
    expect(recordsOf(VICTIM)).toBe(victimBefore);
  });
});

describe("bombs in the body: a 4xx within a second, never a crash or a hang", () => {
  const post = (path: string, body: string | Buffer) => send(g.port, { path, headers: as(ATTACKER, true), body });
  const NESTED = "[".repeat(100_000);
  const BOMBS = [
    { name: "100k nested arrays, closed", body: `{"reward":${NESTED}${"]".repeat(100_000)}}`, status: 400, code: "too_deep" },
    { name: "100k unclosed [", body: NESTED, status: 400, code: "too_deep" },
    { name: "100k nested objects", body: `${'{"a":'.repeat(40_000)}1${"}".repeat(40_000)}`, status: 400, code: "too_deep" },
    { name: "a 200k-digit number", body: `{"reward":${"9".repeat(200_000)}}`, status: 400, code: "invalid_reward" },
    { name: "an exponent past any double", body: '{"reward":1e999999}', status: 400, code: "invalid_reward" },
    { name: "a 200k-character key", body: `{"roleRewards":{"${"k".repeat(200_000)}":"x"}}`, status: 400, code: "invalid_reward" },
    { name: "a 20 MB body with its Content-Length", body: Buffer.alloc(20_000_000, 0x20), status: 413, code: "body_too_large" },
  ];

  it.each(BOMBS)("the reward route, $name: $status $code", async (bomb) => {
    const a = await underAttack(() => post(`/episodes/${ATTACKER}/reward`, bomb.body));
    expect([a.status, codeOf(a)]).toEqual([bomb.status, bomb.code]);
    expect(a.ms).toBeLessThan(1000);
    expect(backend.reports.get(ATTACKER)).toBeUndefined();
  });

  it("the reward route, 20 MB chunked: 413 within a second", async () => {
    const r = await flood(g.port, { path: `/episodes/${ATTACKER}/reward`, headers: as(ATTACKER, true), total: 20_000_000 });
    expect([r.status, r.json.error?.code]).toEqual([413, "body_too_large"]);
    expect(r.answeredMs).toBeLessThan(1000);
  });

  it("a call route, 64 MiB of [ chunked: refused as too deep at the 65th bracket, not after 8 MiB", async () => {
    const r = await underAttack(() =>
      flood(g.port, { path: `/episodes/${ATTACKER}/v1/chat/completions`, headers: as(ATTACKER), total: 64 * MiB, fill: 0x5b }),
    );
    log("64 MiB of [ to a call route", { status: r.status, answeredMs: r.answeredMs, flushedMiB: r.flushed / MiB });
    expect([r.status, r.json.error?.code]).toEqual([400, "too_deep"]);
    expect(r.answeredMs).toBeLessThan(1000);
  });
});

describe("content types a web page sends without a preflight", () => {
  const TYPES = [
    "text/plain",
    "text/plain;charset=UTF-8",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    undefined,
  ];

  it.each(TYPES)("%s on a call and the reward route, with the episode's key: 415", async (type) => {
    const calls = backend.episodes.get(ATTACKER)!.length;
    for (const [path, body, key] of [
      [`/episodes/${ATTACKER}/v1/chat/completions`, chatBody("from a web page"), keyOf(ATTACKER)],
      [`/episodes/${ATTACKER}/reward`, '{"reward":1}', resultKeyOf(ATTACKER)],
      ["/reward", '{"reward":1}', resultKeyOf(ATTACKER)],
      ["/v1/chat/completions", "model=coder&messages=hi", keyOf(ATTACKER)],
    ]) {
      const headers: Record<string, string> = { authorization: `Bearer ${key}`, ...(type ? { "content-type": type } : {}) };
      const a = await send(g.port, { path, headers, body });
      expect([a.status, codeOf(a)], path).toEqual([415, "unsupported_media_type"]);
    }
    expect(backend.episodes.get(ATTACKER)!.length).toBe(calls);
    expect(backend.reports.get(ATTACKER)).toBeUndefined();
  });

  it("text/plain without a key: 401 before the body is looked at", async () => {
    const a = await send(g.port, { path: `/episodes/${VICTIM}/reward`, headers: { "content-type": "text/plain" }, body: '{"reward":1}' });
    expect([a.status, codeOf(a)]).toEqual([401, "invalid_api_key"]);
    expect(recordsOf(VICTIM)).toBe(victimBefore);
  });
});

describe("Host headers (DNS rebinding)", () => {
  const withHost = (host: string) => ({ ...as(ATTACKER), host: host.replace("PORT", String(g.port)) });
  const models = (host: string) => send(g.port, { method: "GET", path: `/episodes/${ATTACKER}/v1/models`, headers: withHost(host) });
  const call = (host: string) =>
    send(g.port, { path: `/episodes/${ATTACKER}/v1/chat/completions`, headers: withHost(host), body: chatBody("hi") });

  it.each([
    "evil.example",
    "evil.example:PORT",
    "127.0.0.1.evil.example",
    "localhost.evil.example:PORT",
    "localhost.",
    "127.0.0.2",
    "0.0.0.0:PORT",
  ])("Host: %s, even with the episode's key: 403", async (host) => {
    for (const a of [await models(host), await call(host)]) expect([a.status, codeOf(a)]).toEqual([403, "host_not_allowed"]);
  });

  it.each(["[::1]evil.example", "[::1].evil.example:PORT", "127.0.0.1:80:80", "localhost:PORT@evil.example"])(
    "a malformed Host: %s: refused (400 by the HTTP adapter, else 403)",
    async (host) => {
      for (const a of [await models(host), await call(host)]) expect([400, 403]).toContain(a.status);
      // and by the gateway's own check, for an adapter that would let it through
      expect(hostAllowed(host.replace("PORT", "1"))).toBe(false);
    },
  );

  it.each(["127.0.0.1:PORT", "localhost:PORT", "LOCALHOST:PORT", "[::1]:PORT", "[::1]", "localhost", "127.0.0.1"])(
    "Host: %s is served",
    async (host) => {
      const a = await models(host);
      expect(a.status).toBe(200);
      expect((a.json.data as { id: string }[]).map((m) => m.id)).toEqual(["coder"]);
    },
  );
});

describe("a prompt at the size limit while four episodes call", () => {
  const call = (body: string) =>
    send(g.port, { path: `/episodes/${ATTACKER}/v1/chat/completions`, headers: as(ATTACKER), body: Buffer.from(body) });
  const handlerMs = (a: Answer) => Number(/handler;dur=([\d.]+)/.exec(String(a.headers["server-timing"]))?.[1]);

  /** Honest latencies and the event loop's worst delay (this process: server and clients) while `during` runs. */
  async function measure(during: () => Promise<Answer | undefined>) {
    const h = monitorEventLoopDelay({ resolution: 10 });
    h.enable();
    const traffic = honestTraffic(g.port, HONEST, reply);
    const a = await during();
    const { latencies, failures } = await traffic.stop();
    h.disable();
    expect(failures).toEqual([]);
    return { a, honest: latencySummary(latencies), loopMaxMs: Math.round(h.max / 1e6) };
  }

  it("7.5 MiB of text in one message (ASCII, CJK) answered, 250k parts refused; the others' calls complete", async () => {
    const quiet = await measure(() => new Promise((r) => setTimeout(() => r(undefined), 400)));
    const text = "x".repeat(7.5 * MiB);
    const body = chatBody(text);
    expect(body.length).toBeLessThan(MAX_BODY_BYTES);
    const big = await measure(() => call(body));
    expect(big.a!.status).toBe(200);
    expect((big.a!.json.choices as { message: { content: string } }[])[0].message.content).toBe(reply(ATTACKER, text));
    // the same bytes as CJK text: a two-byte string, slower to decode and parse
    const cjk = "漢".repeat(2.5 * MiB);
    const wide = await measure(() => call(chatBody(cjk)));
    expect(wide.a!.status).toBe(200);
    expect((wide.a!.json.choices as { message: { content: string } }[])[0].message.content).toBe(reply(ATTACKER, cjk));
    // the same bytes as 250k tiny content parts, the validators' worst case per byte: refused by count first
    const parts = chatBody(Array.from({ length: 250_000 }, () => ({ type: "text", text: "ab" })));
    const many = await measure(() => call(parts));
    expect(many.a!.status).toBe(400);
    expect(many.a!.json.error).toMatchObject({ code: "too_many_items", param: "messages.0.content" });
    log("7.5 MiB prompt", {
      quiet: { honest: quiet.honest, loopMaxMs: quiet.loopMaxMs },
      oneMessage: { wallMs: Math.round(big.a!.ms), handlerMs: Math.round(handlerMs(big.a!)), honest: big.honest, loopMaxMs: big.loopMaxMs },
      cjk: { wallMs: Math.round(wide.a!.ms), handlerMs: Math.round(handlerMs(wide.a!)), honest: wide.honest, loopMaxMs: wide.loopMaxMs },
      parts250k: {
        MiB: +(parts.length / MiB).toFixed(1),
        wallMs: Math.round(many.a!.ms),
        handlerMs: Math.round(handlerMs(many.a!)),
        honest: many.honest,
        loopMaxMs: many.loopMaxMs,
      },
    });
    // generous: two shared cores; the point is that they complete, and the stall is of parsing's order
    expect(big.honest.max).toBeLessThan(5000);
    expect(wide.honest.max).toBeLessThan(5000);
    expect(many.honest.max).toBeLessThan(5000);
  });
});

describe("slowloris: a body trickled one byte per 100 ms", () => {
  const head = (id: string, auth: string, length: number) =>
    `POST /episodes/${id}/v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}Content-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;

  it("with the episode's key: holds only its own connection; the others call meanwhile; finished, it is answered", async () => {
    const body = chatBody("slow");
    const slow = trickle(g.port, head(ATTACKER, `Authorization: Bearer ${keyOf(ATTACKER)}\r\n`, body.length), body, 100);
    const traffic = honestTraffic(g.port, [...HONEST, ATTACKER], reply); // the same episode too: nothing is locked per episode
    await new Promise((r) => setTimeout(r, 3000));
    const { latencies, failures } = await traffic.stop();
    expect(failures).toEqual([]);
    // no gateway timeout: the connection is open until Node's requestTimeout (300 s by default)
    expect(slow.open()).toBe(true);
    expect(slow.received()).toBe("");
    log("slowloris with a key, honest latency meanwhile", { bytesSent: slow.sent(), ...latencySummary(latencies) });
    slow.rest();
    await expect.poll(() => slow.received(), { timeout: 2000 }).toContain(reply(ATTACKER, "slow"));
    slow.stop();
  });

  it("without a key: 401 on the headers, the connection closed within a second", async () => {
    const body = chatBody("slow");
    const slow = trickle(g.port, head(VICTIM, "", body.length), body, 100);
    await slow.closed;
    log("slowloris without a key", { closedMs: Math.round(slow.closedAt()), bytesSent: slow.sent() });
    expect(slow.received()).toMatch(/^HTTP\/1\.1 401 /);
    expect(slow.closedAt()).toBeLessThan(1500);
    slow.stop();
    expect(recordsOf(VICTIM)).toBe(victimBefore);
  });
});
