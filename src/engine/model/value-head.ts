// Critic value head: a small MLP on the final hidden state, V(h) = w2 . tanh(W1 h + b1) + b2.
// Tensor names follow torch's nn.Sequential(Linear, Tanh, Linear) under "value_head.".
import { native } from "../../native/binding.js";
import { ParamTable } from "../params.js";
import type { Rng } from "../../rng.js";
import { fillNormal } from "./init.js";

export interface ValueHead {
  hidden: number;
  params: ParamTable;
  grads: ParamTable;
  /** When true, value-loss gradients stop at the head and never reach the backbone. */
  detach: boolean;
}

export function valueHeadSpecs(C: number, H: number) {
  return [
    { name: "value_head.0.weight", shape: [H, C] },
    { name: "value_head.0.bias", shape: [H] },
    { name: "value_head.2.weight", shape: [1, H] },
    { name: "value_head.2.bias", shape: [1] },
  ];
}

export function createValueHead(C: number, H: number, rng: Rng, detach = false): ValueHead {
  const params = new ParamTable(valueHeadSpecs(C, H));
  fillNormal(params.get("value_head.0.weight"), rng, 1 / Math.sqrt(C));
  fillNormal(params.get("value_head.2.weight"), rng, 1 / Math.sqrt(H));
  return { hidden: H, params, grads: params.zerosLike(), detach };
}

/** values (M) from hs (M,C); returns the tanh activations (M,H) that backward needs. */
export function valueHeadForward(vh: ValueHead, values: Float32Array, hs: Float32Array, M: number, C: number): Float32Array {
  const kernels = native();
  const H = vh.hidden;
  const z = new Float32Array(M * H);
  kernels.matmulForward(z, hs, vh.params.get("value_head.0.weight"), vh.params.get("value_head.0.bias"), M, C, H, false);
  kernels.tanhForward(z, z, M * H);
  kernels.matmulForward(values, z, vh.params.get("value_head.2.weight"), vh.params.get("value_head.2.bias"), M, H, 1, false);
  return z;
}

/** Accumulates head gradients from dvalues (M); adds into dhs (M,C) unless the head is detached. */
export function valueHeadBackward(
  vh: ValueHead,
  dhs: Float32Array,
  dvalues: Float32Array,
  hs: Float32Array,
  z: Float32Array,
  M: number,
  C: number,
): void {
  const kernels = native();
  const H = vh.hidden;
  const p = vh.params;
  const g = vh.grads;
  const dz = new Float32Array(M * H);
  kernels.matmulBackward(dz, g.get("value_head.2.weight"), g.get("value_head.2.bias"), dvalues, z, p.get("value_head.2.weight"), M, H, 1);
  const dpre = new Float32Array(M * H);
  kernels.tanhBackward(dpre, dz, z, M * H);
  kernels.matmulBackward(
    vh.detach ? null : dhs,
    g.get("value_head.0.weight"),
    g.get("value_head.0.bias"),
    dpre,
    hs,
    p.get("value_head.0.weight"),
    M,
    C,
    H,
  );
}
