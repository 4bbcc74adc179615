// Run checkpoints' public surface, listed explicitly for src/index.ts to re-export.
// Fault-injection hooks are options of writeCheckpoint, not separate exports.
export type { Checkpointable, CheckpointManifest, ManifestFile, PartReader, PartWriter } from "./types.js";
export { BEST_FILE, type BestPointer, readBest, writeBest } from "./best.js";
export { checkpointsDir, listCheckpoints, stepDirName } from "./paths.js";
export {
  cleanCheckpointLeftovers,
  pruneCheckpoints,
  writeCheckpoint,
  type WriteCheckpointOptions,
  type WrittenCheckpoint,
} from "./write-checkpoint.js";
export {
  findCheckpoint,
  restoreCheckpoint,
  verifyCheckpoint,
  type FindCheckpointOptions,
  type VerifiedCheckpoint,
} from "./read-checkpoint.js";
export { adamwPart, decoderPart, jsonPart, readDecoderRngState } from "./parts.js";
