// Exact rationals over BigInt for comparing numeric answers (no floating-point rounding).
// Parsing only: integers, decimals, scientific notation, a/b; LaTeX is handled by normalize-answer.ts.

/** A reduced fraction with a positive denominator. */
export interface Rational {
  num: bigint;
  den: bigint;
}

function gcd(a: bigint, b: bigint): bigint {
  let x = a < 0n ? -a : a;
  let y = b < 0n ? -b : b;
  while (y !== 0n) [x, y] = [y, x % y];
  return x;
}

/** Builds a reduced rational; returns null for a zero denominator. */
export function rational(num: bigint, den: bigint = 1n): Rational | null {
  if (den === 0n) return null;
  const sign = den < 0n ? -1n : 1n;
  const g = gcd(num, den) || 1n;
  return { num: (sign * num) / g, den: (sign * den) / g };
}

export function addRational(a: Rational, b: Rational): Rational {
  return rational(a.num * b.den + b.num * a.den, a.den * b.den)!;
}

export function divRational(a: Rational, b: Rational): Rational | null {
  return rational(a.num * b.den, a.den * b.num);
}

export function equalRational(a: Rational, b: Rational): boolean {
  return a.num === b.num && a.den === b.den;
}

/** Parses `12`, `-3.25`, `.5`, `1.2e3`, `7/8`, `-1.5/2` exactly; null for anything else. */
export function parseRational(text: string): Rational | null {
  const s = text.trim();
  const slash = s.indexOf("/");
  if (slash > 0) {
    const a = parseRational(s.slice(0, slash));
    const b = parseRational(s.slice(slash + 1));
    return a && b && !s.slice(slash + 1).includes("/") ? divRational(a, b) : null;
  }
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d{1,4}))?$/.exec(s);
  if (!m || (m[2] === "" && (m[3] ?? "") === "")) return null;
  const frac = m[3] ?? "";
  let num = BigInt((m[2] || "0") + frac);
  let den = 10n ** BigInt(frac.length);
  const exp = m[4] ? Number(m[4]) : 0;
  if (exp > 0) num *= 10n ** BigInt(exp);
  else if (exp < 0) den *= 10n ** BigInt(-exp);
  return rational(m[1] === "-" ? -num : num, den);
}
