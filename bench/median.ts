// The one median every benchmark reports, so their figures are taken alike.

/** The median (the upper one of an even count); NaN for none. */
export const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
