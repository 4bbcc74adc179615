// Renders a parsed Jinja chat template under a budget: evaluation steps, wall-clock time, characters
// produced and list length per render, so a hostile template (nested loops, recursive macros,
// doubling strings) fails in bounded time instead of hanging the thread every role call runs on.
// Rendering only; which variables a template sees is chat-template.ts's job.
import { Environment, Interpreter, type Template } from "@huggingface/jinja";

/** The limits of one render. */
export interface RenderBudget {
  /** interpreter evaluations (one per expression or statement visited) */
  steps: number;
  /** wall-clock milliseconds, checked every few hundred steps (sooner after big values) */
  ms: number;
  /** characters of every string value the template evaluates, summed (bounds the output and its pieces) */
  chars: number;
  /** items of any one list the template evaluates (`range(n)` included) */
  items: number;
}

/**
 * The budget of a render over small inputs; {@link budgetFor} scales it with the inputs. A real
 * chat template takes a few hundred steps per message and well under a millisecond per render.
 */
export const BASE_RENDER_BUDGET: Readonly<RenderBudget> = { steps: 2_000_000, ms: 2_000, chars: 16_000_000, items: 100_000 };

/**
 * The budget for a render whose inputs hold `inputChars` characters in `inputItems` messages and
 * tools: the base, plus room to show every input many times over.
 */
export function budgetFor(inputChars: number, inputItems: number, base: Readonly<RenderBudget> = BASE_RENDER_BUDGET): RenderBudget {
  return {
    steps: base.steps + 2_000 * inputItems,
    ms: base.ms,
    chars: Math.max(base.chars, 64 * inputChars),
    items: Math.max(base.items, 4 * inputItems),
  };
}

/** A render went past its budget; `what` names the limit. */
export class TemplateBudgetExceeded extends Error {
  constructor(readonly what: string) {
    super(`the chat template went past its render budget: ${what}`);
    this.name = "TemplateBudgetExceeded";
  }
}

// The parts of the library's interpreter used here, typed locally: its .d.ts imports "./runtime"
// without an extension, which NodeNext resolution cannot follow.
interface JinjaValue {
  type: string;
  value: unknown;
}
interface JinjaEnvironment {
  set(name: string, value: unknown): unknown;
}
interface JinjaInterpreter {
  run(program: unknown): JinjaValue;
  evaluate(statement: unknown, environment: JinjaEnvironment): JinjaValue;
  /** runs a list of statements: a loop's body once per item, even an empty one */
  evaluateBlock(statements: unknown[], environment: JinjaEnvironment): JinjaValue;
}
const BaseInterpreter = Interpreter as unknown as new (env: JinjaEnvironment) => JinjaInterpreter;

/** Clock reads: every this many units of work (a step is one; a big value adds one per 1024 items or characters). */
const CLOCK_EVERY = 256;

/**
 * The library's interpreter with a meter on `evaluate` (every expression and statement) and on
 * `evaluateBlock` (every loop iteration, empty bodies included).
 */
class MeteredInterpreter extends BaseInterpreter {
  private steps = 0;
  private chars = 0;
  private work = 0;
  private readonly deadline: number;

  constructor(
    env: JinjaEnvironment,
    private readonly budget: RenderBudget,
  ) {
    super(env);
    this.deadline = performance.now() + budget.ms;
  }

  private step(size: number): void {
    if (++this.steps > this.budget.steps) throw new TemplateBudgetExceeded(`more than ${this.budget.steps} evaluation steps`);
    this.work += 1 + (size >> 10);
    if (this.work >= CLOCK_EVERY) {
      this.work = 0;
      if (performance.now() > this.deadline) throw new TemplateBudgetExceeded(`more than ${this.budget.ms} ms`);
    }
  }

  override evaluateBlock(statements: unknown[], environment: JinjaEnvironment): JinjaValue {
    this.step(0);
    return super.evaluateBlock(statements, environment);
  }

  override evaluate(statement: unknown, environment: JinjaEnvironment): JinjaValue {
    this.step(0);
    const v = super.evaluate(statement, environment);
    if (v.type === "StringValue") {
      const n = (v.value as string).length;
      this.chars += n;
      if (this.chars > this.budget.chars) throw new TemplateBudgetExceeded(`more than ${this.budget.chars} characters produced`);
      if (n > 1024) this.work += n >> 10;
    } else if (v.type === "ArrayValue" || v.type === "TupleValue") {
      const n = (v.value as unknown[]).length;
      if (n > this.budget.items) throw new TemplateBudgetExceeded(`a list of more than ${this.budget.items} items`);
      if (n > 1024) this.work += n >> 10;
    }
    return v;
  }
}

const pad2 = (n: number) => (n < 10 ? `0${n}` : String(n));

/** `strftime_now(format)` as @huggingface/jinja defines it (%Y %m %d %b %B %H %M %%). */
function strftimeNow(format: string): string {
  const d = new Date();
  return String(format).replace(/%[YmdbBHM%]/g, (t) => {
    switch (t) {
      case "%Y":
        return String(d.getFullYear());
      case "%m":
        return pad2(d.getMonth() + 1);
      case "%d":
        return pad2(d.getDate());
      case "%b":
        return new Intl.DateTimeFormat(undefined, { month: "short" }).format(d);
      case "%B":
        return new Intl.DateTimeFormat(undefined, { month: "long" }).format(d);
      case "%H":
        return pad2(d.getHours());
      case "%M":
        return pad2(d.getMinutes());
      default:
        return "%";
    }
  });
}

/** `range()` as Python and the library define it, refusing lists longer than the budget allows before building them. */
function boundedRange(items: number) {
  return (start: number, stop?: number, step = 1): number[] => {
    let lo = start;
    let hi = stop;
    if (hi === undefined) {
      hi = lo;
      lo = 0;
    }
    if (step === 0) throw new Error("range() step must not be zero");
    const count = Math.max(0, Math.ceil((hi - lo) / step));
    if (!Number.isFinite(count) || count > items) throw new TemplateBudgetExceeded(`range() of more than ${items} items`);
    return Array.from({ length: count }, (_, k) => lo + k * step);
  };
}

/**
 * Renders `template` with `vars` under `budget`; the globals are the library's own (`range`
 * bounded by the budget). Errors: TemplateBudgetExceeded, or what the template throws.
 * @example
 * renderBounded(new Template("{{ x }}"), { x: 1 }, BASE_RENDER_BUDGET); // "1"
 */
export function renderBounded(template: Template, vars: Record<string, unknown>, budget: RenderBudget): string {
  const env: JinjaEnvironment = new Environment();
  // the globals @huggingface/jinja's Template.render declares (setupGlobals), with range() bounded
  env.set("false", false);
  env.set("true", true);
  env.set("none", null);
  env.set("raise_exception", (msg: unknown) => {
    throw new Error(String(msg));
  });
  env.set("range", boundedRange(budget.items));
  env.set("strftime_now", strftimeNow);
  env.set("True", true);
  env.set("False", false);
  env.set("None", null);
  for (const [k, v] of Object.entries(vars)) env.set(k, v);
  return new MeteredInterpreter(env, budget).run(template.parsed).value as string;
}
