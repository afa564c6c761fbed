#!/usr/bin/env python3
"""Derive routesim's validation tables from the measured runs in routesim's
shared/data (dev-time only; the outputs are committed, nothing reads
shared/ at run or test time):

    python3 validate/data/derive.py ../shared/data

Writes, per case directory: Mooncake-format traces of the measured arrivals
(routesim's own format), measured.json files of the statistics routesim
compares (calib.MeasuredFile), with their citation. Percentiles use numpy's
default (linear between closest ranks), as AIPerf and routesim do.
"""
import csv, json, math, os, sys

def q7(xs, p):
    s = sorted(xs)
    h = p * (len(s) - 1)
    lo = int(math.floor(h))
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (h - lo) * (s[hi] - s[lo])

def dist(prefix, xs, ps):
    out = {prefix + "_avg": sum(xs) / len(xs)}
    for p in ps:
        out["%s_p%d" % (prefix, int(round(p * 100)))] = q7(xs, p)
    return out

def write(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=1, sort_keys=True)
        f.write("\n")

def trace_line(ts_ms, isl, osl, ids):
    return json.dumps({"timestamp": ts_ms, "input_length": isl, "output_length": osl, "hash_ids": ids}) + "\n"

here = os.path.dirname(os.path.abspath(__file__))
shared = sys.argv[1]

