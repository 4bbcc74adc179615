// Asynchronous RL over NATS: a generation replica serves the weight version the controller pinned
// for a rollout, fetched from rank 0's kept copy of it (generation-weights.ts) and taken only with
// the sha256 rank 0 announced. Rank 0 keeps a version from the update that made it until a later
// one is pinned, so a replica asked for an older version fails (WEIGHTS_STALE), never samples others.
import { MasoError } from "../errors.js";
import type { PinRequest } from "../runtime/protocol/messages.js";
import type { WorkerGroup } from "../runtime/worker-group/worker-group.js";
import { sha256 } from "./run-key.js";
import { packNamed, unpackNamed } from "./weights.js";

/** A replica's pin: the version rank 0 pinned and the sha256 of its kept weights. */
export interface PinWeightsRequest extends PinRequest {
  version: number;
  sha256: string;
}

export interface PackedVersion {
  version: number;
  bytes: Uint8Array;
  sha256: string;
}

/**
 * Packs each version once, however many replicas fetch it: the copy of the last version asked for
 * is kept, and goes before the next one is made.
 */
export function packedOnce(pack: (version: number) => Uint8Array): (version: number) => PackedVersion {
  let packed: PackedVersion | null = null;
  return (version) => {
    if (packed?.version === version) return packed;
    packed = null;
    const bytes = pack(version);
    packed = { version, bytes, sha256: sha256(bytes) };
    return packed;
  };
}

/** Rank 0: the packed generation weights kept as a version. A frozen model keeps no versions: its message carries no tensors. */
export function keptPacker(wg: WorkerGroup, label: string): (version: number) => PackedVersion {
  return packedOnce((version) => {
    const gw = wg.generationWeights;
    const tensors = gw ? gw.kept(version) : [];
    if (!tensors)
      throw new MasoError(
        "WEIGHTS_STALE",
        `${label} no longer keeps weight version ${version} (it generates from version ${gw!.version()})`,
        "a replica is pinned to the version rank 0 was pinned to last; a version before it is let go",
      );
    return packNamed(version, tensors);
  });
}

/**
 * A replica's pin: unless it generates from `req.version` already, fetches that version from rank
 * 0, checks its sha256 and keeps it, then pins it like any worker group. Returns the version pinned.
 */
export async function pinReplica(
  wg: WorkerGroup,
  label: string,
  req: PinWeightsRequest,
  fetch: (version: number) => Promise<Uint8Array>,
): Promise<{ version: number }> {
  const gw = wg.generationWeights;
  // a version number names the same weights on every rank: each controller start rebuilds every
  // rank from one config at version 0, and afterwards a replica holds only versions fetched here
  if (gw && gw.version() !== req.version) {
    const bytes = await fetch(req.version);
    if (sha256(bytes) !== req.sha256)
      throw new MasoError("WEIGHTS_HASH", `${label}: the weights from rank 0 do not have the sha256 rank 0 announced`, "");
    const got = unpackNamed(bytes);
    if (got.version !== req.version)
      throw new MasoError("WEIGHTS_STALE", `${label}: rank 0 sent weight version ${got.version} for version ${req.version}`, "");
    gw.hold(req.version, got.tensors);
  }
  return wg.pin({ version: req.version, batch: req.batch, trainedThrough: req.trainedThrough });
}
