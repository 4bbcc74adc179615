// Benchmark (not a test): code-verifier throughput at concurrency 2 on the synthetic code tasks (half
// reference solutions, half wrong stubs), with and without the sandbox's OS layer, and of the same
// code cut short so it does not compile (failed from its SyntaxError, no child), in alternating
// rounds so all see the same machine load. Prints one JSON object.
// Run: npx tsx bench/verifier.ts [submissions per round] [rounds]
import { isolationLevel } from "../src/envs/code-verifier/isolation.js";
import type { VerifierOptions } from "../src/envs/code-verifier/types.js";
import { verifyMany } from "../src/envs/code-verifier/verify-many.js";
import { makeCodeTasks } from "../src/envs/tasks/code/code-tasks.js";
import { machine } from "./machine.js";
import { median } from "./median.js";

const perRound = Number(process.argv[2] ?? 40);
const rounds = Number(process.argv[3] ?? 3);
const concurrency = 2;

const { train } = makeCodeTasks(3, { count: perRound * 2 });
const submissions = train.slice(0, perRound).map((t, i) => ({
  code: i % 2 === 0 ? t.reference : `function ${t.entry}() { return 0; }`,
  tests: t.tests,
}));

// what a small model often writes: the function with its last character missing
const broken = submissions.map((s) => ({ ...s, code: s.code.trimEnd().slice(0, -1) }));

const variants: Record<string, { options: VerifierOptions; subs: typeof submissions }> = {
  realm_and_permissions: { options: { isolation: "none" }, subs: submissions },
  with_os_layer: { options: { isolation: "auto" }, subs: submissions },
  syntax_error: { options: { isolation: "auto" }, subs: broken },
};

async function round({ options, subs }: (typeof variants)[string]): Promise<{ perSecond: number; passed: number }> {
  const t0 = performance.now();
  const results = await verifyMany(subs, { ...options, concurrency });
  const seconds = (performance.now() - t0) / 1000;
  return { perSecond: subs.length / seconds, passed: results.filter((r) => r.passRate === 1).length };
}

await round(variants.with_os_layer); // warm the page cache and the isolation probe
const seen: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
const passed: Record<string, number> = {};
for (let r = 0; r < rounds; r++)
  for (const [name, variant] of Object.entries(variants)) {
    const out = await round(variant);
    seen[name].push(out.perSecond);
    passed[name] = out.passed;
  }

const perSecond = Object.fromEntries(Object.entries(seen).map(([k, v]) => [k, median(v)]));
console.log(
  JSON.stringify({
    bench: "verifier",
    machine: machine(),
    concurrency,
    submissions: submissions.length,
    rounds,
    isolation: isolationLevel(),
    submissions_per_s: perSecond,
    os_layer_cost: 1 - perSecond.with_os_layer / perSecond.realm_and_permissions,
    syntax_check_speedup: perSecond.syntax_error / perSecond.with_os_layer,
    passed,
  }),
);
