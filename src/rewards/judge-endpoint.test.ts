import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MasoError } from "../errors.js";
import { type JudgeEndpoint, judgeClient } from "./judge-endpoint.js";
import { JUDGE_BODY_CAP } from "./judge-http.js";

interface Seen {
  url: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}
interface Fake {
  baseURL: string;
  seen: Seen[];
  maxInFlight: number;
  server: Server;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((done) => s.close(done));
  }
});

/** A real HTTP server on 127.0.0.1; `answer` gets the n-th request (0-based) and its parsed body. */
async function fake(answer: (res: ServerResponse, n: number, body: unknown) => void): Promise<Fake> {
  const f: Fake = { baseURL: "", seen: [], maxInFlight: 0, server: createServer() };
  let inFlight = 0;
  f.server.on("request", (req, res) => {
    inFlight++;
    f.maxInFlight = Math.max(f.maxInFlight, inFlight);
    res.on("close", () => inFlight--);
    let text = "";
    req.on("data", (c) => (text += c));
    req.on("end", () => {
      const body = JSON.parse(text);
      f.seen.push({ url: req.url ?? "", headers: req.headers, body });
      answer(res, f.seen.length - 1, body);
    });
  });
  servers.push(f.server);
  await new Promise<void>((done) => f.server.listen(0, "127.0.0.1", done));
  f.baseURL = `http://127.0.0.1:${(f.server.address() as AddressInfo).port}`;
  return f;
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(typeof body === "string" ? body : JSON.stringify(body));
};
const openaiOk = (content: string | null) => ({
  id: "x",
  choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
});
const sampling = { maxTokens: 16, temperature: 0 };
const quick: Partial<JudgeEndpoint> = { timeoutMs: 2000, retries: 2, backoffMs: 5 };

async function failure(p: Promise<unknown>): Promise<MasoError> {
  const e = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(e).toBeInstanceOf(MasoError);
  return e as MasoError;
}

describe("judgeClient over OpenAI chat completions", () => {
  it("sends the exact body and headers, and returns choices[0].message.content", async () => {
    const f = await fake((res) => json(res, 200, openaiOk("Score: 7")));
    const judge = judgeClient({
      api: "openai",
      baseURL: `${f.baseURL}/v1/`,
      model: "gpt-judge",
      apiKey: "k1",
      headers: { "x-extra": "1" },
    });
    const input = [
      { role: "system" as const, content: "You grade." },
      { role: "user" as const, content: "2+2=4" },
    ];
    const call = await judge.complete(input, { maxTokens: 32, temperature: 0.5 });
    expect(call).toMatchObject({ text: "Score: 7", cached: false, attempts: 1 });
    expect(f.seen[0].url).toBe("/v1/chat/completions");
    expect(f.seen[0].body).toEqual({ model: "gpt-judge", messages: input, max_tokens: 32, temperature: 0.5 });
    expect(f.seen[0].headers).toMatchObject({ authorization: "Bearer k1", "content-type": "application/json", "x-extra": "1" });
    expect(f.seen[0].headers["x-api-key"]).toBeUndefined();
    expect(judge.stats()).toEqual({ calls: 1, cacheHits: 0, retries: 0 });
  });

  it("turns a string into one user message and sends no auth header without a key", async () => {
    const f = await fake((res) => json(res, 200, openaiOk("ok")));
    const judge = judgeClient({ api: "openai", baseURL: f.baseURL, model: "m", apiKeyEnv: "MASO_TEST_NO_SUCH_KEY" });
    await judge.complete("Grade this.", sampling);
    expect(f.seen[0].body).toEqual({ model: "m", messages: [{ role: "user", content: "Grade this." }], max_tokens: 16, temperature: 0 });
    expect(f.seen[0].headers.authorization).toBeUndefined();
  });

  it("calls null content, missing choices and bad JSON JUDGE_RESPONSE, without retrying", async () => {
    const bodies = [openaiOk(null), { choices: [] }, { error: "?" }, "{not json", { choices: [{ message: { content: 3 } }] }];
    for (const b of bodies) {
      const f = await fake((res) => json(res, 200, b));
      const e = await failure(judgeClient({ api: "openai", baseURL: f.baseURL, model: "m", ...quick }).complete("q", sampling));
      expect(e.code).toBe("JUDGE_RESPONSE");
      expect(e.message).toContain(f.baseURL);
      expect(f.seen).toHaveLength(1);
    }
  });

  it("refuses tool turns (they need call ids a judge prompt has not got)", async () => {
    const judge = judgeClient({ api: "openai", baseURL: "http://127.0.0.1:9", model: "m" });
    const e = await failure(judge.complete([{ role: "tool", content: "x", tool_call_id: "1" }], sampling));
    expect(e.code).toBe("JUDGE_INPUT");
  });
});

