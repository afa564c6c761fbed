// routesim explore: the controls, the stream of simulated points, and
// the figures drawn from them.
"use strict";

// One colour per registered policy, in the registry's (alphabetical)
// order, all distinct: round-robin blue, kv red.
const COLORS = ["#8c564b", "#e377c2", "#d62728", "#9467bd", "#ff7f0e", "#2ca02c", "#17becf", "#bcbd22", "#7f7f7f",
  "#393b79", "#a55194", "#637939", "#1f77b4", "#843c39", "#e7ba52", "#6b6ecf", "#b5cf6b", "#ce6dbd"];
const $ = id => document.getElementById(id);
const state = {
  meta: null,
  results: new Map(), // cfg|policy|n|seed → point
  client: Math.random().toString(36).slice(2),
  abort: null,
  gen: 0,          // requests sent
  changedAt: 0,    // performance.now() of the last control change
  pending: 0,      // detail points the current request still owes
  plan: null,
};
window.explore = { latencies: [], generation: 0 };

function colorOf(policy) {
  const i = state.meta.policies.findIndex(p => p.name === policy);
  return COLORS[i % COLORS.length];
}

// request reads the controls into the API's request.
function request() {
  const m = state.meta, flags = {};
  for (const id of ["gpu", "model", "tp", "dynamo-version", "vllm-version"]) {
    if ($(id).value !== "") flags[id] = $(id).value;
  }
  if (m.workload === "sessions") flags["concurrency"] = $("concurrency").value;
  else flags["rate-scale"] = $("rate-scale").value;
  const knobs = {};
  for (const inp of document.querySelectorAll("#knobs [data-flag]")) {
    if (inp.value !== "") knobs[inp.dataset.flag] = inp.value;
  }
  const policies = [...document.querySelectorAll("#policies input:checked")].map(i => i.value);
  return {
    client: state.client, flags, knobs, policies,
    n: +$("n").value, ns: $("ns").value.trim(),
    seed: +$("seed").value, seeds: +$("seeds").value,
  };
}

// cfgKey identifies the settings a point depends on besides N, policy
// and seed.
function cfgKey(req) { return JSON.stringify([req.flags, req.knobs]); }
function pointKey(cfg, policy, n, seed) { return cfg + "|" + policy + "|" + n + "|" + seed; }

function setupControls(m) {
  const fill = (id, values, cur, labels) => {
    $(id).replaceChildren(...values.map((v, i) => new Option(labels ? labels[i] : v, v)));
    $(id).value = cur;
  };
  const init = m.initial, f = init.flags || {}, bv = m.base_values || {};
  const base = (k, fallback) => "base: " + (bv[k] || fallback);
  fill("gpu", ["", ...m.gpus], f.gpu || "", [base("gpu"), ...m.gpus]);
  fill("model", ["", ...m.models], f.model || "", [base("model"), ...m.models]);
  fill("dynamo-version", ["", ...m.dynamo_versions], f["dynamo-version"] || "", [base("dynamo-version", "1.2.0"), ...m.dynamo_versions]);
  fill("vllm-version", ["", ...m.vllm_versions], f["vllm-version"] || "", [base("vllm-version", m.default_vllm_version), ...m.vllm_versions]);
  $("tp").value = f.tp || "";
  $("tp").placeholder = base("tp", "1");
  $("n").max = Math.min(m.max_n, 64);
  $("n").value = init.n;
  $("ns").value = init.ns;
  $("seed").value = init.seed;
  $("seeds").value = init.seeds;
  $("seeds").max = m.max_seeds;
  if (m.workload === "sessions") {
    $("rate-box").hidden = true;
    $("users-box").hidden = false;
    $("concurrency").value = f.concurrency;
  } else {
    $("rate-scale").value = f["rate-scale"];
    $("rate-range").value = Math.log2(+f["rate-scale"]);
  }
  $("policies").replaceChildren(...m.policies.map(p => {
    const l = document.createElement("label");
    l.title = p.summary;
    const c = document.createElement("input");
    c.type = "checkbox"; c.value = p.name; c.id = "pol-" + p.name;
    c.checked = init.policies.includes(p.name);
    const sw = document.createElement("span");
    sw.className = "swatch"; sw.style.background = colorOf(p.name);
    l.append(c, sw, p.name);
    return l;
  }));
  $("scenario-line").textContent = "base: routesim run " + m.base.join(" ") + " · " + m.workers + " simulation" + (m.workers > 1 ? "s" : "") + " at once";
  drawKnobs();
  $("form").addEventListener("input", ev => {
    if (ev.target.id === "rate-range") $("rate-scale").value = (+Math.pow(2, +ev.target.value).toPrecision(4)).toString();
    if (ev.target.id === "rate-scale" && +ev.target.value > 0) $("rate-range").value = Math.log2(+ev.target.value);
    if (ev.target.closest("#policies")) drawKnobs();
    if (ev.target.type === "text" || ev.target.type === "number") { clearTimeout(state.typing); state.typing = setTimeout(changed, 250); return; }
    changed();
  });
  $("form").addEventListener("submit", ev => ev.preventDefault());
  $("cancel").addEventListener("click", () => { if (state.abort) state.abort.abort(); finish("cancelled: figures show what had finished"); });
}

