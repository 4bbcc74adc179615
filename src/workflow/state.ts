// Workflow state updates: nodes return partial updates, per-field reducers merge them into a new
// state object. Reducers are pure; nothing here mutates the state it is given.

import { MasoError } from "../errors.js";

/** Merges a field's current value with a node's update for that field. */
export type Reducer<V> = (current: V, update: V) => V;

/** Per-field reducers; fields without one are replaced. */
export type Reducers<S> = { [K in keyof S]?: Reducer<S[K]> };

/** A node's state update: any subset of fields. */
export type StateUpdate<S> = Partial<S>;

/**
 * The default reducer: the update replaces the current value.
 *
 * @example
 * replace<number>()(1, 2); // 2
 */
export function replace<V>(): Reducer<V> {
  return (_current, update) => update;
}

/**
 * Appends the update's items to the current list (use for histories and evidence lists).
 *
 * @example
 * const reducers: Reducers<{ notes: string[] }> = { notes: append<string>() };
 * append<string>()(["a"], ["b", "c"]); // ["a", "b", "c"]
 */
export function append<T>(): Reducer<T[]> {
  return (current, update) => [...(current ?? []), ...update];
}

/**
 * Applies a partial update through the reducers and returns a new state; keys that are not in
 * the initial state's shape are still accepted (the state type is the contract).
 *
 * @example
 * applyUpdate({ n: 1, log: ["a"] }, { log: ["b"] }, { log: append<string>() }); // { n: 1, log: ["a", "b"] }
 */
export function applyUpdate<S extends object>(
  state: S,
  // biome-ignore lint/suspicious/noConfusingVoidType: accepts what a node with no return statement gives back
  update: StateUpdate<S> | undefined | void,
  reducers: Reducers<S>,
): S {
  if (update === undefined || update === null) return state;
  if (typeof update !== "object" || Array.isArray(update)) {
    throw new MasoError(
      "STATE_UPDATE_INVALID",
      `a node returned ${Array.isArray(update) ? "an array" : typeof update} as its update`,
      "return a partial state object (or nothing)",
    );
  }
  const next = { ...state } as S;
  for (const key of Object.keys(update) as (keyof S)[]) {
    const value = update[key] as S[keyof S];
    const reducer = reducers[key];
    next[key] = reducer ? reducer(state[key], value) : value;
  }
  return next;
}
