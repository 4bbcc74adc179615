// Oracle passages for a synthetic-world question: for each supporting fact, the first retriever
// document about its subject that names its object. Used by the answer-role evaluation and by the
// train-split answer examples; it reads documents only and never ranks them (that is the retriever's job).
import { MasoError } from "maso";
import type { RetrieverDoc, QaTask, WorldTasks } from "maso/envs";

/** Finds the supporting passages (document texts, chain order, no duplicates) of a question. */
export type PassageFinder = (task: QaTask) => string[];

/**
 * Indexes `tasks.docs` by title once and returns a finder.
 * @example const find = supportingPassages(makeWorldTasks(42)); find(tasks.splits.test[0]);
 */
export function supportingPassages(tasks: WorldTasks): PassageFinder {
  const byTitle = new Map<string, RetrieverDoc[]>();
  for (const d of tasks.docs) {
    if (!byTitle.has(d.title)) byTitle.set(d.title, []);
    byTitle.get(d.title)!.push(d);
  }
  const facts = new Map(tasks.world.facts.map((f) => [f.id, f]));
  const name = (id: string) => tasks.world.entities.get(id)!.name;
  return (task) => {
    const out: string[] = [];
    for (const fid of task.supportingFacts ?? []) {
      const f = facts.get(fid);
      if (!f)
        throw new MasoError(
          "BASE_MODEL_DATA",
          `question ${task.id} cites unknown fact ${fid}`,
          "use tasks from the same makeWorldTasks call",
        );
      const ends =
        f.relation === "spouse"
          ? [
              [f.subject, f.object],
              [f.object, f.subject],
            ]
          : [[f.subject, f.object]];
      const doc = ends
        .flatMap(([s, o]) => (byTitle.get(name(s)) ?? []).filter((d) => hasName(d.text, name(o))))
        .sort((a, b) => (a.id < b.id ? -1 : 1))[0];
      if (!doc) throw new MasoError("BASE_MODEL_DATA", `no document states fact ${fid}`, "regenerate the world tasks");
      if (!out.includes(doc.text)) out.push(doc.text);
    }
    return out;
  };
}

/** `name` occurs in `text` as whole words (not inside a longer invented word). */
export function hasName(text: string, name: string): boolean {
  return new RegExp(`(^|[^\\p{L}])${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}($|[^\\p{L}])`, "u").test(text);
}
