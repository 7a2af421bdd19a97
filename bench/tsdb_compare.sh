#!/usr/bin/env bash
# Side-by-side TSDB storage benchmark on one OpenMetrics file: Vigil's chunk
# codec (and engine, when built), Prometheus (promtool create-blocks) and
# VictoriaMetrics (import API). Prints bytes/sample and ingest samples/s for
# each, medians over RUNS runs, and a markdown table at the end.
#
#   bench/tsdb_compare.sh FILE [BUILD_DIR]
#
# Environment: RUNS (default 3) for Vigil, PEER_RUNS (default 1) for the peers,
# SKIP_PROM=1 / SKIP_VM=1 to leave a peer out, WORK (scratch dir, default
# bench/out/compare). Peers come from `scripts/deps.sh bench` (Debian
# prometheus and victoria-metrics). Everything listens on 127.0.0.1 only.
set -euo pipefail

FILE=${1:?usage: tsdb_compare.sh FILE [BUILD_DIR]}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${2:-$ROOT/build-codec}
RUNS=${RUNS:-3}
PEER_RUNS=${PEER_RUNS:-1}
WORK=${WORK:-$ROOT/bench/out/compare}
BENCH=$BUILD/bench/tsdb_codec_bench
VM_PID=""

mkdir -p "$WORK"
cleanup() {
  if [[ -n "$VM_PID" ]]; then kill "$VM_PID" 2>/dev/null || true; wait "$VM_PID" 2>/dev/null || true; fi
}
trap cleanup EXIT

log() { echo "[$(date -u +%H:%M:%S)] $*" >&2; }
now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
field() { awk -v k="$1:" '$1==k {print $2}'; }
dir_bytes() { du -sb "$1" | awk '{print $1}'; }
# User + system CPU seconds a process has used so far (from /proc/PID/stat).
cpu_secs() { awk -v hz="$(getconf CLK_TCK)" '{sub(/^.*\) /, ""); print ($12 + $13) / hz}' "/proc/$1/stat"; }

[[ -x "$BENCH" ]] || { echo "build $BENCH first: ninja -C $BUILD tsdb_codec_bench" >&2; exit 1; }

# ------------------------------------------------------------------- Vigil
log "vigil codec: $RUNS run(s)"
: > "$WORK/vigil.txt"
for i in $(seq "$RUNS"); do
  "$BENCH" codec "$FILE" > "$WORK/vigil.$i.txt"
  grep -q '^verify: ok' "$WORK/vigil.$i.txt" || { echo "vigil decode verification failed" >&2; exit 1; }
done
SAMPLES=$(field samples < "$WORK/vigil.1.txt")
V_BPS=$(field bytes_per_sample < "$WORK/vigil.1.txt")
V_ENC=$(for i in $(seq "$RUNS"); do field encode_samples_per_s < "$WORK/vigil.$i.txt"; done | median)
V_DEC=$(for i in $(seq "$RUNS"); do field decode_samples_per_s < "$WORK/vigil.$i.txt"; done | median)
log "vigil: $V_BPS B/sample, encode $V_ENC samples/s, decode $V_DEC samples/s"

VDB_BPS="n/a" VDB_RATE="n/a" VDB_CPU_RATE="n/a"
usage=$("$BENCH" 2>&1 || true)  # the usage text lists the db mode when built with the engine
if [[ "$usage" == *" db FILE"* ]]; then
  log "vigil db: $RUNS run(s)"
  for i in $(seq "$RUNS"); do
    rm -rf "$WORK/vigil-db"
    "$BENCH" db "$FILE" "$WORK/vigil-db" > "$WORK/vigil-db.$i.txt"
    # The engine's own DirSize is printed too; du is what the peers get.
    echo "du_bytes: $(dir_bytes "$WORK/vigil-db")" >> "$WORK/vigil-db.$i.txt"
  done
  VDB_RATE=$(for i in $(seq "$RUNS"); do field db_ingest_samples_per_s < "$WORK/vigil-db.$i.txt"; done | median)
  VDB_CPU_RATE=$(for i in $(seq "$RUNS"); do field db_ingest_samples_per_cpu_s < "$WORK/vigil-db.$i.txt"; done | median)
  VDB_BYTES=$(for i in $(seq "$RUNS"); do field du_bytes < "$WORK/vigil-db.$i.txt"; done | median)
  VDB_BPS=$(awk -v b="$VDB_BYTES" -v s="$SAMPLES" 'BEGIN {printf "%.4f", b/s}')
  log "vigil db: $VDB_BPS B/sample on disk, ingest $VDB_RATE samples/s"
