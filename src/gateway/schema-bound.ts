// How big a JSON Schema is once its `$ref`s are expanded: a few hundred bytes of nested `anyOf`s
// over references can describe exponentially many alternatives, and validating against them is
// that slow. Counting nodes through the expansion, with a cap, bounds both; recursive schemas
// expand without end and so exceed any cap. Pure; no validation here.

/** Schema nodes a request's response format may expand to. */
export const MAX_SCHEMA_NODES = 5000;

type Json = unknown;

/** The definition a local `$ref` (`#/$defs/x`, `#/definitions/x`, any JSON pointer) points at. */
function resolve(root: Json, ref: string): Json {
  if (!ref.startsWith("#")) return undefined;
  let at: Json = root;
  for (const raw of ref
    .slice(1)
    .split("/")
    .filter((p) => p !== "")) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (at === null || typeof at !== "object") return undefined;
    at = (at as Record<string, Json>)[key];
  }
  return at;
}

/**
 * Nodes of `schema` with every local `$ref` expanded in place, counting stops past `cap` (returns
 * `cap + 1` then).
 * @example expandedSize({ anyOf: [{ type: "string" }, { type: "number" }] }); // 3
 */
export function expandedSize(schema: Json, cap = MAX_SCHEMA_NODES): number {
  // an explicit stack: a chain of references is as deep as the cap, deeper than the call stack
  const todo: Json[] = [schema];
  let count = 0;
  while (todo.length > 0 && count <= cap) {
    const node = todo.pop();
    if (Array.isArray(node)) for (const x of node) todo.push(x);
    else if (node !== null && typeof node === "object") {
      count++;
      for (const [k, v] of Object.entries(node as Record<string, Json>)) {
        if (k === "$ref" && typeof v === "string") todo.push(resolve(schema, v));
        else if (k !== "$defs" && k !== "definitions") todo.push(v);
      }
    }
  }
  return Math.min(count, cap + 1);
}
