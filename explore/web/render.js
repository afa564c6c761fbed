// render draws every figure and its numbers from the results the current
// view needs (those not yet computed are left out).
"use strict";

function parseNs(s) {
  const out = new Set();
  for (const part of s.split(",")) {
    const m = part.trim().match(/^(\d+)(?:\.\.(\d+)(?::(\d+))?)?$/);
    if (!m) return null;
    const a = +m[1], b = m[2] ? +m[2] : a, st = m[3] ? +m[3] : 1;
    for (let v = a; v <= b && st > 0; v += st) out.add(v);
  }
  return [...out].sort((x, y) => x - y);
}

const fmt1 = v => (v === null || v === undefined || !isFinite(v)) ? "-" : v.toFixed(1);
const pct = v => (100 * v).toFixed(1) + "%";
const mean = xs => xs.reduce((a, b) => a + b, 0) / xs.length;

function render() {
  if (!state.req) return;
  // Until the current view's first points arrive (or if its settings were
  // refused), the last accepted view stays on screen, dimmed.
  const ready = r => r && r.policies.some(pol => { const p = state.results.get(pointKey(cfgKey(r), pol, r.n, r.seed)); return p && p.series; });
  const req = ready(state.req) || !state.goodReq ? state.req : state.goodReq;
  document.body.dataset.stale = req !== state.req;
  const cfg = cfgKey(req);
  const ns = parseNs(req.ns) || [];
  if (!ns.includes(req.n)) { ns.push(req.n); ns.sort((a, b) => a - b); }
  const seeds = [];
  for (let k = 0; k < req.seeds; k++) seeds.push(req.seed + k);
  const get = (pol, n, seed) => state.results.get(pointKey(cfg, pol, n, seed));
  const pols = req.policies;
  const curve = f => pols.map(pol => ({
    name: pol, color: colorOf(pol), dots: true,
    points: ns.map(n => {
      const vs = seeds.map(s => get(pol, n, s)).filter(Boolean).map(f).filter(v => v !== null && isFinite(v));
      return [n, vs.length ? mean(vs) : NaN];
    }),
  }));
  const seedNote = req.seeds > 1 ? `curves: mean of ${req.seeds} seeds from ${req.seed}; ` : "";
  lineChart(figPlot("fig-completeness"), curve(p => 100 * p.summary.completeness),
    { xlabel: "workers N", ylabel: "completeness (%)", xint: true, marker: req.n, yfmt: v => v + "%", legendAt: "bottom right" });
  lineChart(figPlot("fig-ttft"), curve(p => p.summary.ttft_ms.count ? p.summary.ttft_ms.p50 : null),
    { xlabel: "workers N", ylabel: "TTFT p50 (ms, log)", xint: true, marker: req.n, ylog: true });
  const detail = pols.map(pol => get(pol, req.n, req.seed)).filter(p => p && p.series);
  const at = `at N = ${req.n}, seed ${req.seed}`;
  table(figNumbers("fig-completeness"), ["policy", "completeness", "completed", "not served"],
    detail.map(p => [p.policy, pct(p.summary.completeness), String(p.summary.completed), String(p.summary.offered - p.summary.completed)]),
    `${at}, of ${detail.length ? detail[0].summary.offered : "-"} offered; ${seedNote}as routesim run prints them`, [null, "completeness", "completed", "lost"]);
  table(figNumbers("fig-ttft"), ["TTFT (ms)", "avg", "p50", "p90", "p99"],
    detail.map(p => [p.policy, fmt1(p.summary.ttft_ms.avg), fmt1(p.summary.ttft_ms.p50), fmt1(p.summary.ttft_ms.p90), fmt1(p.summary.ttft_ms.p99)]),
    `${at}; over completed requests`, [null, "ttft-avg", "ttft-p50", "ttft-p90", "ttft-p99"]);
  const offered = (p, k) => p.summary.ttft_offered_ms[k] === null ? "undefined" : fmt1(p.summary.ttft_offered_ms[k]);
  lineChart(figPlot("fig-cdf"), detail.map(p => ({
    name: p.policy, color: colorOf(p.policy),
    points: p.series.ttft_cdf_ms.map((v, i) => [v === null ? NaN : v, 100 * i / (p.series.ttft_cdf_ms.length - 1)]).filter(q => isFinite(q[0])),
  })), { xlabel: "TTFT (ms, log)", ylabel: "offered requests (%)", xlog: true, ymin: 0, ymax: 100, yfmt: v => v + "%", legendAt: "left" });
  table(figNumbers("fig-cdf"), ["offered TTFT (ms)", "p50", "p90", "p99"],
    detail.map(p => [p.policy, offered(p, "p50"), offered(p, "p90"), offered(p, "p99")]),
    "requests not served count as ∞: the curve stops at the completeness; undefined = a quantile on an unserved request");
  lineChart(figPlot("fig-decile"), detail.map(p => ({
    name: p.policy, color: colorOf(p.policy), dots: true,
    points: p.series.decile_ttft_ms.map((v, i) => [i + 1, v === null ? NaN : v]),
  })), { xlabel: "arrival decile", ylabel: "mean TTFT (ms)", xmin: 1, xmax: 10, xint: true, legendAt: "bottom right" });
  table(figNumbers("fig-decile"), ["policy", "1st decile", "10th decile", "lost, 10th"],
    detail.map(p => { const d = p.series.decile_ttft_ms; return [p.policy, fmt1(d[0]), fmt1(d[9]), pct(p.series.decile_not_served[9])]; }),
    "mean TTFT (ms); a rising line is the queue building up over the trace; lost = not served");
  lineChart(figPlot("fig-overload"), detail.map(p => ({
    name: p.policy, color: colorOf(p.policy),
    points: p.series.overload.map((c, i) => [(i + 0.5) * p.series.bin_s, c / p.series.bin_s]),
  })), { xlabel: "simulated time (s)", ylabel: "overload responses / s", xmin: 0,
    note: detail.length && detail.every(p => p.series.overload.every(c => c === 0)) ? "no 503 or 529 at this load" : undefined });
  table(figNumbers("fig-overload"), ["policy", "503/529", "peak /s", "busy", "queue full"],
    detail.map(p => {
      const o = p.series.overload, tot = o.reduce((a, b) => a + b, 0);
      return [p.policy, String(tot), (Math.max(...o) / p.series.bin_s).toFixed(2), String(p.summary.rejected["rejected-busy"] || 0), String(p.summary.rejected["rejected-backpressure"] || 0)];
    }), "each request's final response; busy = rejected-busy, queue full = rejected-backpressure; bins of " + (detail[0] ? detail[0].series.bin_s.toFixed(1) + " s" : "-"));
  barChart(figPlot("fig-gpu"), detail.map(p => ({
    name: p.policy, color: colorOf(p.policy), values: p.summary.gpu.gpus.map(g => 100 * g.util_mean),
  })), { ylabel: "utilisation (%)", ymax: 100, yfmt: v => v + "%", xlabel: "one bar per GPU" });
  table(figNumbers("fig-gpu"), ["policy", "util", "skew", "power", "max"],
    detail.map(p => [p.policy, (100 * p.summary.gpu.util_mean).toFixed(0) + "%", (100 * p.summary.gpu.util_skew).toFixed(1),
      p.summary.gpu.power_mean_w.toFixed(0) + " W", p.summary.gpu.power_max_w.toFixed(0) + " W"]),
    "mean utilisation (kernel time only) and its spread over GPUs in points; mean and max power, as routesim run's GPU line");
  $("run-cmd").replaceChildren(...detail.map((p, i) => {
    const c = document.createElement("div");
    c.textContent = p.command;
    return c;
  }));
  if (req === state.req && !state.detailShown && detail.length === pols.length && pols.length > 0) {
    state.detailShown = true;
    const ms = performance.now() - state.changedAt;
    window.explore.latencies.push(ms);
    window.explore.generation = state.gen;
    document.body.dataset.generation = state.gen;
    document.body.dataset.latency = ms.toFixed(1);
  }
}

function figPlot(id) { return document.querySelector("#" + id + " .plot"); }
function figNumbers(id) { return document.querySelector("#" + id + " .numbers"); }

async function main() {
  try {
    const r = await fetch(window.EXPLORE_STATIC ? "meta.json" : "api/meta");
    state.meta = await r.json();
  } catch (e) {
    fail("could not load the explorer's settings: " + e);
    return;
  }
  setupControls(state.meta);
  changed();
}

main();