fi

# -------------------------------------------------------------- Prometheus
P_BPS="skipped" P_RATE="skipped"
if [[ "${SKIP_PROM:-0}" != 1 ]]; then
  log "prometheus (promtool $(promtool --version 2>&1 | awk 'NR==1{print $3}')): $PEER_RUNS run(s)"
  : > "$WORK/prom.txt"
  for i in $(seq "$PEER_RUNS"); do
    rm -rf "$WORK/prom"
    t0=$(now)
    promtool tsdb create-blocks-from openmetrics "$FILE" "$WORK/prom" > "$WORK/prom.log" 2>&1
    t1=$(now)
    echo "$(dir_bytes "$WORK/prom") $(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')" >> "$WORK/prom.txt"
  done
  P_BYTES=$(awk '{print $1}' "$WORK/prom.txt" | median)
  P_SECS=$(awk '{print $2}' "$WORK/prom.txt" | median)
  P_BPS=$(awk -v b="$P_BYTES" -v s="$SAMPLES" 'BEGIN {printf "%.4f", b/s}')
  P_RATE=$(awk -v t="$P_SECS" -v s="$SAMPLES" 'BEGIN {printf "%.0f", s/t}')
  log "prometheus: $P_BPS B/sample ($P_BYTES bytes), $P_RATE samples/s (${P_SECS}s)"
fi

