// The QA adaptation mixture (models/base-qa's data): no reference-world entity of a held-out split
// anywhere, evidence targets that are the retrieved document stating the fact (verbatim, from the
// prompt), and responses the workflows' roles accept within their token budgets.
import { describe, expect, it } from "vitest";
import * as search from "../../examples/workflows/iterative-search/workflow.js";
import * as rea from "../../examples/workflows/retrieve-extract-answer/workflow.js";
import { exampleTexts } from "../../recipes/base-model/mixture.js";
import { NO_USEFUL_INFORMATION } from "../../examples/workflows/common/prompts.js";
import { buildQaMixture, evidenceTarget, QA_MIXTURE_KINDS } from "../../recipes/base-model/qa-mixture.js";
import { encodeExample } from "../../recipes/base-model/train-loop.js";
import { chainQuestions, indexWorld } from "../../recipes/base-model/world-qa.js";
import { loadHfTokenizer } from "../../src/engine/tokenizer/hf-tokenizer.js";
import type { Entity, Fact } from "../../src/envs/tasks/world/make-world.js";
import { findEntityLeaks, makeWorldTasks } from "../../src/envs/tasks/world/world-tasks.js";
import type { Role } from "../../src/workflow/index.js";

const SEED = 42;
const counts = { summarize: 300, extract: 300, update: 150, search: 200, "answer-knowledge": 150, "answer-evidence": 100, replay: 200 };
const mixture = buildQaMixture(SEED, counts);
const chats = mixture.flatMap((e) => ("messages" in e ? [{ kind: e.kind, prompt: e.messages[0].content, response: e.response }] : []));
/** The numbered passages of a prompt ("[1] …" lines). */
const passagesOf = (prompt: string) => [...prompt.matchAll(/^\[\d+\] (.*)$/gm)].map((m) => m[1]);

describe("QA adaptation mixture", () => {
  it("has no held-out (dev or test) entity word, as a word or a whole name", () => {
    const tasks = makeWorldTasks(SEED);
    const texts = mixture.flatMap(exampleTexts);
    expect(findEntityLeaks(tasks, texts)).toEqual([]);
    const heldOut = [...tasks.world.entities.values()].filter((e) => tasks.clusterSplit[e.cluster] !== "train").map((e) => e.name);
    const all = texts.join("\n");
    expect(heldOut.filter((n) => new RegExp(`(?<!\\p{L})${n}(?!\\p{L})`, "u").test(all))).toEqual([]);
  });

  it("copies evidence verbatim from the prompt's retrieved passages, or says there is none", () => {
    let copies = 0;
    let none = 0;
    for (const c of chats.filter((x) => x.kind === "summarize" || x.kind === "extract")) {
      const passages = passagesOf(c.prompt);
      // the top 4, or fewer when fewer documents match the query at all
      expect(passages.length).toBeLessThanOrEqual(4);
      const target = c.response.trim();
      if (target === NO_USEFUL_INFORMATION) none++;
      else {
        expect(passages).toContain(target);
        copies++;
      }
    }
    // most searches surface the fact; a missed search (about a tenth) keeps "no useful information" alive
    expect(none / (copies + none)).toBeGreaterThan(0.04);
    expect(none / (copies + none)).toBeLessThan(0.25);
    // update restates the evidence it is shown
    for (const c of chats.filter((x) => x.kind === "update")) expect(c.prompt).toContain(`Evidence: ${c.response.trim()}\n`);
  });

  it("asks for the next hop with an entity the knowledge names, and stops when every hop is known", () => {
    let ends = 0;
    for (const c of chats.filter((x) => x.kind === "search")) {
      const knowledge = c.prompt.split("\nKnowledge:\n")[1].split("\nReply")[0];
      if (c.response === "<end>") {
        ends++;
        expect(knowledge).not.toBe("- none");
        continue;
      }
      const query = c.response.match(/^<search> (.*)<\/search>$/)?.[1] ?? "";
      const entity = query.split(" ").slice(0, -1).join(" ");
      expect(`${c.prompt.split("\n")[0]}\n${knowledge}`).toContain(entity);
    }
    expect(ends).toBeGreaterThan(10);
  });

  it("answers only with an entity its passages state", () => {
    for (const c of chats.filter((x) => x.kind === "answer-knowledge" || x.kind === "answer-evidence")) {
      const answer = c.response.match(/^<final_answer> (.*)<\/final_answer>$/)?.[1] ?? "";
      expect(passagesOf(c.prompt).join(" ")).toContain(answer);
    }
  });

  it("writes responses the workflows' roles accept, within their token budgets", async () => {
    const tok = await loadHfTokenizer("models/base");
    const roles: Partial<Record<string, Role<never, unknown>>> = {
      summarize: search.summarize as Role<never, unknown>,
      update: search.update as Role<never, unknown>,
      search: search.search as Role<never, unknown>,
      "answer-knowledge": search.answer as Role<never, unknown>,
      extract: rea.extract as Role<never, unknown>,
      "answer-evidence": rea.answer as Role<never, unknown>,
    };
    for (const e of mixture) {
      const role = roles[e.kind];
      if (!role || !("response" in e)) continue;
      expect(role.parse(e.response).ok).toBe(true);
      const responseTokens = encodeExample(tok, e, 448).scoreMask.reduce((a, b) => a + b, 0) - 1;
      expect(responseTokens).toBeLessThanOrEqual(role.maxNewTokens);
    }
  });

  it("picks the best-ranked passage that states a fact (both of its ends named as whole words)", () => {
    const ent = (id: string, name: string): Entity => ({ id, kind: "person", name, words: name.split(" "), cluster: 0 });
    const entities = new Map([ent("a", "Kora Velin"), ent("b", "Drast"), ent("c", "Velinor")].map((e) => [e.id, e]));
    const facts: Fact[] = [{ id: "f", relation: "born_in", subject: "a", object: "b" }];
    const [q] = chainQuestions(indexWorld(entities, facts)).filter((x) => x.hops === 1);
    const passages = [
      "Kora Velin works for Velinor.",
      "Kora Velin was born in Drastor.",
      "Kora Velin was born in Drast.",
      "Drast: Kora Velin.",
    ];
    expect(evidenceTarget(passages, q.steps)).toBe(passages[2]);
    expect(evidenceTarget(passages.slice(0, 2), q.steps)).toBe(NO_USEFUL_INFORMATION);
  });

  it("holds every kind in the counts asked, and is deterministic", () => {
    for (const k of QA_MIXTURE_KINDS) expect(mixture.filter((e) => e.kind === k)).toHaveLength(counts[k]);
    expect(buildQaMixture(SEED, counts)).toEqual(mixture);
  });
});
