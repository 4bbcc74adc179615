// The controller's own record of the sample each role call produced, taken as the call returns (by
// episode, node and visit), so rewards reach the samples generated for them whatever user code later
// does to a trajectory it is handed. Bookkeeping only: it never talks to a worker group itself.
import { MasoError } from "../../errors.js";
import type { TrainableRecord } from "../../rewards/combine.js";
import type { RoleCaller } from "../../workflow/role-call.js";
import type { OwnedSample, Trajectory } from "../../workflow/trajectory.js";

export type { OwnedSample };

export interface SampleLedger {
  /** `inner`, with every returned handle recorded; a result that returns after close() goes to `onLate` instead. */
  wrap(inner: RoleCaller): RoleCaller;
  /** The rollout is over: results still to come belong to no trajectory. */
  close(): void;
  get(episodeId: string, node: string, visit: number): OwnedSample | undefined;
  all(): OwnedSample[];
}

const keyOf = (episodeId: string, node: string, visit: number) => `${episodeId}\u0000${node}\u0000${visit}`;

/**
 * A ledger for one rollout.
 *
 * @example
 * const ledger = sampleLedger((late) => discard(late));
 * await runEpisodes(wf, episodes, { caller: ledger.wrap(routingCaller(cast, transport, o)) });
 * ledger.close();
 */
export function sampleLedger(onLate: (sample: OwnedSample) => void): SampleLedger {
  const byKey = new Map<string, OwnedSample>();
  let closed = false;
  return {
    wrap: (inner) => ({
      async call(req, onText) {
        const res = await inner.call(req, onText);
        // a malformed result is the role node's to report (ROLE_CALL_INVALID); there is nothing to record
        if (typeof res?.sampleHandle?.id !== "number" || typeof res.sampleHandle.model !== "string") return res;
        const s: OwnedSample = {
          episodeId: req.episodeId,
          role: req.role,
          node: req.node,
          visit: req.visit,
          handle: { model: res.sampleHandle.model, id: res.sampleHandle.id },
        };
        if (closed) onLate(s);
        else byKey.set(keyOf(s.episodeId, s.node, s.visit), s);
        return res;
      },
    }),
    close() {
      closed = true;
    },
    get: (episodeId, node, visit) => byKey.get(keyOf(episodeId, node, visit)),
    all: () => [...byKey.values()],
  };
}

/**
 * The trainable records of a fresh trajectory (before any user code saw it), each tied to the
 * ledger's sample for its role call. Throws SAMPLE_UNOWNED for a record whose handle no role call
 * of that episode returned.
 *
 * @example
 * const trainable = ownedRecords(trajectory, ledger); // then assignRewards([{ trajectory, task, trainable }], …)
 */
export function ownedRecords(trajectory: Trajectory<unknown>, ledger: SampleLedger): Map<number, TrainableRecord> {
  const out = new Map<number, TrainableRecord>();
  trajectory.records.forEach((r, i) => {
    if (r.kind !== "role" || r.sampleHandle === null) return;
    const owner = ledger.get(trajectory.episodeId, r.node, r.visit);
    if (!owner || owner.handle.model !== r.sampleHandle.model || owner.handle.id !== r.sampleHandle.id)
      throw new MasoError(
        "SAMPLE_UNOWNED",
        `episode "${trajectory.episodeId}", node "${r.node}" visit ${r.visit} (record ${i}) holds sample ${r.sampleHandle.model}#${r.sampleHandle.id}, which no role call of that episode returned`,
        "trajectories must come from this controller's rollout, unchanged",
      );
    out.set(i, { recordIndex: i, turn: r.turn, outputTokens: r.outputTokens, sample: owner });
  });
  return out;
}
