// `maso export-trajectories`: a run's role calls as chat JSONL that `maso sft --data` reads, one
// line per call (the messages the role saw, then its output as the assistant turn), filtered by
// role, reward and step.
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { MasoError } from "../../errors.js";
import { roleCalls, trajectorySteps } from "../../progress/trajectory-export.js";
import { num, parseFlags, str } from "../args.js";
import { usageError } from "../exit-codes.js";
import { type Command, println } from "./types.js";

const NAME = "export-trajectories";

/** `--steps 3`, `2-5`, `2-` or `-5`: an inclusive range. */
export function parseStepRange(raw: string): { from: number; to: number } {
  const m = /^(\d*)(-?)(\d*)$/.exec(raw.trim());
  if (!m || (m[1] === "" && m[3] === "") || (m[2] === "" && m[3] !== ""))
    throw usageError(`${NAME}: --steps must be a step or a range a-b (a- and -b are open), got '${raw}'`, NAME);
  const from = m[1] === "" ? 1 : Number(m[1]);
  const to = m[2] === "" ? from : m[3] === "" ? Number.POSITIVE_INFINITY : Number(m[3]);
  if (to < from) throw usageError(`${NAME}: --steps ${raw} is empty (${from} > ${to})`, NAME);
  return { from, to };
}

export const exportTrajectoriesCommand: Command = {
  name: NAME,
  summary: "a run's role calls as chat JSONL for maso sft (filter by role, reward, steps)",
  help: `usage: maso ${NAME} <runDir> --out <file.jsonl> [--role r[,r…]] [--min-reward x] [--steps a-b] [--meta]

Writes one line per role call of the run's training steps, in the format 'maso sft --data' reads:
{"messages": [...the messages the role saw, {"role": "assistant", "content": <its raw output>}]}
({"prompt": ..., "completion": ...} for a role whose prompt is plain text). The messages are the
ones the role was sent (after its maxPromptTokens dropped old history); the output is its raw text.

options:
  --out <file>      the JSONL file to write (required)
  --role <r,…>      only these roles
  --min-reward <x>  only calls whose combined reward (all reward terms, summed) is at least x;
                    calls that trained on no reward are left out
  --steps <a-b>     only these training steps (inclusive; 3, 2-5, 2- or -5)
  --meta            add "meta": {step, episodeId, taskId, role, node, visit, turn, reward} to each
                    line ('maso sft' ignores it)`,
  async run(argv, io) {
    const p = parseFlags(
      NAME,
      argv,
      {
        out: { type: "string" },
        role: { type: "string" },
        "min-reward": { type: "string" },
        steps: { type: "string" },
        meta: { type: "boolean" },
      },
      1,
    );
    const runDir = p.positionals[0];
    const out = str(p, "out");
    if (!runDir) throw usageError(`${NAME}: missing the run directory`, NAME);
    if (!out) throw usageError(`${NAME}: --out <file.jsonl> is required`, NAME);
    const roleFlag = str(p, "role");
    const roles = roleFlag
      ?.split(",")
      .map((r) => r.trim())
      .filter((r) => r !== "");
    if (roleFlag !== undefined && roles!.length === 0) throw usageError(`${NAME}: --role needs at least one role name`, NAME);
    const minReward = num(p, "min-reward", NAME);
    const stepsFlag = str(p, "steps");
    const steps = stepsFlag === undefined ? undefined : parseStepRange(stepsFlag);
    if (!existsSync(runDir)) throw new MasoError("RUN_NOT_FOUND", `no run directory ${runDir}`, "pass a directory 'maso train' wrote");
    if ((await trajectorySteps(runDir)).length === 0)
      throw new MasoError("EXPORT_NO_TRAJECTORIES", `${runDir} has no trajectories/`, "pass a directory 'maso train' wrote");

    const calls = await roleCalls(runDir, { roles, minReward, steps });
    if (calls.length === 0)
      throw new MasoError("EXPORT_NOTHING", `no role call of ${runDir} passes the filters`, "loosen --role, --min-reward or --steps");
    const lines = calls.map((c) => JSON.stringify(p.values.meta ? { ...c.example, meta: c.source } : c.example));
    await mkdir(dirname(out), { recursive: true });
    await writeFile(out, `${lines.join("\n")}\n`);
    const perRole = new Map<string, number>();
    for (const c of calls) perRole.set(c.source.role, (perRole.get(c.source.role) ?? 0) + 1);
    const counts = [...perRole].map(([r, n]) => `${r} ${n}`).join(", ");
    const first = calls[0].source.step;
    const last = calls.at(-1)!.source.step;
    println(io, `exported ${calls.length} role calls (${counts}) from steps ${first}-${last} -> ${out}`);
    return 0;
  },
};