// drawKnobs shows the parameters of the checked policies, each once.
function drawKnobs() {
  const old = {};
  for (const inp of document.querySelectorAll("#knobs [data-flag]")) old[inp.dataset.flag] = inp.value;
  const seen = new Set(), groups = [];
  for (const c of document.querySelectorAll("#policies input:checked")) {
    const p = state.meta.policies.find(q => q.name === c.value);
    const knobs = p.knobs.filter(k => !seen.has(k.flag));
    knobs.forEach(k => seen.add(k.flag));
    if (!knobs.length) continue;
    const g = document.createElement("div");
    g.className = "knob-group";
    const h = document.createElement("h3");
    h.textContent = p.name;
    g.appendChild(h);
    for (const k of knobs) {
      const l = document.createElement("label");
      l.textContent = "--" + k.flag;
      l.title = k.help;
      const inp = k.choices ? document.createElement("select") : document.createElement("input");
      if (k.choices) inp.replaceChildren(new Option("default (" + k.default + ")", ""), ...k.choices.map(v => new Option(v, v)));
      else { inp.type = "text"; inp.placeholder = "default " + k.default; }
      inp.dataset.flag = k.flag;
      inp.title = k.help;
      inp.value = old[k.flag] || "";
      l.appendChild(inp);
      g.appendChild(l);
    }
    groups.push(g);
  }
  $("knobs").replaceChildren(...groups);
}

function changed() {
  state.changedAt = performance.now();
  $("n-out").textContent = $("n").value;
  $("rate-out").textContent = "×" + $("rate-scale").value;
  simulate();
}

// simulate sends the view's request (cancelling the previous one) and
// folds the streamed points into the results as they come.
async function simulate() {
  if (state.abort) state.abort.abort();
  const ctl = new AbortController(), gen = ++state.gen, req = request(), cfg = cfgKey(req);
  state.abort = ctl;
  state.req = req;
  state.pending = req.policies.length;
  state.plan = null;
  state.detailShown = false;
  document.body.dataset.state = "computing";
  $("status").textContent = "computing…";
  $("cancel").disabled = false;
  safeRender();
  let done = 0, total = 0;
  const onEvent = ev => {
    if (gen !== state.gen) return;
    if (ev.type === "point") {
      const p = ev.point, key = pointKey(cfg, p.policy, p.n, p.seed), had = state.results.get(key);
      if (!p.series && had && had.series) p.series = had.series; // curves' points come without them
      state.results.set(key, p);
      done++;
    } else if (ev.type === "plan") {
      state.plan = ev;
      state.goodReq = req;
      total = ev.total;
      $("sweep-cmd").textContent = ev.sweep;
      $("error").hidden = true;
    } else if (ev.type === "error") {
      showError(ev.error);
    } else if (ev.type === "done") {
      finish(`${total} simulations (${(state.plan && state.plan.cached) || 0} cached) in ${ev.elapsed_ms.toFixed(0)} ms`);
    }
    $("progress").max = Math.max(total, 1);
    $("progress").value = done;
    if (document.body.dataset.state === "computing") $("status").textContent = `computing… ${done} of ${total || "?"} simulations`;
    scheduleRender();
  };
  try {
    await (window.EXPLORE_STATIC ? viaWorker : viaServer)(req, ctl.signal, onEvent);
  } catch (e) {
    if (gen === state.gen && e.name !== "AbortError") fail(e.message || String(e));
  }
}

// viaServer posts the request to routesim explore and hands on the
// events it streams; a refusal is thrown with the server's text.
async function viaServer(req, signal, onEvent) {
  const resp = await fetch("api/simulate", { method: "POST", body: JSON.stringify(req), signal, headers: { "Content-Type": "application/json" } });
  if (!resp.ok) throw new Error((await resp.text()).trim());
  const reader = resp.body.getReader(), dec = new TextDecoder();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += dec.decode(value, { stream: true });
    let i;
    while ((i = buf.indexOf("\n")) >= 0) {
      onEvent(JSON.parse(buf.slice(0, i)));
      buf = buf.slice(i + 1);
    }
  }
}

// viaWorker runs the request in the WebAssembly simulator (the exported
// page); a newer request terminates the worker of the older one.
function viaWorker(req, signal, onEvent) {
  return new Promise((resolve, reject) => {
    if (!state.worker) state.worker = new Worker("worker.js");
    const w = state.worker;
    signal.addEventListener("abort", () => {
      w.terminate();
      if (state.worker === w) state.worker = null;
      reject(new DOMException("superseded", "AbortError"));
    });
    w.onmessage = m => {
      if (m.data.line !== undefined) onEvent(JSON.parse(m.data.line));
      if (m.data.end) m.data.error ? reject(new Error(m.data.error)) : resolve();
    };
    w.postMessage({ request: req });
  });
}

function finish(msg) {
  document.body.dataset.state = "ready";
  $("status").textContent = msg;
  $("cancel").disabled = true;
  safeRender();
}

function fail(msg) {
  document.body.dataset.state = "error";
  $("status").textContent = state.goodReq ? "settings refused: the figures show the last accepted ones" : "settings refused";
  $("cancel").disabled = true;
  showError(msg);
}

function showError(msg) {
  $("error").textContent = msg;
  $("error").hidden = false;
}

let rafPending = false;
function scheduleRender() {
  if (rafPending) return;
  rafPending = true;
  requestAnimationFrame(() => { rafPending = false; safeRender(); });
}

// safeRender draws the figures; a drawing bug is shown, never left to
// stop the request that follows.
function safeRender() {
  try {
    render();
  } catch (e) {
    showError("drawing failed: " + e + "\n" + (e.stack || ""));
  }
}
