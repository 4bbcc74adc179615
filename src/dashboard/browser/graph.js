// The path graph of one episode. Nodes in order of first visit; one arc per distinct transition
// (forward above, backward below, self-loops on top) labelled with the transition numbers that took
// it. Labels are placed so that none overlaps another label or a node: each starts at its arc's apex
// and moves outward until it is clear. Draws only; picking a record is the viewer's (a callback).
import { $, svg } from "./common.js";

/** @typedef {import("./api.js").StepRecord} StepRecord */
/** @typedef {{ x: number, y: number, w: number, h: number }} Box */
/**
 * An arc of the walk: its path `d`, label text and position (`lx`, `ly`, moved along `dir` until
 * clear, within `box`), how far it reaches from the nodes, and whether the current record took it.
 * @typedef {{ a: string, b: string, steps: number[], taken: boolean, dist: number, d: string, lx: number, ly: number,
 *   dir: number, reach: number, text: string, box: Box }} Edge
 */

const G = { W: 130, H: 46, GAP: 40, CHAR: 6.2, LH: 13 };

/** @param {number[]} steps */
function edgeText(steps) {
  return steps.length <= 4 ? steps.join(",") : steps.slice(0, 3).join(",") + ",… (" + steps.length + "×)";
}
/** @param {Box} a @param {Box} b */
function overlaps(a, b) {
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

/**
 * The arc from a to b (node x positions in `pos`), its label unplaced.
 * @param {{ a: string, b: string, steps: number[] }} t
 * @param {Record<string, number>} pos
 * @param {number} current
 * @returns {Edge}
 */
function arc(t, pos, current) {
  const W = G.W;
  const H = G.H;
  const x1 = pos[t.a] + W / 2;
  const x2 = pos[t.b] + W / 2;
  const dist = Math.abs(x2 - x1);
  const hgt = 18 + Math.min(40, dist / 8);
  const base = { ...t, taken: t.steps.indexOf(current) >= 0, dist, text: edgeText(t.steps), box: { x: 0, y: 0, w: 0, h: 0 } };
  if (t.a === t.b)
    return {
      ...base,
      d: "M" + (x1 - 15) + ",0 C" + (x1 - 30) + ",-45 " + (x1 + 30) + ",-45 " + (x1 + 15) + ",0",
      lx: x1,
      ly: -38,
      dir: -1,
      reach: -34,
    };
  if (x2 > x1)
    return {
      ...base,
      d: "M" + (x1 + 10) + ",0 Q" + (x1 + x2) / 2 + "," + -2 * hgt + " " + (x2 - 10) + ",0",
      lx: (x1 + x2) / 2,
      ly: -hgt - 4,
      dir: -1,
      reach: -hgt,
    };
  const d = "M" + (x1 - 10) + "," + H + " Q" + (x1 + x2) / 2 + "," + (H + 2 * hgt) + " " + (x2 + 10) + "," + H;
  return { ...base, d, lx: (x1 + x2) / 2, ly: H + hgt + 12, dir: 1, reach: H + hgt };
}

/**
 * The edges of the walk, labels placed.
 * @param {StepRecord[]} recs
 * @param {Record<string, number>} pos
 * @param {number} current
 */
function layoutEdges(recs, pos, current) {
  const W = G.W;
  const H = G.H;
  /** @type {Record<string, { a: string, b: string, steps: number[] }>} */
  const byKey = {};
  /** @type {{ a: string, b: string, steps: number[] }[]} */
  const walk = [];
  for (let i = 0; i + 1 < recs.length; i++) {
    const k = recs[i].node + "\u0000" + recs[i + 1].node;
    if (!byKey[k]) walk.push((byKey[k] = { a: recs[i].node, b: recs[i + 1].node, steps: [] }));
    byKey[k].steps.push(i + 1);
  }
  const edges = walk.map((t) => arc(t, pos, current));
  // nodes are obstacles; shorter arcs (nearer the nodes) are placed first
  const placed = Object.keys(pos).map((n) => ({ x: pos[n] - 2, y: -2, w: W + 4, h: H + 4 }));
  for (const e of edges.slice().sort((p, q) => p.dist - q.dist)) {
    const w = e.text.length * G.CHAR + 6;
    const box = { x: e.lx - w / 2, y: e.ly - 10, w, h: G.LH };
    for (let tries = 0; tries < 200 && placed.some((p) => overlaps(box, p)); tries++) {
      box.y += e.dir * G.LH;
      e.ly += e.dir * G.LH;
    }
    placed.push(box);
    e.box = box;
  }
  return edges;
}

/**
 * Record visits are 0-based; people count from 1 ("visit 1" is the first).
 * @param {number[]} visits
 */
function visitsText(visits) {
  const n = visits.map((v) => v + 1);
  return (n.length > 1 ? "visits " : "visit ") + (n.length <= 4 ? n.join(",") : n.slice(0, 3).join(",") + ",… (" + n.length + "×)");
}

/**
 * Draws the walk of `recs` into #graph, record `current` highlighted; a click on a node picks its first record.
 * @param {StepRecord[]} recs
 * @param {number} current
 * @param {(index: number) => void} pick
 */
export function renderGraph(recs, current, pick) {
  const W = G.W;
  const H = G.H;
  const GAP = G.GAP;
  /** @type {string[]} */
  const order = [];
  /** @type {Record<string, { kind: string, role: string | null, visits: number[] }>} */
  const info = {};
  for (const r of recs) {
    if (!info[r.node]) {
      info[r.node] = { kind: r.kind, role: r.role, visits: [] };
      order.push(r.node);
    }
    info[r.node].visits.push(r.visit);
  }
  /** @type {Record<string, number>} */
  const pos = {};
  order.forEach((n, i) => {
    pos[n] = GAP + i * (W + GAP);
  });
  const edges = layoutEdges(recs, pos, current);
  let top = -50;
  let bottom = H + 20;
  for (const e of edges) {
    top = Math.min(top, e.box.y, e.reach);
    bottom = Math.max(bottom, e.box.y + e.box.h, e.reach);
  }
  top -= 8;
  bottom += 8;
  const width = Math.max(400, order.length * (W + GAP) + GAP);
  const root = svg("svg", { width, height: bottom - top, "data-testid": "graph-svg" });
  root
    .appendChild(svg("defs", {}))
    .appendChild(
      svg("marker", {
        id: "arrow",
        viewBox: "0 0 10 10",
        refX: "9",
        refY: "5",
        markerWidth: "6",
        markerHeight: "6",
        orient: "auto-start-reverse",
      }),
    )
    .appendChild(svg("path", { d: "M0,0 L10,5 L0,10 z", style: "fill:#9aa4b2;stroke:none" }));
  const g0 = root.appendChild(svg("g", { transform: "translate(0," + -top + ")" }));
  for (const e of edges) g0.appendChild(svg("path", { d: e.d, "marker-end": "url(#arrow)", class: e.taken ? "taken" : "" }));
  const cur = recs[current]?.node;
  for (const n of order) {
    const g = svg("g", {
      class: (n === cur ? "active " : "") + info[n].kind,
      "data-testid": "graph-node",
      "data-node": n,
      style: "cursor:pointer",
    });
    g.addEventListener("click", () => {
      const j = recs.findIndex((r) => r.node === n);
      if (j >= 0) pick(j);
    });
    g.appendChild(svg("rect", { x: pos[n], y: 0, width: W, height: H, rx: 6 }));
    g.appendChild(svg("text", { x: pos[n] + W / 2, y: 19 }, n));
    const what = info[n].role ? "role " + info[n].role : info[n].kind;
    g.appendChild(svg("text", { x: pos[n] + W / 2, y: 36, class: "small" }, what + " · " + visitsText(info[n].visits)));
    g0.appendChild(g);
  }
  // labels last: drawn over the arcs
  for (const e of edges) {
    const g = g0.appendChild(svg("g", {}));
    g.appendChild(svg("title", {}, e.a + " → " + e.b + ": transitions " + e.steps.join(", ")));
    g.appendChild(svg("text", { x: e.lx, y: e.ly, class: "edge-label" + (e.taken ? " taken" : ""), "data-testid": "edge-label" }, e.text));
  }
  const box = $("graph");
  box.textContent = "";
  box.appendChild(root);
}
