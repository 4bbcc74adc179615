// Raw HTTP for the gateway's hostile-client tests: requests with any Host, content type or framing
// (chunked floods, a Content-Length that lies, a body trickled byte by byte), timed; and honest
// traffic that checks its own answers while an attack runs. Test support only.

import http from "node:http";
import net from "node:net";

/** What the server answered, and how long it took (ms from the request's start). */
export interface Answer {
  status: number;
  /** The body parsed as JSON, or null when it is not JSON. */
  json: { error?: { code?: string; type?: string; message?: string } } & Record<string, unknown>;
  headers: http.IncomingHttpHeaders;
  ms: number;
}

export interface SendOptions {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

/** One request on a fresh connection (any Host header; Content-Length set from `body`). */
export function send(port: number, o: SendOptions): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request(
      { host: "127.0.0.1", port, path: o.path, method: o.method ?? "POST", agent: false, headers: o.headers ?? {} },
      (res) => {
        const parts: Buffer[] = [];
        res.on("data", (d: Buffer) => parts.push(d));
        res.on("end", () => {
          const text = Buffer.concat(parts).toString("utf8");
          let json: Answer["json"];
          try {
            json = JSON.parse(text);
          } catch {
            json = {};
          }
          resolve({ status: res.statusCode ?? 0, json, headers: res.headers, ms: performance.now() - t0 });
        });
      },
    );
    req.on("error", reject);
    req.end(o.body);
  });
}

/** What a flood achieved: the answer, and how many body bytes the server let the client hand over. */
export interface FloodResult {
  status: number;
  json: Answer["json"];
  /** Body bytes the client's socket accepted (what the server read, plus the kernel's buffers). */
  flushed: number;
  /** ms to the answer's first byte, and to the connection's close. */
  answeredMs: number;
  closedMs: number;
}

/**
 * Streams `total` bytes of filler (spaces, or the byte `fill`) after `prefix` as fast as the server
 * takes them, chunked unless `headers` declares a Content-Length, on a raw socket: like a hostile
 * client it ignores the answer and keeps sending until the server closes the connection.
 */
export function flood(
  port: number,
  o: { path: string; headers: Record<string, string>; total: number; prefix?: string; fill?: number },
): Promise<FloodResult> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const chunked = !Object.keys(o.headers).some((h) => h.toLowerCase() === "content-length");
    const filler = Buffer.alloc(64 << 10, o.fill ?? 0x20);
    const frame = (b: Buffer) => (chunked ? Buffer.concat([Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from("\r\n")]) : b);
    const chunk = frame(filler);
    const r: FloodResult = { status: 0, json: {}, flushed: 0, answeredMs: -1, closedMs: -1 };
    let text = "";
    let queued = 0;
    let closed = false;
    const s = net.connect(port, "127.0.0.1");
    s.on("data", (d) => {
      if (r.answeredMs < 0) r.answeredMs = performance.now() - t0;
      text += d.toString("utf8");
    });
    s.on("error", () => {}); // EPIPE / ECONNRESET once the server stops reading: expected
    s.on("close", () => {
      closed = true;
      r.closedMs = performance.now() - t0;
      r.status = Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1] ?? 0);
      try {
        r.json = JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4));
      } catch {
        r.json = {};
      }
      resolve(r);
    });
    const headers = { host: "127.0.0.1", ...o.headers, ...(chunked && { "transfer-encoding": "chunked" }) };
    s.write(
      `POST ${o.path} HTTP/1.1\r\n${Object.entries(headers)
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join("")}\r\n`,
    );
    if (o.prefix) s.write(frame(Buffer.from(o.prefix)));
    const pump = () => {
      while (!closed && queued < o.total) {
        queued += filler.length;
        const more = s.write(chunk, (e) => {
          if (!e) r.flushed += filler.length;
        });
        if (!more) return void s.once("drain", pump);
      }
      if (!closed) s.end(chunked ? "0\r\n\r\n" : "");
    };
    pump();
  });
}

/** Bytes written on a raw socket, and everything the server sent back until it closed (or `waitMs`). */
export function exchange(port: number, data: (string | Buffer)[], waitMs = 2000): Promise<{ text: string; closedByServer: boolean }> {
  return new Promise((resolve) => {
    const s = net.connect(port, "127.0.0.1");
    let text = "";
    let timedOut = false;
    s.on("data", (d) => {
      text += d.toString("latin1");
    });
    s.on("error", () => {});
    s.on("close", () => {
      clearTimeout(timer);
      resolve({ text, closedByServer: !timedOut });
    });
    const timer = setTimeout(() => {
      timedOut = true;
      s.destroy();
    }, waitMs);
    void (async () => {
      for (const d of data) if (!s.destroyed && !s.write(d)) await new Promise((r) => s.once("drain", r));
    })();
  });
}

/** A request whose body arrives one byte per `intervalMs` (slowloris); `rest()` sends the remainder at once. */
export function trickle(port: number, head: string, body: string, intervalMs: number) {
  const s = net.connect(port, "127.0.0.1");
  let text = "";
  let sent = 0;
  let closedAt = -1;
  const t0 = performance.now();
  s.on("data", (d) => {
    text += d.toString("utf8");
  });
  s.on("error", () => {});
  const closed = new Promise<void>((resolve) =>
    s.on("close", () => {
      closedAt = performance.now() - t0;
      resolve();
    }),
  );
  s.write(head);
  const timer = setInterval(() => {
    if (sent < body.length && !s.destroyed) s.write(body[sent++]);
  }, intervalMs);
  return {
    sent: () => sent,
    open: () => !s.destroyed && closedAt < 0,
    received: () => text,
    closed,
    closedAt: () => closedAt,
    /** Stops trickling and sends the rest of the body. */
    rest() {
      clearInterval(timer);
      s.write(body.slice(sent));
      sent = body.length;
    },
    stop() {
      clearInterval(timer);
      s.destroy();
    },
  };
}

/** A small chat call's body for role `model`. */
export const chatBody = (content: string | unknown[], model = "coder") => JSON.stringify({ model, messages: [{ role: "user", content }] });

/** Honest episodes calling in a loop, each answer checked against `expected`; at least one call each. */
export function honestTraffic(port: number, ids: readonly string[], expected: (id: string, prompt: string) => string) {
  let stopping = false;
  const latencies: number[] = [];
  const failures: string[] = [];
  const loops = ids.map(async (id) => {
    let i = 0;
    do {
      const prompt = `${id} asks ${i++}`;
      try {
        const a = await send(port, {
          path: `/episodes/${id}/v1/chat/completions`,
          headers: { authorization: `Bearer sk-${id}`, "content-type": "application/json" },
          body: chatBody(prompt),
        });
        const content = (a.json.choices as { message: { content: string } }[] | undefined)?.[0]?.message.content;
        if (a.status !== 200 || content !== expected(id, prompt))
          failures.push(`${id}: ${a.status} ${JSON.stringify(a.json).slice(0, 200)}`);
        else latencies.push(a.ms);
      } catch (e) {
        failures.push(`${id}: ${(e as Error).message}`);
      }
    } while (!stopping);
  });
  return {
    async stop() {
      stopping = true;
      await Promise.all(loops);
      return { latencies, failures };
    },
  };
}

/** Median and max of latencies (ms), rounded, for the report lines. */
export function latencySummary(ms: readonly number[]): { n: number; median: number; max: number } {
  const s = [...ms].sort((a, b) => a - b);
  return { n: s.length, median: Math.round(s[Math.floor(s.length / 2)] ?? 0), max: Math.round(s.at(-1) ?? 0) };
}
