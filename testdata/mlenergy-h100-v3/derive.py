#!/usr/bin/env python3
"""Derive runs.csv and the output-length histograms from the staged ML.ENERGY v3 data.

Usage: derive.py SRC LEADERBOARD
  SRC         = the staged h100-mlenergy-v3-qwen3-8b-llama3.1-8b folder
  LEADERBOARD = a checkout of ml-energy/leaderboard at 0cd52dab897c5d91a45f4d413038f3b8b4251b0f
                (for the Qwen3-32B and Llama-3.1-70B model files, which SRC does not hold)

Keeps the H100 lm-arena-chat rows of the four models routesim's catalogue has, with the
fields routesim calibrate --mlenergy reads, and adds num_requests: the sum of the
configuration's output-length histogram (every configuration of the four models has one).
Writes each model's aggregate output-length histogram, osl-<model>.json.
"""
import csv, json, os, sys

src, board = sys.argv[1], sys.argv[2]
MODELS = {"Qwen/Qwen3-8B", "Qwen/Qwen3-32B", "meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-70B-Instruct"}
FIELDS = ["task", "model_id", "gpu_model", "num_gpus", "tensor_parallel", "max_num_seqs", "avg_batch_size",
          "avg_power_watts", "median_itl_ms", "p90_itl_ms", "p99_itl_ms", "output_throughput_tokens_per_sec",
          "avg_output_len", "weight_precision"]
counts = {}
FILES = [(os.path.join(src, "leaderboard/models"), "meta-llama__Llama-3.1-8B-Instruct__lm-arena-chat.json", "llama-3.1-8b"),
         (os.path.join(src, "leaderboard/models"), "Qwen__Qwen3-8B__lm-arena-chat.json", "qwen3-8b"),
         (os.path.join(board, "public/data/models"), "meta-llama__Llama-3.1-70B-Instruct__lm-arena-chat.json", "llama-3.1-70b"),
         (os.path.join(board, "public/data/models"), "Qwen__Qwen3-32B__lm-arena-chat.json", "qwen3-32b")]
for folder, f, short in FILES:
    d = json.load(open(os.path.join(folder, f)))
    mid = d["model_id"]
    for c in d["configurations"]:
        if c["gpu_model"] == "H100":
            key = (mid, c["parallelization"]["tensor_parallel"], c["max_num_seqs"])
            counts[key] = int(sum(c["output_length_distribution"]["counts"]))
    agg = {"source": "ml-energy/leaderboard@0cd52dab public/data/models/" + f + " output_length_distribution (all GPUs), Apache-2.0 (ML.ENERGY Benchmark v3 dataset card)",
           "bins": d["output_length_distribution"]["bins"], "counts": d["output_length_distribution"]["counts"]}
    json.dump(agg, open("osl-" + short + ".json", "w"), indent=1)

rows = []
for r in csv.DictReader(open(os.path.join(src, "llm_runs_flat.csv"))):
    if r["gpu_model"] != "H100" or r["task"] != "lm-arena-chat" or r["model_id"] not in MODELS:
        continue
    n = counts[(r["model_id"], int(r["tensor_parallel"]), int(r["max_num_seqs"]))]
    rows.append([r[k] for k in FIELDS] + [n])
rows.sort(key=lambda x: (x[1], int(x[4]), int(x[5])))
with open("runs.csv", "w", newline="") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(FIELDS + ["num_requests"])
    w.writerows(rows)
print(len(rows), "rows")
