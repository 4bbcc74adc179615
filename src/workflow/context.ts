// What node functions and routing functions see besides the state. Types only.

/**
 * What a node (its prompt builder, input or update function) sees besides the state. `I` is the
 * fan-out item type a branch node declares (`ctx: NodeContext<string>`); fanOut() checks that its
 * `over` list has that element type.
 */
export interface NodeContext<I = unknown> {
  readonly episodeId: string;
  readonly node: string;
  /** How many times this node ran before in this episode (0 at the first visit). */
  readonly visit: number;
  /** Loop-head entries so far in this episode (0 before the first loop turn). */
  readonly turn: number;
  /** Inside a fan-out branch: the list item this branch works on; otherwise undefined. */
  readonly item: I;
  /** Inside a fan-out branch: its index in the list; otherwise null. */
  readonly branch: number | null;
  /** Inside a fan-out branch: the previous branch node's output (undefined at the first). */
  readonly prev: unknown;
  /** At a fan-out's join: every branch's last output, in list order; otherwise undefined. */
  readonly branchOutputs: readonly unknown[] | undefined;
  /** All outputs of `node` so far, index = visit. Revisits never overwrite. */
  outputs(node: string): readonly unknown[];
}

/** What a conditional edge or a fan-out's `over` sees besides the state. */
export interface RouteContext {
  readonly episodeId: string;
  /** The node the edge leaves (START for the entry). */
  readonly from: string;
  /** The visit of `from` that just finished (-1 for START). */
  readonly visit: number;
  readonly turn: number;
  /** The output of `from` at that visit (undefined for START). */
  readonly output: unknown;
  outputs(node: string): readonly unknown[];
}
