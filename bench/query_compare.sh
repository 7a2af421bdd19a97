#!/usr/bin/env bash
# Range queries side by side (bench/RESULTS.md "Range queries"): the same two
# 24 h queries at 60 s step on Vigil (query_bench, in process), Prometheus 2.42
# and VictoriaMetrics 1.79 (HTTP /api/v1/query_range on loopback), all loaded
# from one OpenMetrics file. Prints the median seconds per query and system.
#
#   bench/query_compare.sh FILE [BUILD_DIR]
#
# Environment: RUNS (default 5); WORK (scratch, default bench/out/query-compare);
# PROM_BLOCKS=dir to copy existing promtool blocks instead of creating them
# (promtool's backfill of 24 h takes ~15 min here); SKIP_PROM=1 / SKIP_VM=1;
# QUERY_THREADS=n is passed to query_bench (default: the engine's, CPUs up to 4).
# Peers get a retention of 100 y: the dataset is older than their defaults.
# VictoriaMetrics is queried with nocache=1 so its rollup cache does not
# answer repeated runs.
#
# The shared machine's load drifts by 2x within a minute, so the systems are
# timed in interleaved rounds once all are loaded: each round times one run of
# each query on Vigil, then Prometheus, then VictoriaMetrics (every system had
# one untimed warm-up first), and the medians are over the RUNS rounds.
set -euo pipefail

FILE=${1:?usage: query_compare.sh FILE [BUILD_DIR]}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${2:-$ROOT/build-query}
RUNS=${RUNS:-5}
WORK=${WORK:-$ROOT/bench/out/query-compare}
BENCH=$BUILD/src/query/query_bench
PIDS=()
Q1='max by (gpu) (DCGM_FI_DEV_GPU_UTIL)'
Q2='sum by (mode) (rate(node_cpu_seconds_total[1m]))'

mkdir -p "$WORK"
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
log() { echo "[$(date -u +%H:%M:%S)] $*" >&2; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) exit; if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_http() { for _ in $(seq 300); do curl -fsS "$1" > /dev/null 2>&1 && return 0; sleep 0.2; done; return 1; }

[[ -x "$BENCH" ]] || { echo "build $BENCH first: ninja -C $BUILD query_bench" >&2; exit 1; }
START=$(awk '!/^#/ {print int($NF / 60) * 60; exit}' "$FILE")
END=$((START + 86400))

# Wall time of one HTTP range query on PORT (extra: one more parameter).
time_http() {
  local port=$1 q=$2 extra=${3:-}
  local args=(-fsS -o /dev/null -w '%{time_total}\n' --data-urlencode "query=$q"
              --data-urlencode "start=$START" --data-urlencode "end=$END" --data-urlencode "step=60")
  [[ -n "$extra" ]] && args+=(--data-urlencode "$extra")
  curl "${args[@]}" "http://127.0.0.1:$port/api/v1/query_range"
}

# ------------------------------------------------------------------- Vigil
log "vigil: query_bench (loads $FILE into $WORK/vigil-db on first use)"
"$BENCH" "$FILE" "$WORK/vigil-db" 1 >&2  # loads if needed, checks both queries

# -------------------------------------------------------------- Prometheus
PROM_PORT=
if [[ -z "${SKIP_PROM:-}" ]]; then
  rm -rf "$WORK/prom"
  if [[ -n "${PROM_BLOCKS:-}" ]]; then
    cp -r "$PROM_BLOCKS" "$WORK/prom"
  else
    log "prometheus: promtool tsdb create-blocks-from openmetrics (slow)"
    promtool tsdb create-blocks-from openmetrics "$FILE" "$WORK/prom" > "$WORK/prom-backfill.log" 2>&1
  fi
  printf 'global:\n  scrape_interval: 1h\n' > "$WORK/prometheus.yml"
  PROM_PORT=$(free_port)
  prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/prom" \
    --storage.tsdb.retention.time=100y --web.listen-address="127.0.0.1:$PROM_PORT" \
    > "$WORK/prom.log" 2>&1 &
  PIDS+=($!)
  wait_http "http://127.0.0.1:$PROM_PORT/-/ready" || { echo "prometheus did not start" >&2; exit 1; }
  time_http "$PROM_PORT" "$Q1" > /dev/null
  time_http "$PROM_PORT" "$Q2" > /dev/null