describe("judgeClient over Anthropic messages", () => {
  it("puts system text at the top level, sends x-api-key and the version, and joins text blocks", async () => {
    const f = await fake((res) =>
      json(res, 200, {
        type: "message",
        content: [
          { type: "thinking", thinking: "hmm", signature: "" },
          { type: "text", text: "Score" },
          { type: "text", text: ": 9" },
        ],
      }),
    );
    const judge = judgeClient({ api: "anthropic", baseURL: f.baseURL, model: "claude-judge", apiKey: "ak" });
    const call = await judge.complete(
      [
        { role: "system", content: "Be strict." },
        { role: "user", content: "Essay" },
      ],
      { maxTokens: 64, temperature: 1 },
    );
    expect(call.text).toBe("Score: 9");
    expect(f.seen[0].url).toBe("/v1/messages");
    expect(f.seen[0].body).toEqual({
      model: "claude-judge",
      max_tokens: 64,
      temperature: 1,
      system: "Be strict.",
      messages: [{ role: "user", content: "Essay" }],
    });
    expect(f.seen[0].headers).toMatchObject({ "x-api-key": "ak", "anthropic-version": "2023-06-01" });
    expect(f.seen[0].headers.authorization).toBeUndefined();
  });

  it("does not double /v1 when baseURL ends with it, and rejects a body without content[]", async () => {
    const f = await fake((res) => json(res, 200, { type: "message" }));
    const e = await failure(judgeClient({ api: "anthropic", baseURL: `${f.baseURL}/v1`, model: "m" }).complete("q", sampling));
    expect(f.seen[0].url).toBe("/v1/messages");
    expect(e.code).toBe("JUDGE_RESPONSE");
  });
});