# --------------------------------------------------------- VictoriaMetrics
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
vm_metric() {  # sum of a metric family from /metrics, optional label filter regex
  curl -fsS "http://127.0.0.1:$PORT/metrics" | awk -v m="$1" -v f="${2:-}" \
    '$1 ~ "^"m"({|$)" && $1 ~ f {s += $2} END {printf "%.0f\n", s}'
}
M_BPS="skipped" M_RATE="skipped" M_DATA_BPS="skipped" M_CPU_RATE="skipped"
if [[ "${SKIP_VM:-0}" != 1 ]]; then
  # The Prometheus text import takes millisecond timestamps; OpenMetrics has seconds.
  MS_FILE="$WORK/$(basename "$FILE").ms.prom"
  if [[ ! -s "$MS_FILE" || "$MS_FILE" -ot "$FILE" ]]; then
    log "converting timestamps to ms for VictoriaMetrics"
    LC_ALL=C sed -E '/^#/d; s/ ([0-9]+)$/ \1000/; s/ ([0-9]+)\.([0-9]{3})[0-9]*$/ \1\2/' "$FILE" > "$MS_FILE"
  fi
  log "victoria-metrics 1.79: $PEER_RUNS run(s)"
  : > "$WORK/vm.txt"
  for i in $(seq "$PEER_RUNS"); do
    rm -rf "$WORK/vm"
    PORT=$(free_port)
    # retentionPeriod: the dataset's dates may be older than the default 1 month.
    victoria-metrics -httpListenAddr="127.0.0.1:$PORT" -storageDataPath="$WORK/vm" \
      -retentionPeriod=100y -search.disableCache > "$WORK/vm.log" 2>&1 &
    VM_PID=$!
    for _ in $(seq 100); do curl -fsS "http://127.0.0.1:$PORT/health" > /dev/null 2>&1 && break; sleep 0.2; done
    c0=$(cpu_secs "$VM_PID")
    t0=$(now)
    # -T streams the file; --data-binary @FILE would read all of it into memory.
    curl -fsS -X POST -T "$MS_FILE" "http://127.0.0.1:$PORT/api/v1/import/prometheus"
    curl -fsS "http://127.0.0.1:$PORT/internal/force_flush" > /dev/null
    t1=$(now)
    c1=$(cpu_secs "$VM_PID")
    # Wait until every row is stored, then merge each month partition fully.
    for _ in $(seq 600); do
      rows=$(vm_metric vm_rows 'type="storage/')
      [[ "$rows" -ge "$SAMPLES" ]] && break
      sleep 1
    done
    for p in $(ls "$WORK/vm/data/small"); do
      curl -fsS "http://127.0.0.1:$PORT/internal/force_merge?partition_prefix=$p" > /dev/null
    done
    curl -fsS "http://127.0.0.1:$PORT/internal/force_flush" > /dev/null
    stable=0 last=0
    for _ in $(seq 900); do
      sleep 1
      active=$(vm_metric vm_active_merges)
      size=$(dir_bytes "$WORK/vm")
      if [[ "$active" == 0 && "$size" == "$last" ]]; then stable=$((stable + 1)); else stable=0; fi
      last=$size
      [[ $stable -ge 5 ]] && break
    done
    rows=$(vm_metric vm_rows 'type="storage/')
    kill "$VM_PID"; wait "$VM_PID" 2>/dev/null || true; VM_PID=""
    size=$(dir_bytes "$WORK/vm")
    data_size=$(dir_bytes "$WORK/vm/data")  # samples only, without indexdb and caches
    echo "$size $(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}') $rows $data_size $(awk -v a="$c0" -v b="$c1" 'BEGIN{print b-a}')" >> "$WORK/vm.txt"
    log "vm run $i: $size bytes ($data_size in data/), rows $rows"
  done
  M_BYTES=$(awk '{print $1}' "$WORK/vm.txt" | median)
  M_SECS=$(awk '{print $2}' "$WORK/vm.txt" | median)
  M_DATA=$(awk '{print $4}' "$WORK/vm.txt" | median)
  M_BPS=$(awk -v b="$M_BYTES" -v s="$SAMPLES" 'BEGIN {printf "%.4f", b/s}')
  M_DATA_BPS=$(awk -v b="$M_DATA" -v s="$SAMPLES" 'BEGIN {printf "%.4f", b/s}')
  M_RATE=$(awk -v t="$M_SECS" -v s="$SAMPLES" 'BEGIN {printf "%.0f", s/t}')
  M_CPU=$(awk '{print $5}' "$WORK/vm.txt" | median)
  M_CPU_RATE=$(awk -v t="$M_CPU" -v s="$SAMPLES" 'BEGIN {printf "%.0f", s/t}')
  log "victoria-metrics: $M_BPS B/sample ($M_BYTES bytes), $M_RATE samples/s (${M_SECS}s)"
fi

cat <<EOF

dataset: $FILE ($(dir_bytes "$FILE") bytes, $SAMPLES samples)
machine: $(nproc) cores, $(uname -sr), $(date -u +%Y-%m-%d)

| system | bytes/sample | ingest samples/s (wall) | per CPU-second | notes |
|---|---|---|---|---|
| Vigil chunk codec | $V_BPS | $V_ENC (encode), $V_DEC (decode) | same (one core) | 2 h chunks, one core, median of $RUNS |
| Vigil Db (engine) | $VDB_BPS | $VDB_RATE | $VDB_CPU_RATE | Append per timestamp, after Maintain+Close |
| Prometheus 2.42 | $P_BPS | $P_RATE | n/a | promtool create-blocks-from openmetrics, median of $PEER_RUNS |
| VictoriaMetrics 1.79 | $M_BPS ($M_DATA_BPS in data/) | $M_RATE | $M_CPU_RATE | import/prometheus + force_merge, median of $PEER_RUNS |
EOF
