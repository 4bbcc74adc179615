// The operations a worker process offers beyond WorkerGroupApi: checkpoint parts written and read
// in place, the weight-sync barrier of generation replicas, and replica-to-rank-0 traffic. Types
// only, shared by the worker host and the NATS transport.
import type { SampleRecord } from "../runtime/worker-group.js";

export interface HelloResponse {
  model: string;
  rank: number;
  roles: string[];
  updates: number;
  /** Weights version: bumped by every update or checkpoint load on rank 0, copied by replicas. */
  version: number;
  pid: number;
  /** Role calls this rank generated. */
  generated: number;
  /** The controller start whose published config built this worker. */
  session: string;
}

/** A checkpoint part's directory, relative to the worker's run directory. */
export interface PartLocation {
  /** e.g. checkpoints/.tmp-000010 (save) or checkpoints/step-000010 (load) */
  checkpoint: string;
  part: string;
}

export interface HostOps {
  hello(req: Record<string, never>): Promise<HelloResponse>;
  checkpointSave(req: PartLocation): Promise<{ saved: true }>;
  checkpointLoad(req: PartLocation): Promise<{ version: number }>;
  /** Rank 0: the version and sha256 of the weights a replica would fetch now. */
  weightsDigest(req: Record<string, never>): Promise<{ version: number; sha256: string }>;
  /** Replicas: fetch rank 0's weights of `version` worker-to-worker, check their sha256, and serve them from now on. */
  syncWeights(req: { version: number; sha256: string }): Promise<{ version: number }>;
  /** Rank 0, from a replica: cache a sample the replica generated; returns its id on rank 0. */
  adopt(req: SampleRecord): Promise<{ id: number }>;
  /** Replies, then the worker process exits. */
  shutdown(req: Record<string, never>): Promise<{ stopping: true }>;
}

export type HostOp = keyof HostOps;

/** Binary op: rank 0 sends its packed weights of a version to a replica (see weights.ts). */
export const WEIGHTS_OP = "weights";