fi

# --------------------------------------------------------- VictoriaMetrics
VM_PORT=
if [[ -z "${SKIP_VM:-}" ]]; then
  MS_FILE="$WORK/$(basename "$FILE").ms.prom"
  if [[ ! -s "$MS_FILE" ]]; then
    # The Prometheus text import takes millisecond timestamps; OpenMetrics has seconds.
    awk '/^#/ {next} {$NF = sprintf("%.0f", $NF * 1000); print}' "$FILE" > "$MS_FILE"
  fi
  rm -rf "$WORK/vm"
  VM_PORT=$(free_port)
  victoria-metrics -httpListenAddr="127.0.0.1:$VM_PORT" -storageDataPath="$WORK/vm" \
    -retentionPeriod=100y > "$WORK/vm.log" 2>&1 &
  PIDS+=($!)
  wait_http "http://127.0.0.1:$VM_PORT/health" || { echo "victoria-metrics did not start" >&2; exit 1; }
  log "victoria-metrics: import"
  curl -fsS -X POST -T "$MS_FILE" "http://127.0.0.1:$VM_PORT/api/v1/import/prometheus"
  curl -fsS "http://127.0.0.1:$VM_PORT/internal/force_flush" > /dev/null
  sleep 2
  time_http "$VM_PORT" "$Q1" nocache=1 > /dev/null
  time_http "$VM_PORT" "$Q2" nocache=1 > /dev/null
fi

# ------------------------------------------------------ interleaved rounds
: > "$WORK/times.txt"
for r in $(seq "$RUNS"); do
  # query_bench warms up each query once in process, then times one run.
  "$BENCH" "$FILE" "$WORK/vigil-db" 1 > "$WORK/vigil.txt"
  echo "vigil q1 $(awk '/^query: max/ {getline; print $2}' "$WORK/vigil.txt")" >> "$WORK/times.txt"
  echo "vigil q2 $(awk '/^query: sum/ {getline; print $2}' "$WORK/vigil.txt")" >> "$WORK/times.txt"
  if [[ -n "$PROM_PORT" ]]; then
    echo "prom q1 $(time_http "$PROM_PORT" "$Q1")" >> "$WORK/times.txt"
    echo "prom q2 $(time_http "$PROM_PORT" "$Q2")" >> "$WORK/times.txt"
  fi
  if [[ -n "$VM_PORT" ]]; then
    echo "vm q1 $(time_http "$VM_PORT" "$Q1" nocache=1)" >> "$WORK/times.txt"
    echo "vm q2 $(time_http "$VM_PORT" "$Q2" nocache=1)" >> "$WORK/times.txt"
  fi
  log "round $r: $(grep -c . "$WORK/times.txt") timings; load $(cut -d' ' -f1 /proc/loadavg)"
done
med() {
  local v
  v=$(awk -v s="$1" -v q="$2" '$1 == s && $2 == q {print $3}' "$WORK/times.txt" | median)
  echo "${v:-skipped}"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "-"}'; }
V1=$(med vigil q1) V2=$(med vigil q2) P1=$(med prom q1) P2=$(med prom q2) M1=$(med vm q1) M2=$(med vm q2)

cat <<TABLE

24 h range at 60 s step, median of $RUNS interleaved rounds (seconds; peers over HTTP on
loopback; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)):

| query | Vigil (in process) | Prometheus 2.42 | VictoriaMetrics 1.79 | Vigil / VM |
|---|---|---|---|---|
| \`$Q1\` | $V1 | $P1 | $M1 | $(ratio "$V1" "$M1") |
| \`$Q2\` | $V2 | $P2 | $M2 | $(ratio "$V2" "$M2") |
TABLE