describe("judgeClient retries and bounds", () => {
  it("retries a 500 and succeeds on the second attempt", async () => {
    const f = await fake((res, n) => (n === 0 ? json(res, 500, { error: "boom" }) : json(res, 200, openaiOk("fine"))));
    const judge = judgeClient({ api: "openai", baseURL: f.baseURL, model: "m", ...quick });
    const call = await judge.complete("q", sampling);
    expect(call).toMatchObject({ text: "fine", attempts: 2 });
    expect(judge.stats()).toEqual({ calls: 1, cacheHits: 0, retries: 1 });
  });

  it("does not retry a 400, and reports status and body", async () => {
    const f = await fake((res) => json(res, 400, { error: { message: "bad max_tokens" } }));
    const e = await failure(judgeClient({ api: "openai", baseURL: f.baseURL, model: "m", ...quick }).complete("q", sampling));
    expect(e.code).toBe("JUDGE_HTTP");
    expect(e.message).toContain("HTTP 400");
    expect(e.message).toContain("bad max_tokens");
    expect(e.message).toContain(`${f.baseURL}/chat/completions`);
    expect(f.seen).toHaveLength(1);
  });

  it("gives up on a server that never answers within timeoutMs x (retries + 1) + backoff", async () => {
    const f = await fake(() => {});
    const judge = judgeClient({ api: "openai", baseURL: f.baseURL, model: "m", timeoutMs: 150, retries: 1, backoffMs: 10 });
    const t0 = performance.now();
    const e = await failure(judge.complete("q", sampling));
    expect(e.code).toBe("JUDGE_TIMEOUT");
    // bounded, with room for a loaded machine: a hang would run to the test's own timeout
    expect(performance.now() - t0).toBeLessThan(150 * 2 + 10 * 1.25 + 4000);
    expect(f.seen).toHaveLength(2);
  });

  it("times out a server that sends headers and then hangs mid-body", async () => {
    const f = await fake((res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"choices":[{"mess');
    });
    const t0 = performance.now();
    const e = await failure(
      judgeClient({ api: "openai", baseURL: f.baseURL, model: "m", timeoutMs: 200, retries: 0 }).complete("q", sampling),
    );
    expect(e.code).toBe("JUDGE_TIMEOUT");
    expect(performance.now() - t0).toBeLessThan(200 + 4000);
  });

  it("honours Retry-After: 0 on a 429 instead of its long backoff", async () => {
    const f = await fake((res, n) =>
      n === 0 ? json(res, 429, { error: "slow down" }, { "retry-after": "0" }) : json(res, 200, openaiOk("ok")),
    );
    const judge = judgeClient({ api: "openai", baseURL: f.baseURL, model: "m", backoffMs: 20_000 });
    const t0 = performance.now();
    expect(await judge.complete("q", sampling)).toMatchObject({ text: "ok", attempts: 2 });
    expect(performance.now() - t0).toBeLessThan(10_000); // the backoff alone would be 20 s
  });

  it("refuses a body over the cap, streamed or declared", async () => {
    const big = JSON.stringify(openaiOk("x".repeat(JUDGE_BODY_CAP + 10)));
    for (const declared of [false, true]) {
      const f = await fake((res) => {
        res.writeHead(200, declared ? { "content-length": String(Buffer.byteLength(big)) } : {});
        res.end(big);
      });
      const e = await failure(judgeClient({ api: "openai", baseURL: f.baseURL, model: "m", ...quick }).complete("q", sampling));
      expect(e.code).toBe("JUDGE_RESPONSE");
      expect(e.message).toContain("bytes");
      expect(f.seen).toHaveLength(1);
    }
  });

  it("calls a refused connection JUDGE_NETWORK", async () => {
    const f = await fake(() => {});
    const baseURL = f.baseURL;
    await new Promise((done) => f.server.close(done));
    const e = await failure(judgeClient({ api: "openai", baseURL, model: "m", retries: 1, backoffMs: 1 }).complete("q", sampling));
    expect(e.code).toBe("JUDGE_NETWORK");
    expect(e.message).toContain(baseURL);
  });

  it("keeps at most `concurrency` requests in flight", async () => {
    const f = await fake((res) => setTimeout(() => json(res, 200, openaiOk("ok")), 30));
    const judge = judgeClient({ api: "openai", baseURL: f.baseURL, model: "m", concurrency: 3 });
    const calls = await Promise.all(Array.from({ length: 10 }, (_, i) => judge.complete(`q${i}`, sampling)));
    expect(calls.every((c) => c.text === "ok")).toBe(true);
    expect(f.seen).toHaveLength(10);
    expect(f.maxInFlight).toBe(3);
  });
});

describe("judgeClient cache", () => {
  it("answers an identical request from the cache, and a different one from the server", async () => {
    const f = await fake((res, n) => json(res, 200, openaiOk(`answer ${n}`)));
    const judge = judgeClient({ api: "openai", baseURL: f.baseURL, model: "m" });
    const a = await judge.complete("q", sampling);
    const b = await judge.complete([{ role: "user", content: "q" }], sampling);
    expect(a).toMatchObject({ text: "answer 0", cached: false });
    expect(b).toMatchObject({ text: "answer 0", cached: true, attempts: 0 });
    expect((await judge.complete("q", { ...sampling, temperature: 1 })).text).toBe("answer 1");
    expect(f.seen).toHaveLength(2);
    expect(judge.stats()).toEqual({ calls: 2, cacheHits: 1, retries: 0 });
  });

  it("shares one in-flight request between concurrent identical calls", async () => {
    const f = await fake((res) => setTimeout(() => json(res, 200, openaiOk("once")), 30));
    const judge = judgeClient({ api: "openai", baseURL: f.baseURL, model: "m" });
    const [a, b] = await Promise.all([judge.complete("q", sampling), judge.complete("q", sampling)]);
    expect([a.text, b.text]).toEqual(["once", "once"]);
    expect([a.cached, b.cached]).toEqual([false, true]);
    expect(f.seen).toHaveLength(1);
    expect(judge.stats()).toMatchObject({ calls: 1, cacheHits: 1 });
  });

  it("does not cache failures, and cacheEntries 0 turns the cache off", async () => {
    const f = await fake((res, n) => (n === 0 ? json(res, 400, "no") : json(res, 200, openaiOk("ok"))));
    const judge = judgeClient({ api: "openai", baseURL: f.baseURL, model: "m", cacheEntries: 0 });
    await failure(judge.complete("q", sampling));
    expect((await judge.complete("q", sampling)).cached).toBe(false);
    expect((await judge.complete("q", sampling)).cached).toBe(false);
    expect(f.seen).toHaveLength(3);
  });
});

describe("judgeClient keys and footprint", () => {
  it("reads the key from the env var and never puts it in an error, even when the server echoes it", async () => {
    const key = "sk-test-secret-0123456789";
    process.env.MASO_JUDGE_TEST_KEY = key;
    try {
      const f = await fake((res, _n) => json(res, 401, { error: "bad key", got: f.seen[0].headers.authorization }));
      const e = await failure(
        judgeClient({ api: "openai", baseURL: f.baseURL, model: "m", apiKeyEnv: "MASO_JUDGE_TEST_KEY" }).complete("q", sampling),
      );
      expect(f.seen[0].headers.authorization).toBe(`Bearer ${key}`);
      expect(e.code).toBe("JUDGE_HTTP");
      expect(e.message).not.toContain(key);
      expect(e.message).toContain("***");
    } finally {
      delete process.env.MASO_JUDGE_TEST_KEY;
    }
  });

  it("uses plain fetch: no provider SDK among its imports", () => {
    for (const file of ["judge-endpoint.ts", "judge-http.ts", "judge-wire.ts"]) {
      const text = readFileSync(join(import.meta.dirname, file), "utf8");
      const specs = [...text.matchAll(/from\s+"([^"]+)"/g)].map((m) => m[1]);
      expect(specs.filter((s) => !s.startsWith(".") && !s.startsWith("node:") && s !== "zod")).toEqual([]);
    }
  });

  it("leaves nothing holding a process open after calls settle (success and timeout)", async () => {
    // the second request gets headers and half a body, then nothing
    const f = await fake((res, n) => (n === 0 ? json(res, 200, openaiOk("ok")) : res.writeHead(200).write("{")));
    f.server.keepAliveTimeout = 60_000; // a kept-alive socket the client did not let go would hold the child
    const code = `
      import { judgeClient } from ${JSON.stringify(join(import.meta.dirname, "judge-endpoint.ts"))};
      const at = (timeoutMs) => judgeClient({ api: "openai", baseURL: ${JSON.stringify(f.baseURL)}, model: "m", timeoutMs, retries: 0 });
      console.log((await at(30_000).complete("a", { maxTokens: 1, temperature: 0 })).text);
      console.log(await at(300).complete("b", { maxTokens: 1, temperature: 0 }).catch((e) => e.code));
      globalThis.settled = performance.now();
      process.on("exit", () => console.log("linger", Math.round(performance.now() - globalThis.settled)));
    `;
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (c) => (out += c));
    child.stderr.on("data", (c) => (out += c));
    const kill = setTimeout(() => child.kill(), 15_000); // a held-open child fails here, not at the test timeout
    const exit = await new Promise<number | null>((done) => child.on("exit", done));
    clearTimeout(kill);
    expect(out).toContain("ok\nJUDGE_TIMEOUT\n");
    expect(exit).toBe(0);
    const linger = Number(/linger (\d+)/.exec(out)?.[1]);
    expect(linger).toBeLessThan(1000);
  });
});
