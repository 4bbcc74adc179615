// Browser script (a string, see page-script.ts): the path graph of one episode. Nodes in order of
// first visit; one arc per distinct transition (forward above, backward below, self-loops on top)
// labelled with the transition numbers that took it. Labels are placed so that none overlaps another
// label or a node: each starts at its arc's apex and moves outward until it is clear.
export const GRAPH_SCRIPT = String.raw`
  var G = { W: 130, H: 46, GAP: 40, CHAR: 6.2, LH: 13 };

  function edgeText(steps) { return steps.length <= 4 ? steps.join(",") : steps.slice(0, 3).join(",") + ",… (" + steps.length + "×)"; }
  function overlaps(a, b) { return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h; }

  // edges of the walk: { a, b, steps, d, label: { x, y, box }, taken }
  function layoutEdges(recs, pos, current) {
    var W = G.W, H = G.H, byKey = {}, edges = [];
    for (var i = 0; i + 1 < recs.length; i++) {
      var k = recs[i].node + "\u0000" + recs[i + 1].node;
      if (!byKey[k]) edges.push(byKey[k] = { a: recs[i].node, b: recs[i + 1].node, steps: [] });
      byKey[k].steps.push(i + 1);
    }
    edges.forEach(function (e) {
      var x1 = pos[e.a] + W / 2, x2 = pos[e.b] + W / 2, dist = Math.abs(x2 - x1), hgt = 18 + Math.min(40, dist / 8);
      e.taken = e.steps.indexOf(current) >= 0;
      e.dist = dist;
      if (e.a === e.b) { e.d = "M" + (x1 - 15) + ",0 C" + (x1 - 30) + ",-45 " + (x1 + 30) + ",-45 " + (x1 + 15) + ",0"; e.lx = x1; e.ly = -38; e.dir = -1; e.reach = -34; }
      else if (x2 > x1) { e.d = "M" + (x1 + 10) + ",0 Q" + ((x1 + x2) / 2) + "," + (-2 * hgt) + " " + (x2 - 10) + ",0"; e.lx = (x1 + x2) / 2; e.ly = -hgt - 4; e.dir = -1; e.reach = -hgt; }
      else { e.d = "M" + (x1 - 10) + "," + H + " Q" + ((x1 + x2) / 2) + "," + (H + 2 * hgt) + " " + (x2 + 10) + "," + H; e.lx = (x1 + x2) / 2; e.ly = H + hgt + 12; e.dir = 1; e.reach = H + hgt; }
      e.text = edgeText(e.steps);
    });
    // nodes are obstacles; shorter arcs (nearer the nodes) are placed first
    var placed = Object.keys(pos).map(function (n) { return { x: pos[n] - 2, y: -2, w: W + 4, h: H + 4 }; });
    edges.slice().sort(function (p, q) { return p.dist - q.dist; }).forEach(function (e) {
      var w = e.text.length * G.CHAR + 6, box = { x: e.lx - w / 2, y: e.ly - 10, w: w, h: G.LH };
      for (var tries = 0; tries < 200 && placed.some(function (p) { return overlaps(box, p); }); tries++) { box.y += e.dir * G.LH; e.ly += e.dir * G.LH; }
      placed.push(box);
      e.box = box;
    });
    return edges;
  }

  // record visits are 0-based; people count from 1 ("visit 1" is the first)
  function visitsText(visits) {
    var n = visits.map(function (v) { return v + 1; });
    return (n.length > 1 ? "visits " : "visit ") + (n.length <= 4 ? n.join(",") : n.slice(0, 3).join(",") + ",… (" + n.length + "×)");
  }

  function renderGraph() {
    var recs = S.view.traj.records, order = [], info = {}, W = G.W, H = G.H, GAP = G.GAP;
    recs.forEach(function (r) {
      if (!info[r.node]) { info[r.node] = { kind: r.kind, role: r.role, visits: [] }; order.push(r.node); }
      info[r.node].visits.push(r.visit);
    });
    var pos = {};
    order.forEach(function (n, i) { pos[n] = GAP + i * (W + GAP); });
    var edges = layoutEdges(recs, pos, S.view.rec);
    var top = -50, bottom = H + 20;
    edges.forEach(function (e) { top = Math.min(top, e.box.y, e.reach); bottom = Math.max(bottom, e.box.y + e.box.h, e.reach); });
    top -= 8; bottom += 8;
    var width = Math.max(400, order.length * (W + GAP) + GAP);
    var root = svg("svg", { width: width, height: bottom - top, "data-testid": "graph-svg" });
    root.appendChild(svg("defs", {})).appendChild(svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: "9", refY: "5", markerWidth: "6", markerHeight: "6", orient: "auto-start-reverse" })).appendChild(svg("path", { d: "M0,0 L10,5 L0,10 z", style: "fill:#9aa4b2;stroke:none" }));
    var g0 = root.appendChild(svg("g", { transform: "translate(0," + -top + ")" }));
    edges.forEach(function (e) { g0.appendChild(svg("path", { d: e.d, "marker-end": "url(#arrow)", class: e.taken ? "taken" : "" })); });
    var cur = recs[S.view.rec] && recs[S.view.rec].node;
    order.forEach(function (n) {
      var g = svg("g", { class: (n === cur ? "active " : "") + info[n].kind, "data-testid": "graph-node", "data-node": n, style: "cursor:pointer" });
      g.addEventListener("click", function () { for (var j = 0; j < recs.length; j++) if (recs[j].node === n) return selectRecord(j); });
      g.appendChild(svg("rect", { x: pos[n], y: 0, width: W, height: H, rx: 6 }));
      g.appendChild(svg("text", { x: pos[n] + W / 2, y: 19 }, n));
      g.appendChild(svg("text", { x: pos[n] + W / 2, y: 36, class: "small" }, (info[n].role ? "role " + info[n].role : info[n].kind) + " · " + visitsText(info[n].visits)));
      g0.appendChild(g);
    });
    // labels last: drawn over the arcs
    edges.forEach(function (e) {
      var g = g0.appendChild(svg("g", {}));
      g.appendChild(svg("title", {}, e.a + " → " + e.b + ": transitions " + e.steps.join(", ")));
      g.appendChild(svg("text", { x: e.lx, y: e.ly, class: "edge-label" + (e.taken ? " taken" : ""), "data-testid": "edge-label" }, e.text));
    });
    var box = $("graph");
    box.textContent = "";
    box.appendChild(root);
  }
`;
