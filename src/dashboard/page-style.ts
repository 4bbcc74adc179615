// The dashboard page's CSS, as a string served inline. Presentation only. Charts sit in a CSS grid
// whose columns share the width (no fixed pixel widths); the script sizes each plot to its cell.
export const PAGE_CSS = `
*{box-sizing:border-box}
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1d232a;background:#f6f7f9}
header{padding:10px 18px;background:#1d232a;color:#fff;display:flex;gap:18px;align-items:baseline;flex-wrap:wrap}
header h1{font-size:17px;margin:0}
header .meta{color:#b8c0cc;font-size:13px}
main{padding:12px 18px}
section{background:#fff;border:1px solid #dde1e6;border-radius:6px;padding:12px;margin-bottom:14px;min-width:0}
h2{font-size:15px;margin:0 0 8px}
.section-head{display:flex;gap:16px;align-items:center;flex-wrap:wrap;margin-bottom:6px}
.section-head h2{margin:0}
.smooth{margin-left:auto;font-size:13px;display:flex;align-items:center;gap:6px}
.legend{display:flex;flex-wrap:wrap;gap:4px 12px;font-size:12px}
.legend .item{display:inline-flex;align-items:center;gap:4px;max-width:100%;overflow-wrap:anywhere}
.swatch{display:inline-block;width:18px;height:0;border-top:3px solid}
.swatch.dash{border-top-style:dashed}
.kind{margin-top:12px}
.kind h3{font-size:13px;text-transform:uppercase;letter-spacing:.04em;color:#4b5563;margin:0 0 6px;border-bottom:1px solid #eef0f3;padding-bottom:3px}
.chart-grid[hidden]{display:none}
.chart-grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(360px,1fr));gap:12px}
.chart{border:1px solid #eef0f3;border-radius:4px;padding:4px;min-width:0;position:relative}
.chart h4{font-size:13px;margin:2px 6px;font-weight:600;overflow-wrap:anywhere}
.chart .plot{width:100%;min-width:0;overflow:hidden}
.chart .legend{margin:2px 6px}
.chart .note{font-size:12px;color:#8a5a00;margin:0 6px}
.tip{position:absolute;z-index:5;pointer-events:none;background:rgba(29,35,42,.92);color:#fff;font-size:12px;border-radius:4px;padding:4px 7px;white-space:nowrap}
.tip b{display:block;font-weight:600;margin-bottom:2px}
.tip .row{display:flex;gap:6px;align-items:center}
.tip .v{margin-left:auto;padding-left:10px;font-variant-numeric:tabular-nums}
.tip .raw{color:#b8c0cc}
.constants{font-size:12px;color:#4b5563;margin-top:6px;display:flex;flex-wrap:wrap;gap:2px 14px}
.constants b{font-weight:600;color:#374151}
.summary{border-collapse:collapse;font-size:13px}
.summary th{background:#f6f8fa;font-weight:600}
.summary td,.summary th{border:1px solid #e5e7eb;padding:3px 8px;vertical-align:top}
.empty{color:#6b7480;font-style:italic}
.sub{margin-top:10px}
.sub h3{font-size:13px;margin:0 0 4px;color:#374151}
.sub .note{font-size:12px;color:#8a5a00;margin:2px 0}
.warnings ul{margin:0;padding-left:18px;font-size:13px}
.warnings li{margin:2px 0;color:#8a5a00}
.warnings li b{color:#b45309}
.warnings .hint{color:#4b5563;font-size:12px}
.pipeline .run{margin:4px 0 8px;font-size:13px}
.pipeline .group{display:flex;gap:8px;align-items:center;font-size:12px;margin:2px 0}
.pipeline .bar{display:flex;width:240px;height:10px;border:1px solid #d1d5db;border-radius:2px;overflow:hidden;flex:none}
.pipeline .seg{height:100%}
.controls{display:flex;gap:10px;align-items:center;flex-wrap:wrap;margin-bottom:8px}
select,button,input{font:inherit;padding:3px 6px}
input.num{width:6em}
#graph{overflow-x:auto;border:1px solid #eef0f3;border-radius:4px;margin-bottom:10px}
#graph rect{fill:#eef3fb;stroke:#6b8fc7;stroke-width:1.2}
#graph g.active rect{fill:#ffe9b3;stroke:#d08a00;stroke-width:2}
#graph g.tool rect{fill:#eef8ee;stroke:#5c9e5c}
#graph g.function rect,#graph g.agent rect{fill:#f3eef8;stroke:#8e6bb8}
#graph text{font-size:12px;text-anchor:middle;fill:#1d232a}
#graph text.small{font-size:10px;fill:#4b5563}
#graph text.edge-label{font-size:10px;fill:#4b5563;paint-order:stroke;stroke:#fff;stroke-width:3px}
#graph text.edge-label.taken{fill:#b45309;font-weight:600}
#graph path{fill:none;stroke:#9aa4b2;stroke-width:1.2}
#graph path.taken{stroke:#d08a00;stroke-width:2}
.viewer{display:grid;grid-template-columns:minmax(160px,240px) minmax(0,1fr);gap:12px}
#record-list{list-style:none;padding:0;margin:0;max-height:520px;overflow:auto;border:1px solid #eef0f3;border-radius:4px}
#record-list li{padding:4px 8px;cursor:pointer;border-bottom:1px solid #f0f2f5;font-size:13px}
#record-list li.active{background:#ffe9b3}
#record{min-width:0}
#record h3{margin:0 0 6px;font-size:14px}
#record h4{margin:10px 0 4px;font-size:13px;color:#374151}
pre{background:#f6f8fa;border:1px solid #e5e7eb;border-radius:4px;padding:6px 8px;white-space:pre-wrap;word-break:break-word;margin:0;max-height:260px;overflow:auto;font-size:12px}
pre code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace}
.msg{margin-bottom:4px}.msg b{font-size:11px;text-transform:uppercase;color:#6b7480}
table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #e5e7eb;padding:3px 6px;text-align:left;vertical-align:top}
#record table{width:100%;table-layout:fixed}
#record table[data-testid=record-tools] th:first-child{width:14%}
#record table[data-testid=record-tools] th:last-child{width:8%}
.bad{color:#b42318}.good{color:#067647}
`;
