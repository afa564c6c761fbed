// Hand-drawn SVG charts: line charts (linear or log x) and grouped bars.
"use strict";

const SVGNS = "http://www.w3.org/2000/svg";
const W = 380, H = 210, M = { l: 48, r: 10, t: 8, b: 30 };

function el(name, attrs, parent) {
  const e = document.createElementNS(SVGNS, name);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (parent) parent.appendChild(e);
  return e;
}

function text(parent, x, y, s, anchor, extra) {
  const t = el("text", Object.assign({ x, y, "text-anchor": anchor || "middle" }, extra || {}), parent);
  t.textContent = s;
  return t;
}

// niceTicks returns about n round values covering [lo, hi].
function niceTicks(lo, hi, n) {
  if (!(hi > lo)) hi = lo + 1;
  const raw = (hi - lo) / n, mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 2.5, 5, 10].map(m => m * mag).find(s => s >= raw);
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(+v.toPrecision(12));
  return out;
}

function logTicks(lo, hi) {
  const out = [];
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
    for (const m of [1, 2, 5]) {
      const v = m * Math.pow(10, e);
      if (v >= lo && v <= hi) out.push(v);
    }
  }
  return out;
}

function fmtTick(v) {
  if (v >= 10000) return (v / 1000).toFixed(0) + "k";
  if (v >= 1000) return (v / 1000).toFixed(v % 1000 ? 1 : 0) + "k";
  return String(+v.toPrecision(3));
}

// lineChart draws series [{name, color, points: [[x, y]...], dash}] into
// box. opt: {xlabel, ylabel, xlog, ymin, ymax, xmin, xmax, marker, yfmt, empty}.
function lineChart(box, series, opt) {
  const svg = el("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": opt.ylabel + " against " + opt.xlabel });
  const pts = series.flatMap(s => s.points.filter(p => isFinite(p[0]) && isFinite(p[1]) && (!opt.xlog || p[0] > 0)));
  if (!pts.length) {
    text(svg, W / 2, H / 2, opt.empty || "computing…", "middle", { class: "empty" });
    box.replaceChildren(svg);
    return;
  }
  let x0 = opt.xmin ?? Math.min(...pts.map(p => p[0])), x1 = opt.xmax ?? Math.max(...pts.map(p => p[0]));
  let y0 = opt.ymin ?? Math.min(opt.ylog ? Infinity : 0, ...pts.map(p => p[1])), y1 = opt.ymax ?? Math.max(...pts.map(p => p[1]));
  if (opt.ylog) { y0 = Math.max(y0 / 1.3, 1e-3); y1 = Math.max(y1 * 1.3, y0 * 10); }
  if (opt.xlog) { x0 = Math.max(x0, 1e-3); if (x1 <= x0) x1 = x0 * 10; }
  if (x1 <= x0) { x0 -= 1; x1 += 1; }
  if (y1 <= y0) y1 = y0 + 1;
  const yt = opt.ylog ? logTicks(y0, y1) : niceTicks(y0, y1 * (opt.ymax === undefined ? 1.05 : 1), 5);
  if (opt.ymax === undefined && !opt.ylog) y1 = Math.max(y1, yt[yt.length - 1]);
  const pw = W - M.l - M.r, ph = H - M.t - M.b;
  const X = opt.xlog ? v => M.l + pw * (Math.log(v) - Math.log(x0)) / (Math.log(x1) - Math.log(x0))
                     : v => M.l + pw * (v - x0) / (x1 - x0);
  const Y = opt.ylog ? v => M.t + ph * (1 - (Math.log(v) - Math.log(y0)) / (Math.log(y1) - Math.log(y0)))
                     : v => M.t + ph * (1 - (v - y0) / (y1 - y0));
  const yfmt = opt.yfmt || fmtTick;
  for (const v of yt) {
    if (v < y0 || v > y1) continue;
    el("line", { x1: M.l, x2: W - M.r, y1: Y(v), y2: Y(v), class: "grid" }, svg);
    text(svg, M.l - 4, Y(v) + 3, yfmt(v), "end");
  }
  const xt = opt.xlog ? logTicks(x0, x1) : (opt.xint ? niceTicks(x0, x1, 8).filter(v => Number.isInteger(v)) : niceTicks(x0, x1, 6));
  for (const v of xt) {
    el("line", { x1: X(v), x2: X(v), y1: H - M.b, y2: H - M.b + 3, class: "axis" }, svg);
    text(svg, X(v), H - M.b + 13, fmtTick(v));
  }
  el("line", { x1: M.l, x2: W - M.r, y1: H - M.b, y2: H - M.b, class: "axis" }, svg);
  el("line", { x1: M.l, x2: M.l, y1: M.t, y2: H - M.b, class: "axis" }, svg);
  text(svg, M.l + pw / 2, H - 3, opt.xlabel);
  text(svg, 10, M.t + ph / 2, opt.ylabel, "middle", { transform: `rotate(-90 10 ${M.t + ph / 2})` });
  if (opt.marker !== undefined && opt.marker >= x0 && opt.marker <= x1) {
    el("line", { x1: X(opt.marker), x2: X(opt.marker), y1: M.t, y2: H - M.b, class: "sel" }, svg);
  }
  for (const s of series) {
    const p = s.points.filter(q => isFinite(q[0]) && isFinite(q[1]) && (!opt.xlog || q[0] > 0));
    if (!p.length) continue;
    const d = p.map((q, i) => (i ? "L" : "M") + X(q[0]).toFixed(1) + " " + Y(Math.min(q[1], y1)).toFixed(1)).join("");
    el("path", { d, fill: "none", stroke: s.color, "stroke-width": 1.8, "stroke-dasharray": s.dash || "none" }, svg);
    if (s.dots) for (const q of p) el("circle", { cx: X(q[0]), cy: Y(Math.min(q[1], y1)), r: 2.6, fill: s.color }, svg);
  }
  legend(svg, series, opt.legendAt || "right");
  if (opt.note) text(svg, M.l + pw / 2, M.t + ph / 2, opt.note, "middle", { class: "empty" });
  box.replaceChildren(svg);
}

