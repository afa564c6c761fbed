#!/usr/bin/env python3
"""Derive runs.csv and the output-length histograms from the staged ML.ENERGY v3 data.

Usage: derive.py SRC   (SRC = the staged h100-mlenergy-v3-qwen3-8b-llama3.1-8b folder)

Keeps the H100 lm-arena-chat rows of the four models routesim's catalogue has, with the
fields routesim calibrate --mlenergy reads, and adds num_requests: the sum of the
configuration's output-length histogram where the leaderboard gives one (Qwen3-8B,
Llama-3.1-8B), else 1024 x the num_request_repeats of the family's staged sweeps.yaml
(Qwen3-14B: 1 everywhere; Llama-3.1-8B: 1 up to 192, 2 up to 512, 3 beyond).
"""
import csv, json, os, sys

src = sys.argv[1]
MODELS = {"Qwen/Qwen3-8B": "qwen", "Qwen/Qwen3-32B": "qwen",
          "meta-llama/Llama-3.1-8B-Instruct": "llama", "meta-llama/Llama-3.1-70B-Instruct": "llama"}
FIELDS = ["task", "model_id", "gpu_model", "num_gpus", "tensor_parallel", "max_num_seqs", "avg_batch_size",
          "avg_power_watts", "median_itl_ms", "p90_itl_ms", "p99_itl_ms", "output_throughput_tokens_per_sec",
          "avg_output_len", "weight_precision"]
counts = {}
for f, mid in [("meta-llama__Llama-3.1-8B-Instruct__lm-arena-chat.json", "meta-llama/Llama-3.1-8B-Instruct"),
               ("Qwen__Qwen3-8B__lm-arena-chat.json", "Qwen/Qwen3-8B")]:
    d = json.load(open(os.path.join(src, "leaderboard/models", f)))
    for c in d["configurations"]:
        if c["gpu_model"] == "H100":
            counts[(mid, c["max_num_seqs"])] = int(sum(c["output_length_distribution"]["counts"]))
    agg = {"source": "ml-energy/leaderboard@0cd52dab public/data/models/" + f + " output_length_distribution (all GPUs), Apache-2.0 (ML.ENERGY Benchmark v3 dataset card)",
           "bins": d["output_length_distribution"]["bins"], "counts": d["output_length_distribution"]["counts"]}
    name = "osl-" + ("llama-3.1-8b" if "Llama" in mid else "qwen3-8b") + ".json"
    json.dump(agg, open(name, "w"), indent=1)

def repeats(family, mns):
    if family == "qwen":
        return 1
    return 1 if mns <= 192 else 2 if mns <= 512 else 3

rows = []
for r in csv.DictReader(open(os.path.join(src, "llm_runs_flat.csv"))):
    if r["gpu_model"] != "H100" or r["task"] != "lm-arena-chat" or r["model_id"] not in MODELS:
        continue
    mns = int(r["max_num_seqs"])
    n = counts.get((r["model_id"], mns)) or 1024 * repeats(MODELS[r["model_id"]], mns)
    rows.append([r[k] for k in FIELDS] + [n])
rows.sort(key=lambda x: (x[1], int(x[4]), int(x[5])))
with open("runs.csv", "w", newline="") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(FIELDS + ["num_requests"])
    w.writerows(rows)
print(len(rows), "rows")
