// Exact arithmetic over a reasoner plan ("A = 4 * 6. B = 12 + A."), for the calculator oracle and
// for measuring the actor's own arithmetic ("92 - 47 = 33."). Pure functions, no model.

const OPS: Record<string, (a: number, b: number) => number> = {
  "+": (a, b) => a + b,
  "-": (a, b) => a - b,
  "*": (a, b) => a * b,
  "/": (a, b) => a / b,
};

const STATEMENT = /\b([A-Z])\s*=\s*([A-Z]|\d+)\s*([-+*/])\s*([A-Z]|\d+)/g;

/**
 * The value of a plan's last statement, each `X = a op b` evaluated exactly in order (an operand
 * is a number or an earlier statement's letter); null when the plan has no statement, names a
 * letter it never defined, or divides by zero.
 * @example evaluatePlan("A = 4 * 6. B = 12 + A.") // 36
 */
export function evaluatePlan(plan: string): number | null {
  const vars = new Map<string, number>();
  let last: number | null = null;
  const operand = (t: string): number | undefined => (/^\d+$/.test(t) ? Number(t) : vars.get(t));
  for (const [, name, x, op, y] of plan.matchAll(STATEMENT)) {
    const a = operand(x);
    const b = operand(y);
    if (a === undefined || b === undefined || (op === "/" && b === 0)) return null;
    last = OPS[op](a, b);
    vars.set(name, last);
  }
  return last;
}

/** A plan's value as the answer text the judge compares (null when evaluatePlan gives none). */
export function planAnswer(plan: string): string | null {
  const v = evaluatePlan(plan);
  return v === null || !Number.isFinite(v) ? null : String(Number.isInteger(v) ? v : Number(v.toFixed(6)));
}

// `a op b = c`, or `a op b = (working) c` where the actor first works c out in brackets (its digits
// least-significant first, or column by column)
const EQUATION = /(\d+)\s*([-+*/])\s*(\d+)\s*=\s*(?:\([^)]*\)\s*)?(\d+)/g;

/**
 * The number-only equations (`a op b = c`) of an actor's working and how many are exact; c is the
 * result the actor writes last (its bracketed digits are working, not a second result).
 * @example equationsIn("92 - 47 = 33. The answer is \\boxed{33}.") // { total: 1, exact: 0 }
 */
export function equationsIn(text: string): { total: number; exact: number } {
  let total = 0;
  let exact = 0;
  for (const [, a, op, b, c] of text.matchAll(EQUATION)) {
    total++;
    if (OPS[op](Number(a), Number(b)) === Number(c)) exact++;
  }
  return { total, exact };
}
