// A self-contained SVG line chart (no dependencies): title, axes with round ticks, a legend, solid
// lines, optional faint raw lines behind them and optional min–max bands. Pure string building; it
// reads and writes no files. Each series' main line carries data-series="<name>" for tests.

/** One line; `raw` is drawn faint behind it, `band` as a shaded min–max area. */
export interface Series {
  name: string;
  points: readonly (readonly [number, number])[];
  raw?: readonly (readonly [number, number])[];
  band?: readonly { x: number; lo: number; hi: number }[];
  color?: string;
}

export interface ChartSpec {
  title: string;
  xLabel: string;
  yLabel: string;
  series: readonly Series[];
  width?: number;
  height?: number;
}

/** Tableau-10: distinguishable, print-safe. */
export const PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"];

const MARGIN = { left: 64, right: 180, top: 40, bottom: 52 };

export const escapeXml = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&apos;");

/** About `count` round tick values (1, 2 or 5 × 10^k apart) covering [lo, hi]. */
export function niceTicks(lo: number, hi: number, count = 5): number[] {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

const fmt = (v: number) => (Math.abs(v) >= 1e4 || (v !== 0 && Math.abs(v) < 1e-3) ? v.toExponential(1) : String(Number(v.toPrecision(4))));

/** [lo, hi] of the finite values, padded when flat so that a constant line sits mid-chart. */
function extent(values: number[]): [number, number] {
  const f = values.filter(Number.isFinite);
  if (f.length === 0) return [0, 1];
  const lo = Math.min(...f);
  const hi = Math.max(...f);
  if (hi > lo) return [lo, hi];
  const pad = Math.abs(lo) > 0 ? Math.abs(lo) * 0.1 : 1;
  return [lo - pad, hi + pad];
}

/**
 * Renders a line chart as a standalone SVG document.
 * @example
 * const svg = lineChart({ title: "reward", xLabel: "step", yLabel: "reward", series: [{ name: "planner", points: [[1, 0.2], [2, 0.4]] }] });
 */
export function lineChart(spec: ChartSpec): string {
  const W = spec.width ?? 760;
  const H = spec.height ?? 400;
  const pw = W - MARGIN.left - MARGIN.right;
  const ph = H - MARGIN.top - MARGIN.bottom;
  const xs: number[] = [];
  const ys: number[] = [];
  for (const s of spec.series) {
    for (const [x, y] of [...s.points, ...(s.raw ?? [])]) {
      xs.push(x);
      ys.push(y);
    }
    for (const b of s.band ?? []) {
      xs.push(b.x);
      ys.push(b.lo, b.hi);
    }
  }
  const [x0, x1] = extent(xs);
  const yt = niceTicks(...extent(ys));
  const [y0, y1] = [Math.min(yt[0], ...extent(ys)), Math.max(yt.at(-1)!, ...extent(ys))];
  const xt = niceTicks(x0, x1, 6).filter((v) => v >= x0 && v <= x1);
  const px = (x: number) => MARGIN.left + ((x - x0) / (x1 - x0)) * pw;
  const py = (y: number) => MARGIN.top + ph - ((y - y0) / (y1 - y0 || 1)) * ph;
  const pts = (p: readonly (readonly [number, number])[]) =>
    p
      .filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y))
      .map(([x, y]) => `${px(x).toFixed(2)},${py(y).toFixed(2)}`)
      .join(" ");

  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="#ffffff"/>`,
    `<text x="${W / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${escapeXml(spec.title)}</text>`,
  ];
  for (const v of yt) {
    const y = py(v).toFixed(2);
    out.push(`<line x1="${MARGIN.left}" x2="${MARGIN.left + pw}" y1="${y}" y2="${y}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${MARGIN.left - 6}" y="${y}" text-anchor="end" dominant-baseline="middle">${fmt(v)}</text>`);
  }
  for (const v of xt) {
    const x = px(v).toFixed(2);
    out.push(`<line x1="${x}" x2="${x}" y1="${MARGIN.top + ph}" y2="${MARGIN.top + ph + 5}" stroke="#333"/>`);
    out.push(`<text x="${x}" y="${MARGIN.top + ph + 18}" text-anchor="middle">${fmt(v)}</text>`);
  }
  out.push(`<rect x="${MARGIN.left}" y="${MARGIN.top}" width="${pw}" height="${ph}" fill="none" stroke="#333"/>`);
  out.push(`<text x="${MARGIN.left + pw / 2}" y="${H - 10}" text-anchor="middle">${escapeXml(spec.xLabel)}</text>`);
  out.push(`<text transform="translate(16 ${MARGIN.top + ph / 2}) rotate(-90)" text-anchor="middle">${escapeXml(spec.yLabel)}</text>`);
  spec.series.forEach((s, i) => {
    const color = s.color ?? PALETTE[i % PALETTE.length];
    if (s.band?.length) {
      const upper = s.band.map((b) => [b.x, b.hi] as const);
      const lower = s.band.map((b) => [b.x, b.lo] as const).reverse();
      out.push(`<polygon points="${pts([...upper, ...lower])}" fill="${color}" fill-opacity="0.18" stroke="none"/>`);
    }
    if (s.raw?.length) out.push(`<polyline points="${pts(s.raw)}" fill="none" stroke="${color}" stroke-opacity="0.25" stroke-width="1"/>`);
    out.push(`<polyline data-series="${escapeXml(s.name)}" points="${pts(s.points)}" fill="none" stroke="${color}" stroke-width="2"/>`);
    for (const [x, y] of s.points.length <= 20 ? s.points : [])
      if (Number.isFinite(y)) out.push(`<circle cx="${px(x).toFixed(2)}" cy="${py(y).toFixed(2)}" r="2.5" fill="${color}"/>`);
    const ly = MARGIN.top + 10 + i * 18;
    const lx = MARGIN.left + pw + 14;
    out.push(`<line x1="${lx}" x2="${lx + 18}" y1="${ly}" y2="${ly}" stroke="${color}" stroke-width="3"/>`);
    out.push(`<text x="${lx + 24}" y="${ly}" dominant-baseline="middle">${escapeXml(s.name)}</text>`);
  });
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}
