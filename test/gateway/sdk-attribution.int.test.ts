// Every SDK in its default configuration, with process-global clients (a module-level `new OpenAI()`,
// `new Anthropic()`, the AI SDK's `openai` / `anthropic` providers, @openai/agents' own default
// client, LangChain's ChatOpenAI): `maso train` runs 2 steps of 4 concurrent episodes, and every call
// lands in the episode that made it — its prompt carries that episode's task id.
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { cliInProcess } from "../cli/cli-harness.js";
import { freshRunDir, jsonl } from "../cli/run-files.js";

const AGENT = "test/gateway/fixtures/sdk-agents.ts";

interface Traj {
  episodeId: string;
  status: string;
  error?: unknown;
  finalState: { task: { id: string } };
  records: { kind: string; role: string | null; prompt: unknown; sampleHandle: unknown }[];
}

beforeAll(() => {
  // models/base with a 2048-token context: agent SDKs' tool schemas do not fit in its 512
  const dir = freshRunDir("maso-sdk-model-");
  cpSync("models/base", dir, { recursive: true });
  const cfg = JSON.parse(readFileSync(join(dir, "config.json"), "utf8"));
  writeFileSync(join(dir, "config.json"), JSON.stringify({ ...cfg, max_position_embeddings: 2048 }));
  process.env.MASO_TEST_MODEL = dir;
});

afterEach(() => {
  delete process.env.MASO_TEST_SDK;
});

/** The SDKs and the fewest calls each episode makes. */
const SDKS: [string, number][] = [
  ["openai-chat", 2],
  ["openai-responses", 3],
  ["agents", 2],
  ["ai-openai", 2],
  ["ai-anthropic", 2],
  ["anthropic", 2],
  ["langchain", 3],
];

describe("process-global SDK clients under maso train", () => {
  for (const [sdk, fewest] of SDKS)
    it(`${sdk}: every call is recorded in the episode that made it`, async () => {
      process.env.MASO_TEST_SDK = sdk;
      const runDir = freshRunDir("maso-sdk-");
      const r = await cliInProcess("train", AGENT, "--run-dir", runDir);
      expect(r.code, r.err).toBe(0);
      for (const step of [1, 2]) {
        const trajs = jsonl(join(runDir, "trajectories", `step-00000${step}.jsonl`)) as Traj[];
        expect(trajs).toHaveLength(4);
        for (const t of trajs) {
          expect(t.status, JSON.stringify(t.error)).toBe("done");
          const calls = t.records.filter((x) => x.kind === "role");
          expect(calls.length).toBeGreaterThanOrEqual(fewest);
          for (const c of calls) {
            expect(c.sampleHandle).not.toBeNull();
            expect(JSON.stringify(c.prompt)).toContain(`[${t.finalState.task.id}]`);
          }
        }
      }
      const rows = jsonl(join(runDir, "metrics.jsonl"));
      expect(rows).toHaveLength(2);
      expect(rows[1].roles.writer.samples).toBeGreaterThanOrEqual(4);
      // tokens leave as they decode: a streamed reply arrives in many deltas, not one at the end
      if (sdk === "openai-responses") expect(rows[1].episodes.metrics.deltasPerStream).toBeGreaterThan(3);
    }, 120_000);
});