// barChart draws groups [{name, color, values: [...]}] side by side.
function barChart(box, groups, opt) {
  const svg = el("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": opt.ylabel });
  const all = groups.flatMap(g => g.values);
  if (!all.length) {
    text(svg, W / 2, H / 2, opt.empty || "computing…", "middle", { class: "empty" });
    box.replaceChildren(svg);
    return;
  }
  const pw = W - M.l - M.r, ph = H - M.t - M.b, y1 = opt.ymax || Math.max(...all);
  const Y = v => M.t + ph * (1 - v / y1);
  for (const v of niceTicks(0, y1, 5)) {
    el("line", { x1: M.l, x2: W - M.r, y1: Y(v), y2: Y(v), class: "grid" }, svg);
    text(svg, M.l - 4, Y(v) + 3, (opt.yfmt || fmtTick)(v), "end");
  }
  const gw = pw / groups.length;
  groups.forEach((g, i) => {
    const bw = Math.max(1, (gw - 8) / Math.max(g.values.length, 1));
    g.values.forEach((v, j) => {
      el("rect", { x: M.l + i * gw + 4 + j * bw, y: Y(v), width: Math.max(bw - 1, 0.5), height: Y(0) - Y(v), fill: g.color }, svg);
    });
    text(svg, M.l + i * gw + gw / 2, H - M.b + 13, g.name);
  });
  el("line", { x1: M.l, x2: W - M.r, y1: H - M.b, y2: H - M.b, class: "axis" }, svg);
  el("line", { x1: M.l, x2: M.l, y1: M.t, y2: H - M.b, class: "axis" }, svg);
  text(svg, 10, M.t + ph / 2, opt.ylabel, "middle", { transform: `rotate(-90 10 ${M.t + ph / 2})` });
  if (opt.xlabel) text(svg, M.l + pw / 2, H - 3, opt.xlabel);
  box.replaceChildren(svg);
}

// table renders rows (arrays of strings; the first is the row's policy)
// under head into box, with a note below.
function table(box, head, rows, note, cls) {
  const t = document.createElement("table");
  const tr = t.insertRow();
  for (const h of head) { const th = document.createElement("th"); th.textContent = h; tr.appendChild(th); }
  for (const r of rows) {
    const row = t.insertRow();
    row.dataset.policy = r[0];
    r.forEach((c, i) => { const td = row.insertCell(); td.textContent = c; if (cls && cls[i]) td.className = cls[i]; });
  }
  const parts = [t];
  if (note) { const p = document.createElement("p"); p.className = "note"; p.textContent = note; parts.push(p); }
  box.replaceChildren(...parts);
}

// legend names each series in its colour, in the plot's top corner
// (where: "right", "left", "bottom right", "bottom left"), on a white backing.
function legend(svg, series, where) {
  const rows = series.filter(s => s.name);
  if (!rows.length) return;
  const w = 12 + 6 * Math.max(...rows.map(s => s.name.length)), h = 13 * rows.length + 4;
  const x = where.includes("left") ? M.l + 6 : W - M.r - w - 4, y = where.includes("bottom") ? H - M.b - h - 4 : M.t + 4;
  el("rect", { x, y, width: w, height: h, fill: "#fff", "fill-opacity": 0.85, stroke: "#e1e4ea" }, svg);
  rows.forEach((s, i) => {
    el("line", { x1: x + 4, x2: x + 14, y1: y + 9 + 13 * i, y2: y + 9 + 13 * i, stroke: s.color, "stroke-width": 2.5 }, svg);
    text(svg, x + 18, y + 12 + 13 * i, s.name, "start");
  });
}
