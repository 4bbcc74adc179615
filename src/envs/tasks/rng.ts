// The keyed stream under its older names, for modules that still import it from here; new code
// imports createKeyedRng / KeyedRng from src/rng.ts.
export { createKeyedRng as createRng, hashSeed, type KeyedRng as Rng } from "../../rng.js";
