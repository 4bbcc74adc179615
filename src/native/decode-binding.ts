// Typed access to the KV-cache sampler's kernels (native/decode.cc), loaded from the same addon as
// the training kernels. It adds no logic: src/engine/generate/ checks shapes before every call.
import { MasoError } from "../errors.js";
import { native } from "./binding.js";

type F32 = Float32Array;
type I32 = Int32Array;

/** Raw decode bindings; argument order mirrors native/decode.cc. */
export interface DecodeKernels {
  /** kc[slots[n]] = k[n], vc[slots[n]] = v[n]; rows of W floats; pools hold `rows` rows. */
  kvCacheWrite(kc: F32, vc: F32, k: F32, v: F32, slots: I32, N: number, W: number, rows: number): void;
  /**
   * out (B,NH,HS): each sequence's query attends to its first lens[b] cached positions, found in
   * blocks table[tableStarts[b] ..] of BS positions each; pools kc, vc hold P blocks.
   */
  attentionDecode(
    out: F32,
    q: F32,
    kc: F32,
    vc: F32,
    table: I32,
    tableStarts: I32,
    lens: I32,
    B: number,
    NH: number,
    KVH: number,
    HS: number,
    BS: number,
    P: number,
  ): void;
  /** The per-head reference loop of {@link DecodeKernels.attentionDecode}, same arguments. */
  attentionDecodeNaive: DecodeKernels["attentionDecode"];
  /** out[i] = exp(x[i]) for x[i] <= 0, by the exp of attentionDecode's softmax (for its accuracy test). */
  expNonpos(out: F32, x: F32, n: number): void;
}

let checked: DecodeKernels | undefined;

/** The decode kernels; throws MasoError NATIVE_STALE when the built addon predates them. */
export function decodeKernels(): DecodeKernels {
  if (checked) return checked;
  const addon = native() as unknown as Partial<DecodeKernels>;
  if (typeof addon.attentionDecode !== "function" || typeof addon.kvCacheWrite !== "function") {
    throw new MasoError("NATIVE_STALE", "the native addon has no decode kernels", "rebuild it with `npm run install`");
  }
  checked = addon as DecodeKernels;
  return checked;
}
