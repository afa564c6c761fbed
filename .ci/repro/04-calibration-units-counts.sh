# Item 4: calibration reads AIPerf units and counts, and NVML samples,
# against the run they claim to describe.

summary() { # summary TTFT_UNIT TTFT_AVG EXTRA: an AIPerf summary export
  cat <<JSON
{"request_throughput": {"unit": "requests/sec", "avg": 4.39},
 "request_latency": {"unit": "ms", "avg": 4928, "p50": 1313.6, "count": 90},
 "time_to_first_token": {"unit": "$1", "avg": $2, "p50": $2, "count": 90},
 "inter_token_latency": {"unit": "ms", "avg": 45.4, "p50": 32.0, "count": 90}${3:-}}
JSON
}
spec() { # spec EXTRA: one run of 100 requests with the files above
  cat <<JSON
{"name": "x", "runs": [{"name": "a", "arm": "a", "aiperf_summary": "s.json",
  ${1:-}
  "setup": {"trace": "conversation", "first": 100}}]}
JSON
}
smi_header="timestamp, index, utilization.gpu [%], power.draw [W], memory.used [MiB]"
times=', "start_time": "2026-06-05T21:58:30.000000", "end_time": "2026-06-05T22:00:00.000000"'

# "s" is seconds: 0.4514 s is 451.4 ms, not 0.4514 ms.
summary s 0.4514 "" > s.json
spec > spec.json
expect_ok "$RS" calibrate --spec spec.json --derive derived --source test
grep -q '"ttft_ms_avg": 451.4' derived/a.json || fail "0.4514 s was not read as 451.4 ms: $(grep ttft_ms_avg derived/a.json)"

# An unknown unit is refused, naming the file and field.
summary furlongs 451.4 "" > s.json
expect_fail 's.json: time_to_first_token.unit: "furlongs" is not a time unit' "$RS" calibrate --spec spec.json

# 100,000 completed requests from a setup offering 100: another run.
summary ms 451.4 ', "request_count": {"unit": "requests", "avg": 100000}' > s.json
expect_fail "s.json: request_count.avg: 100000 requests, but run a's setup offers 100" "$RS" calibrate --spec spec.json
expect_fail "s.json: request_count.avg: 100000 requests" "$RS" calibrate --spec spec.json --derive derived2 --source test
[ ! -e derived2 ] || fail "--derive wrote its directory after refusing the export"

# An NVML window of 1e308 s.
summary ms 451.4 "$times" > s.json
printf '%s\n2026/06/05 21:58:30.000, 0, 40 %%, 100.00 W, 1 MiB\n2026/06/05 21:58:31.000, 0, 60 %%, 140.00 W, 1 MiB\n' "$smi_header" > n.csv
spec '"nvidia_smi": "n.csv", "nvml_window_s": 1e308,' > spec.json
expect_fail 'spec.json:2: runs\[0\]\.nvml_window_s: 1e\+308 must be in \[0, 604800\]' "$RS" calibrate --spec spec.json

# GPU index 99 on a setup of 8 GPUs.
printf '%s\n2026/06/05 21:58:30.000, 0, 40 %%, 100.00 W, 1 MiB\n2026/06/05 21:58:30.000, 99, 60 %%, 140.00 W, 1 MiB\n' "$smi_header" > n.csv
spec '"nvidia_smi": "n.csv",' > spec.json
expect_fail "n.csv:3: index: GPU 99, but run a's setup has 8 GPUs" "$RS" calibrate --spec spec.json

# Reversed timestamps.
printf '%s\n2026/06/05 21:58:31.000, 0, 40 %%, 100.00 W, 1 MiB\n2026/06/05 21:58:30.000, 0, 60 %%, 140.00 W, 1 MiB\n' "$smi_header" > n.csv
expect_fail 'n.csv:3: timestamp: 2026/06/05 21:58:30.000 is before the previous sample' "$RS" calibrate --spec spec.json

# Samples from the day before the AIPerf run.
printf '%s\n2026/06/04 21:58:30.000, 0, 40 %%, 100.00 W, 1 MiB\n2026/06/04 21:58:31.000, 0, 60 %%, 140.00 W, 1 MiB\n' "$smi_header" > n.csv
expect_fail 'n.csv:2: timestamp: 2026/06/04 21:58:30.000 is more than 14 h outside the AIPerf run' "$RS" calibrate --spec spec.json