# --- LLMServingSim: vLLM 0.19.0 on one RTX 4090, KV-bound and saturated (MIT).
src = os.path.join(shared, "validation/LLMServingSim/bench/examples/RTX4090/Llama-3.1-8B/vllm/requests.jsonl")
rs = [json.loads(l) for l in open(src)]
rs.sort(key=lambda r: r["queued_ts"])
t0 = rs[0]["queued_ts"]
d = os.path.join(here, "rtx4090-llama3.1-8b-llmservingsim")
os.makedirs(d, exist_ok=True)
nid = 0
with open(os.path.join(d, "trace.jsonl"), "w") as f:
    for r in rs:
        n = -(-r["input_toks"] // 512)
        f.write(trace_line(int(round((r["queued_ts"] - t0) * 1000)), r["input_toks"], r["output_toks"], list(range(nid, nid + n))))
        nid += n
ttft = [(r["first_token_ts"] - r["queued_ts"]) * 1000 for r in rs]
e2e = [(r["last_token_ts"] - r["queued_ts"]) * 1000 for r in rs]
itl = [(r["last_token_ts"] - r["first_token_ts"]) * 1000 / (r["output_toks"] - 1) for r in rs if r["output_toks"] > 1]
span = max(r["last_token_ts"] for r in rs) - t0
stats = {}
stats.update(dist("ttft_ms", ttft, [0.1, 0.25, 0.5, 0.75, 0.9, 0.99]))
stats.update(dist("itl_ms", itl, [0.1, 0.5, 0.9]))
stats.update(dist("e2e_ms", e2e, [0.5, 0.9]))
stats["requests_per_s"] = len(rs) / span
write(os.path.join(d, "measured.json"), {"source": "casys-kaist/LLMServingSim @ 5daddb21a545658d5150b535712d0494584b5278 (MIT) bench/examples/RTX4090/Llama-3.1-8B/vllm/requests.jsonl: vLLM 0.19.0 engine timestamps; TTFT = first_token_ts - queued_ts, ITL = (last_token_ts - first_token_ts)/(output_toks - 1), E2E = last_token_ts - queued_ts", "run": "rtx4090", "stats": stats})

# --- llm-d-benchmark: one vLLM replica, Llama-3.1-8B, LMCache multi-round QA (Apache-2.0).
# The same sweep with LMCache (vllm+lmcache/) goes to the case
# llmd-llama3.1-8b-lmbench-lmcache's lmcache/, derived alike (that case's fit
# files are copies of llmd-llama3.1-8b-lmbench's light runs).
for engine, sub in [("vllm", "llmd-llama3.1-8b-lmbench"), ("vllm+lmcache", "llmd-llama3.1-8b-lmbench-lmcache/lmcache")]:
    base = os.path.join(shared, "validation/llm-d-benchmark/data/k8s/lmbenchmark-llama-3-1-8B", engine)
    d = os.path.join(here, sub)
    os.makedirs(d, exist_ok=True)
    for qps in ["0.1", "0.3", "0.5", "0.7", "0.9", "1.1"]:
        rows = list(csv.DictReader(open(os.path.join(base, "LMBench_long_input_output_%s.csv" % qps))))
        rows.sort(key=lambda r: float(r["launch_time"]))
        t0 = float(rows[0]["launch_time"])
        with open(os.path.join(d, "trace-%s.jsonl" % qps), "w") as f:
            for r in rows:
                isl, osl = int(float(r["prompt_tokens"])), int(float(r["generation_tokens"]))
                user, qid = int(r["user_id"]), int(r["question_id"])
                n = -(-isl // 512)
                # The user's long context fills the first 41 Mooncake blocks
                # (20,992 of its 21,073 tokens) of every question it asks; the
                # rest (its tail, earlier answers, the question) is new.
                ids = [user * 1000 + j for j in range(min(n, 41))] + [user * 1000 + 100 + qid * 10 + k for k in range(n - 41)]
                f.write(trace_line(int(round((float(r["launch_time"]) - t0) * 1000)), isl, osl, ids))
        ttft = [float(r["ttft"]) * 1000 for r in rows]
        gen = [float(r["generation_time"]) * 1000 for r in rows]
        e2e = [a + b for a, b in zip(ttft, gen)]
        itl = [g / (float(r["generation_tokens"]) - 1) for g, r in zip(gen, rows)]
        span = max(float(r["finish_time"]) for r in rows) - t0
        stats = {}
        stats.update(dist("ttft_ms", ttft, [0.1, 0.25, 0.5, 0.75, 0.9]))
        stats.update(dist("itl_ms", itl, [0.5]))
        stats.update(dist("e2e_ms", e2e, [0.5, 0.9]))
        stats["requests_per_s"] = len(rows) / span
        write(os.path.join(d, "measured-%s.json" % qps), {"source": "llm-d/llm-d-benchmark @ 96aaf0b9e7e7 (Apache-2.0) data/k8s/lmbenchmark-llama-3-1-8B/%s/LMBench_long_input_output_%s.csv: LMBench ttft and generation_time per request (%d requests); E2E = ttft + generation_time, ITL = generation_time/(generation_tokens - 1)" % (engine, qps, len(rows)), "run": "qps-" + qps, "stats": stats})

# --- inference-sim training runs: vLLM 0.15.1, Llama-2-7B TP1 on one H100
# (no license upstream: derived statistics with their citation only).
base = os.path.join(shared, "real-runs/h100-inferencesim-llama2-7b/default_args")
d = os.path.join(here, "h100-llama2-7b-inferencesim")
os.makedirs(d, exist_ok=True)
exps = {"general": "20260217-231439-llama-2-7b-tp1-general", "codegen": "20260217-155451-llama-2-7b-tp1-codegen",
        "roleplay": "20260217-162547-llama-2-7b-tp1-roleplay", "reasoning": "20260217-170634-llama-2-7b-tp1-reasoning"}
runs = {}
for prof, exp in exps.items():
    spec = json.load(open(os.path.join(base, exp, "profile.yaml")))
    sp = spec["data"]["shared_prefix"]
    for k, stage in enumerate(spec["load"]["stages"]):
        m = json.load(open(os.path.join(base, exp, "results", "stage_%d_lifecycle_metrics.json" % k)))
        ok, L = m["successes"], m["successes"]["latency"]
        n_ok, n_fail = ok["count"], m["failures"]["count"]
        ms = lambda key, q: L[key][q] * 1000
        stats = {"ttft_ms_avg": ms("time_to_first_token", "mean"), "ttft_ms_p50": ms("time_to_first_token", "median"),
                 "ttft_ms_p90": ms("time_to_first_token", "p90"), "ttft_ms_p99": ms("time_to_first_token", "p99"),
                 "e2e_ms_avg": ms("request_latency", "mean"), "e2e_ms_p50": ms("request_latency", "median"),
                 "e2e_ms_p90": ms("request_latency", "p90"),
                 "itl_ms_avg": (ms("request_latency", "mean") - ms("time_to_first_token", "mean")) / (sp["output_len"] - 1),
                 "requests_per_s": ok["throughput"]["requests_per_sec"],
                 "completeness": n_ok / (n_ok + n_fail)}
        name = "%s-stage%d" % (prof, k)
        write(os.path.join(d, name + ".json"), {
            "source": "inference-sim/training @ ed5c1d26900e6909758d5e1641a18edaf56a1caf default_args/%s/results/stage_%d_lifecycle_metrics.json (no license upstream: derived figures only): inference-perf successes' TTFT and E2E mean/median/p90/p99, requests_per_sec; ITL = (E2E mean - TTFT mean)/(nominal output %d - 1); completeness = successes/(successes + failures) = %d/%d" % (exp, k, sp["output_len"], n_ok, n_ok + n_fail),
            "run": name, "stats": stats})
        runs[name] = {"rate": stage["rate"], "duration": stage["duration"], "prompt": ok["prompt_len"]["mean"],
                      "prefix": sp["system_prompt_len"], "groups": sp["num_unique_system_prompts"], "osl": sp["output_len"]}


def setup(r, requests):
    out = {"workload": "synthetic",
           "synthetic": {"requests": requests, "rate": float(r["rate"]), "arrival": "poisson",
                         "isl_mean": round(r["prompt"] - r["prefix"], 1), "isl_cv": 0.0001,
                         "osl_mean": float(r["osl"]), "osl_cv": 0.0001,
                         "prefix_groups": r["groups"], "prefix_tokens": r["prefix"]},
           "n": 1, "policy": "round-robin", "gpu": "H100-SXM5-80GB", "model": "Llama-2-7B", "tp": 1,
           "block_size": 16, "max_model_len": 4096, "max_num_seqs": 128, "max_num_batched_tokens": 2048,
           "gpu_memory_utilization": 0.9, "vllm_version": "0.15.1",
           # the runs' CPU KV offloading (OffloadingConnector): 8 GiB per the
           # sim-to-real design doc (shared/data/real-runs/h100-inferencesim-llama2-7b/SOURCE.md);
           # vllm.log's cpu_kv_blocks for these Llama-2-7B runs is 1,023 blocks of 8 MiB
           # (trainval_experiment_configs.json), within one block of 8 GiB
           "kv_offloading_size_gib": 8}
    return out

fit = ["general-stage0", "general-stage1", "codegen-stage0", "codegen-stage1", "roleplay-stage0"]
write(os.path.join(d, "fit.json"), {
    "name": "H100 Llama-2-7B TP1 vLLM 0.15.1 (inference-sim training runs): general, codegen and roleplay stages",
    "base_profile": "kernel-prior",
    "runs": [{"name": n, "arm": n, "setup": setup(runs[n], 1000), "measured": n + ".json"} for n in fit]})
# The overloaded run as it was sent: every arrival of the 1,200 s stage,
# and inference-perf's client giving up after 300 s (every failure's
# latency lies in [300.0, 301.0] s).
r = runs["reasoning-stage0"]
pred = setup(r, int(r["rate"] * r["duration"]))
pred["request_timeout_s"] = 300
write(os.path.join(d, "predict.json"), {
    "name": "H100 Llama-2-7B TP1 vLLM 0.15.1: the overloaded reasoning stage (4 req/s of 1,082-token prompts and 1,448-token answers, 300 s client time-out)",
    "base_profile": "kernel-prior",
    "runs": [{"name": "reasoning-stage0", "arm": "reasoning-stage0", "setup": pred, "measured": "reasoning-stage0.json"}]})
