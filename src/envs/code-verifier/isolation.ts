// The OS layer of the code-verifier sandbox: resource limits (prlimit) and new network, PID and IPC
// namespaces (unshare) around the child, detected once per process. It decides how the child is
// started; it never runs submission code itself. docs/security.md describes the layers.

import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MasoError } from "../../errors.js";

/**
 * Which OS layer wraps the child. "namespaces": no network, its own PID namespace (it can signal
 * nothing outside), rlimits. "rlimits": limits only (no namespaces on this machine). "none": the
 * node process alone (permission model and realm isolation still hold).
 */
export type IsolationLevel = "namespaces" | "rlimits" | "none";

/** What the sandbox may use: "auto" (default, the strongest available), "namespaces" (refuse to run without), "none". */
export type IsolationChoice = "auto" | "namespaces" | "none";

/** Limits the kernel enforces on the child. */
export interface ChildLimits {
  /** CPU seconds (RLIMIT_CPU). */
  cpuSeconds: number;
  /** Address space in MB (RLIMIT_AS); V8 needs ~1 GB of reservations, so keep it ≥ 1024. */
  addressSpaceMb: number;
}

interface Detected {
  level: IsolationLevel;
  /** Command prefix that applies the layer, ending just before the node executable. */
  prefix: (limits: ChildLimits) => string[];
}

const UNSHARE_ROOT = ["--net", "--pid", "--ipc", "--fork", "--kill-child"];
const UNSHARE_USER = ["--user", "--map-root-user", ...UNSHARE_ROOT];

const works = (cmd: string, args: string[]): boolean => {
  const r = spawnSync(cmd, args, { stdio: "ignore", timeout: 5_000, env: {} });
  return r.status === 0;
};

const rlimits = (l: ChildLimits): string[] => [
  "prlimit",
  `--cpu=${Math.max(1, Math.ceil(l.cpuSeconds))}`,
  `--as=${Math.round(l.addressSpaceMb) * 1024 * 1024}`,
  "--core=0",
  "--fsize=0",
  "--nofile=64",
  "--",
];

let detected: Detected | null = null;

/** Probes prlimit and unshare once (a few ms each) and caches the strongest layer that works. */
function detect(): Detected {
  if (detected) return detected;
  const hasPrlimit = process.platform === "linux" && works("prlimit", ["--core=0", "--", "true"]);
  const unshare =
    process.platform !== "linux"
      ? null
      : works("unshare", [...UNSHARE_ROOT, "--", "true"])
        ? UNSHARE_ROOT
        : works("unshare", [...UNSHARE_USER, "--", "true"])
          ? UNSHARE_USER
          : null;
  if (hasPrlimit && unshare) detected = { level: "namespaces", prefix: (l) => [...rlimits(l), "unshare", ...unshare, "--"] };
  else if (hasPrlimit) detected = { level: "rlimits", prefix: rlimits };
  else detected = { level: "none", prefix: () => [] };
  return detected;
}

/** The OS layer the verifier uses on this machine (what `maso doctor` reports). */
export function isolationLevel(choice: IsolationChoice = "auto"): IsolationLevel {
  return choice === "none" ? "none" : detect().level;
}

/**
 * The argv prefix placed before `node` for a child with these limits. Throws VERIFIER_ISOLATION when
 * `choice` is "namespaces" and the machine cannot create them.
 */
export function isolationPrefix(choice: IsolationChoice, limits: ChildLimits): string[] {
  if (choice === "none") return [];
  const d = detect();
  if (choice === "namespaces" && d.level !== "namespaces")
    throw new MasoError(
      "VERIFIER_ISOLATION",
      `the code verifier was asked for namespace isolation, but this machine allows only "${d.level}"`,
      "install util-linux (unshare, prlimit) and allow user namespaces (sysctl kernel.unprivileged_userns_clone=1), or run as root; or set isolation: 'auto'",
    );
  return d.prefix(limits);
}

let emptyDir: string | null = null;

/** An empty directory made once per process, the child's working directory. */
export function emptyWorkDir(): string {
  if (emptyDir) return emptyDir;
  const dir = mkdtempSync(join(tmpdir(), "maso-verifier-"));
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  emptyDir = dir;
  return dir;
}
