// The run key: a secret of one run, separate from the NATS server's credentials, that seals every
// message and KV value maso sends. A client holding only the server token can connect and
// subscribe, but without the run key it can read no body (AES-256-GCM encrypts it) and forge none
// (GCM's tag authenticates the body together with the subject, the sender and a per-sender
// sequence number, so a message moved to another subject or replayed is refused as well).
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import type { ErrorCode } from "../error-codes.js";
import { MasoError } from "../errors.js";

/** The environment variable that gives a controller or an attached worker the run key. */
export const RUN_KEY_ENV = "MASO_RUN_KEY";

const VERSION = 1;
const IV = 12;
const TAG = 16;
const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

/** A fresh run key: 32 random bytes as 64 hex digits. */
export const newRunKey = (): string => randomBytes(32).toString("hex");

/** Checks a run key's form (64 hex digits) and returns its bytes. */
export function parseRunKey(hex: string, code: ErrorCode): Buffer {
  if (!/^[0-9a-fA-F]{64}$/.test(hex.trim()))
    throw new MasoError(code, `${RUN_KEY_ENV} is not a run key`, "a run key is 64 hex digits, e.g. from 'openssl rand -hex 32'");
  return Buffer.from(hex.trim(), "hex");
}

/** The run key from MASO_RUN_KEY; `code` names the error when it is unset or malformed. */
export function runKeyFromEnv(env: NodeJS.ProcessEnv, code: ErrorCode, who: string): Buffer {
  const hex = env[RUN_KEY_ENV];
  if (!hex)
    throw new MasoError(
      code,
      `${who} needs the run key in ${RUN_KEY_ENV}`,
      `set ${RUN_KEY_ENV} to the same 64 hex digits (e.g. from 'openssl rand -hex 32') for the controller and every attached worker`,
    );
  return parseRunKey(hex, code);
}

/** sha256 of a file's bytes, hex (the workflow module a worker may import). */
export const fileSha256 = (path: string): string => createHash("sha256").update(readFileSync(path)).digest("hex");

/** sha256 of bytes, hex. */
export const sha256 = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

/** An opened message: who sealed it, its sequence number and its body. */
export interface Opened {
  sender: string;
  seq: number;
  body: Uint8Array;
}

export interface Sealer {
  /** This endpoint's identity, authenticated in every message it seals (e.g. "coder/1#3fa2…"). */
  readonly sender: string;
  /** Encrypts `body` for `context` (the subject and what binds it); returns the envelope and its sequence number. */
  seal(context: string, body: Uint8Array): { bytes: Uint8Array; seq: number };
  /**
   * The body, or null when the envelope is not sealed with this key for `context`, or replays an
   * earlier message of its sender (`again`: the same message may be read twice, as a KV value is).
   */
  open(context: string, sealed: Uint8Array, again?: boolean): Opened | null;
  /**
   * The body of a message kept on the server under a subject of its own (a checkpoint part's
   * chunk), or null when it is not sealed with this key for `context`. No replay check: its
   * sequence number falls among the sender's earlier messages, and its context is unique already.
   */
  openStored(context: string, sealed: Uint8Array): Opened | null;
  /** Messages refused so far. */
  rejected(): number;
}

/**
 * Seals and opens envelopes `[version][sender length][sender][seq: u64][iv][tag][ciphertext]`;
 * the associated data is the context and everything before the tag. Replays are refused by a
 * per-sender high-water mark: memory grows with the run's senders only, since a sender is recorded
 * after its message authenticated. `onReject` hears the first refusal of each kind.
 * @example
 * const s = runSealer(key, "controller#ab12"); const { bytes } = s.seal("req maso.r1.coder.0.state", body);
 */
