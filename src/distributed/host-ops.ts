// The operations a worker process offers beyond WorkerGroupApi: checkpoint parts (written and read
// in place on a shared file system, else carried over JetStream), the weight-sync barrier of generation replicas, and replica-to-rank-0 traffic. Types
// only, shared by the worker host and the NATS transport.
import type { SampleRecord } from "../runtime/worker-group/worker-group.js";
import type { PartTransfer } from "./part-transfer.js";
import type { PinWeightsRequest } from "./pinned-weights.js";

export interface HelloResponse {
  model: string;
  rank: number;
  roles: string[];
  updates: number;
  /** Weights version: bumped by every update or checkpoint load on rank 0, copied by replicas (under asynchronous RL, the version they were pinned to last). */
  version: number;
  pid: number;
  /** Role calls this rank generated. */
  generated: number;
  /** The controller start whose published config built this worker. */
  session: string;
  /** Data-parallel ranks above 0: the samples this rank scored and the minibatch shares it trained. */
  shares?: { scored: number; trained: number };
}

/** A checkpoint part's directory, relative to the worker's run directory. */
export interface PartLocation {
  /** e.g. checkpoints/.tmp-000010 (save) or checkpoints/step-000010 (load) */
  checkpoint: string;
  part: string;
}

export interface PartSaveRequest extends PartLocation {
  /**
   * A file `.maso-probe-<probe>` the controller wrote in the part's directory, holding `probe`: a
   * worker that reads it there sees the controller's run directory and writes in place; any other
   * writes locally and uploads the files. Absent (a controller from before parts could travel): in place.
   */
  probe?: string;
}

export interface PartSaveResponse {
  saved: true;
  /** The uploaded files, when the part was not written in place. */
  transfer?: PartTransfer;
}

export interface PartLoadRequest extends PartLocation {
  /** sha256 of the checkpoint's manifest.json: a worker finding the same file at `checkpoint` reads in place (absent: in place). */
  manifestSha256?: string;
  /** The checkpoint's manifest.json and the part's files, uploaded when the worker could not see them. */
  transfer?: PartTransfer;
}

/** `needsFiles`: the worker cannot see the checkpoint; send it the files (a transfer). */
export type PartLoadResponse = { version: number; needsFiles?: false } | { needsFiles: true };

/** The update barrier's request to a replica: rank 0's version and digest, and what changed rank 0's weights. */
export interface SyncRequest {
  version: number;
  sha256: string;
  /** "update" (absent from an older controller) or "load" (a checkpoint). */
  after?: "update" | "load";
}

export interface HostOps {
  hello(req: Record<string, never>): Promise<HelloResponse>;
  checkpointSave(req: PartSaveRequest): Promise<PartSaveResponse>;
  checkpointLoad(req: PartLoadRequest): Promise<PartLoadResponse>;
  /**
   * Rank 0: the version and sha256 of the weights a replica would fetch now (data-parallel: of its
   * trained units); with `version` (asynchronous RL), of the generation weights it keeps as that version.
   */
  weightsDigest(req: { version?: number }): Promise<{ version: number; sha256: string }>;
  /**
   * Replicas: fetch rank 0's weights of `version` worker-to-worker, check their sha256, and serve
   * them from now on. Data-parallel ranks check their own trained units against the digest instead
   * (after a checkpoint load, first taking rank 0's training state).
   */
  syncWeights(req: SyncRequest): Promise<{ version: number }>;
  /**
   * Replicas under asynchronous RL: generate from rank 0's kept weights of `version` (fetched
   * worker-to-worker and checked by `sha256` unless already served) for `batch`, as rank 0 does.
   */
  pinWeights(req: PinWeightsRequest): Promise<{ version: number }>;
  /** Rank 0, from a replica: cache a sample the replica generated; returns its id on rank 0. */
  adopt(req: SampleRecord): Promise<{ id: number }>;
  /** Replies, then the worker process exits. */
  shutdown(req: Record<string, never>): Promise<{ stopping: true }>;
}

export type HostOp = keyof HostOps;

/** Binary op: rank 0 sends its packed weights of a version to a replica (see weights.ts); with `kept: true`, its kept generation weights of that version (pinned-weights.ts). */
export const WEIGHTS_OP = "weights";