export function runSealer(key: Buffer, sender: string, onReject?: (why: string) => void): Sealer {
  const id = utf8.encode(sender);
  if (id.length > 255) throw new MasoError("RUN_KEY_SENDER", `sender id ${sender} is too long`, "");
  let next = 0;
  let rejected = 0;
  const told = new Set<string>();
  const seen = new Map<string, number>();
  const refuse = (kind: string, why: string): null => {
    rejected++;
    if (!told.has(kind)) {
      told.add(kind);
      onReject?.(why);
    }
    return null;
  };
  /** The opened envelope, or null (counted, told once) when it is not sealed with this key for `context`. */
  const decrypt = (context: string, sealed: Uint8Array): Opened | null => {
    const b = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
    const what = `a message on ${context.split(" ")[1] ?? context}`;
    const forged = () =>
      refuse(
        "forged",
        `${what} is not sealed with this run's key (a client without ${RUN_KEY_ENV}, or another run's key): dropped; later ones are dropped silently`,
      );
    if (b.length < 2 || b[0] !== VERSION) return forged();
    const n = b[1];
    const headLen = 2 + n + 8 + IV;
    if (b.length < headLen + TAG) return forged();
    const from = fromUtf8.decode(b.subarray(2, 2 + n));
    const seq = Number(b.readBigUInt64BE(2 + n));
    let body: Buffer;
    try {
      const d = createDecipheriv("aes-256-gcm", key, b.subarray(2 + n + 8, headLen));
      d.setAAD(Buffer.concat([utf8.encode(context), b.subarray(0, headLen)]));
      d.setAuthTag(b.subarray(headLen, headLen + TAG));
      const out = d.update(b.subarray(headLen + TAG));
      const last = d.final(); // empty for GCM: skip a copy of a large body
      body = last.length ? Buffer.concat([out, last]) : out;
    } catch {
      return forged();
    }
    return { sender: from, seq, body: new Uint8Array(body.buffer, body.byteOffset, body.byteLength) };
  };
  return {
    sender,
    seal(context, body) {
      const seq = next++;
      const head = Buffer.alloc(2 + id.length + 8 + IV);
      head[0] = VERSION;
      head[1] = id.length;
      head.set(id, 2);
      head.writeBigUInt64BE(BigInt(seq), 2 + id.length);
      randomBytes(IV).copy(head, 2 + id.length + 8);
      const c = createCipheriv("aes-256-gcm", key, head.subarray(2 + id.length + 8));
      c.setAAD(Buffer.concat([utf8.encode(context), head]));
      // weights messages are large: encrypt once, straight into the envelope's buffer
      const ct = c.update(body);
      const last = c.final();
      const out = Buffer.allocUnsafe(head.length + TAG + ct.length + last.length);
      head.copy(out, 0);
      c.getAuthTag().copy(out, head.length);
      ct.copy(out, head.length + TAG);
      last.copy(out, head.length + TAG + ct.length);
      return { bytes: out, seq };
    },
    open(context, sealed, again = false) {
      const m = decrypt(context, sealed);
      if (!m) return null;
      const high = seen.get(m.sender);
      const what = `a message on ${context.split(" ")[1] ?? context}`;
      if (high !== undefined && (again ? m.seq < high : m.seq <= high))
        return refuse("replayed", `${what} from ${m.sender} replays message ${m.seq} (seen up to ${high}): dropped`);
      seen.set(m.sender, m.seq);
      return m;
    },
    openStored: (context, sealed) => decrypt(context, sealed),
    rejected: () => rejected,
  };
}

/** A sender id: who, plus random digits so two processes (or two starts) never share a sequence. */
export const senderId = (who: string): string => `${who}#${randomBytes(6).toString("hex")}`;

/** The model and rank a worker's sender id names, or null (the controller, a heartbeat). */
export function senderAddress(sender: string): { model: string; rank: number } | null {
  const m = /^([A-Za-z0-9_-]+)\/(\d+)#[0-9a-f]+$/.exec(sender);
  return m ? { model: m[1], rank: Number(m[2]) } : null;
}

/** Seals a KV value of `bucket`/`key`. */
export const sealKv = (s: Sealer, bucket: string, key: string, value: unknown): Uint8Array =>
  s.seal(`kv ${bucket}.${key}`, utf8.encode(JSON.stringify(value))).bytes;

/** Opens a KV value of `bucket`/`key` (the same value may be read again), or null. */
export function openKv<T>(s: Sealer, bucket: string, key: string, value: Uint8Array): T | null {
  const o = s.open(`kv ${bucket}.${key}`, value, true);
  return o ? (JSON.parse(fromUtf8.decode(o.body)) as T) : null;
}
