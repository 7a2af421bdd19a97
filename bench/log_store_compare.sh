#!/usr/bin/env bash
# Log storage and keyword search, side by side on one genlog file: Vigil's
# LogStore (bench/logstore_bench), ripgrep over the raw file, SQLite FTS5
# (bench/log_fts5.py), and `zstd -3` of the raw file as the size reference.
# Prints bytes per line, ingest rates and query latencies (cold and warm
# medians) and a markdown table (bench/RESULTS.md "Logs").
#
#   bench/log_store_compare.sh FILE [BUILD_DIR] [LINES]
#
# LINES: use the first LINES lines of FILE (default: all of it).
# Environment: RUNS (query rounds per system and term, default 5: round 1 is
# cold, the warm figure is the median of the others), RARE and COMMON (the
# terms; defaults are picked from genlog's data), WORK (scratch dir, default
# bench/out/logs/store), COLD=0 to skip dropping the page cache before each
# cold round (it needs root: echo 3 > /proc/sys/vm/drop_caches), SKIP_FTS=1.
set -euo pipefail

FILE=${1:?usage: log_store_compare.sh FILE [BUILD_DIR] [LINES]}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${2:-$ROOT/build-bench}
LINES=${3:-}
RUNS=${RUNS:-5}
WORK=${WORK:-$ROOT/bench/out/logs/store}
# A checkpoint saved once in genlog's first 10 M lines (at line ~5.4 M; with
# fewer LINES pick another step, checkpoint-S sits near line 20*S; check with
# rg -c), token-aligned so FTS5 finds the same lines; and ERROR, ~2% of lines.
RARE=${RARE:-checkpoint-271828}
COMMON=${COMMON:-ERROR}
BENCH=$BUILD/bench/logstore_bench
FTS="python3 $ROOT/bench/log_fts5.py"

log() { echo "[$(date -u +%H:%M:%S)] $*" >&2; }
now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
field() { awk -v k="$1:" '$1==k {print $2}'; }
dir_bytes() { du -sb "$1" | awk '{print $1}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a/b}'; }
drop_caches() {
  if [[ "${COLD:-1}" == 1 ]]; then sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || true; fi
}

[[ -x "$BENCH" ]] || { echo "build $BENCH first: ninja -C $BUILD logstore_bench" >&2; exit 1; }
mkdir -p "$WORK"
log "load: $(cut -d' ' -f1-3 /proc/loadavg)"

INPUT=$FILE
if [[ -n "$LINES" ]]; then
  INPUT=$WORK/input.log
  if [[ ! -s "$INPUT" || $(wc -l < "$INPUT") != "$LINES" ]]; then head -n "$LINES" "$FILE" > "$INPUT"; fi
fi
NLINES=$(wc -l < "$INPUT")
RAW=$(stat -c %s "$INPUT")
log "input: $INPUT, $NLINES lines, $RAW bytes"

# ------------------------------------------------------------ zstd -3 (size)
t0=$(now)
ZSTD=$(zstd -3 -T1 -q -c "$INPUT" | wc -c)
ZSTD_S=$(awk -v a="$t0" -v b="$(now)" 'BEGIN{print b-a}')
log "zstd -3: $ZSTD bytes ($ZSTD_S s, one thread)"

# -------------------------------------------------------------- Vigil ingest
rm -rf "$WORK/vigil"
"$BENCH" ingest "$INPUT" "$WORK/vigil" > "$WORK/vigil-ingest.txt"
V_BYTES=$(dir_bytes "$WORK/vigil")
V_RATE=$(field ingest_lines_per_s < "$WORK/vigil-ingest.txt")
V_CPU_RATE=$(field ingest_lines_per_cpu_s < "$WORK/vigil-ingest.txt")
V_RSS=$(field peak_rss_kib < "$WORK/vigil-ingest.txt")
log "vigil: $V_BYTES bytes, $V_RATE lines/s, $V_CPU_RATE lines per CPU-s, peak RSS $V_RSS KiB"
cat "$WORK/vigil-ingest.txt" >&2

# --------------------------------------------------------------- FTS5 build
F_BYTES="skipped" F_RATE="skipped"
if [[ "${SKIP_FTS:-0}" != 1 ]]; then
  $FTS build "$INPUT" "$WORK/fts5.db" > "$WORK/fts5-build.txt"
  F_BYTES=$(field db_bytes < "$WORK/fts5-build.txt")
  F_RATE=$(field ingest_lines_per_s < "$WORK/fts5-build.txt")
  log "fts5: $F_BYTES bytes, $F_RATE lines/s"
fi

# ------------------------------------------------------------------ queries
# rg: one cold run after dropping the page cache, then RUNS-1 warm runs.
rg_time() {  # rg_time ARGS... -> prints seconds, output to $WORK/rg.out
  local t0
  t0=$(now)
  rg "$@" > "$WORK/rg.out" || true
  awk -v a="$t0" -v b="$(now)" 'BEGIN{print b-a}'
}
declare -A R
for term in "$RARE" "$COMMON"; do
  log "term: $term"
  drop_caches
  "$BENCH" query "$WORK/vigil" "{} |= \"$term\"" "$RUNS" > "$WORK/vq.txt"
  for k in cold_top100_s warm_top100_s cold_count_s warm_count_s count open_s top100_blocks_scanned top100_blocks_skipped; do
    R[vigil,$term,$k]=$(field $k < "$WORK/vq.txt")
  done
  if [[ "${SKIP_FTS:-0}" != 1 ]]; then
    drop_caches
    $FTS query "$WORK/fts5.db" "$term" "$RUNS" > "$WORK/fq.txt"
    for k in cold_top100_s warm_top100_s cold_count_s warm_count_s count open_s; do
      R[fts,$term,$k]=$(field $k < "$WORK/fq.txt")
    done
  fi
  for mode in top100 count; do
    if [[ $mode == top100 ]]; then args=(-F -m 100 -- "$term" "$INPUT"); else args=(-F -c -- "$term" "$INPUT"); fi
    drop_caches
    R[rg,$term,cold_${mode}_s]=$(rg_time "${args[@]}")
    [[ $mode == count ]] && R[rg,$term,count]=$(cat "$WORK/rg.out") && : "${R[rg,$term,count]:=0}"
    R[rg,$term,warm_${mode}_s]=$(for _ in $(seq $((RUNS - 1))); do rg_time "${args[@]}"; done | median)
  done
  log "counts: vigil ${R[vigil,$term,count]}, rg ${R[rg,$term,count]}, fts5 ${R[fts,$term,count]:-skipped}"
done

cat <<EOF

input: $INPUT ($NLINES lines, $RAW bytes); $(nproc) cores, $(uname -sr), $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)

| system | bytes on disk | bytes/line | raw / size | ingest lines/s | notes |
|---|---|---|---|---|---|
| raw file | $RAW | $(ratio "$RAW" "$NLINES") | 1.00 | – | |
| zstd -3 (one thread) | $ZSTD | $(ratio "$ZSTD" "$NLINES") | $(ratio "$RAW" "$ZSTD") | $(awk -v n="$NLINES" -v t="$ZSTD_S" 'BEGIN{printf "%.0f", n/t}') | size reference, not searchable |
| Vigil LogStore | $V_BYTES | $(ratio "$V_BYTES" "$NLINES") | $(ratio "$RAW" "$V_BYTES") | $V_RATE ($V_CPU_RATE per CPU-s) | whole dir after Close; peak RSS $V_RSS KiB |
| SQLite FTS5 | $F_BYTES | $( [[ $F_BYTES == skipped ]] && echo – || ratio "$F_BYTES" "$NLINES") | $( [[ $F_BYTES == skipped ]] && echo – || ratio "$RAW" "$F_BYTES") | $F_RATE | text + index, after optimize + VACUUM |

Query latency, seconds (cold: first round in a fresh process$([[ "${COLD:-1}" == 1 ]] && echo ", page cache dropped before it"); warm: median of the other $((RUNS - 1))):

| term | matches (vigil/rg/fts5) | query | Vigil cold | Vigil warm | rg cold | rg warm | FTS5 cold | FTS5 warm | Vigil blocks scanned/skipped |
|---|---|---|---|---|---|---|---|---|---|
EOF
for term in "$RARE" "$COMMON"; do
  for mode in top100 count; do
    echo "| \`$term\` | ${R[vigil,$term,count]}/${R[rg,$term,count]}/${R[fts,$term,count]:-–} | $mode | ${R[vigil,$term,cold_${mode}_s]} | ${R[vigil,$term,warm_${mode}_s]} | ${R[rg,$term,cold_${mode}_s]} | ${R[rg,$term,warm_${mode}_s]} | ${R[fts,$term,cold_${mode}_s]:-–} | ${R[fts,$term,warm_${mode}_s]:-–} | ${R[vigil,$term,top100_blocks_scanned]}/${R[vigil,$term,top100_blocks_skipped]} |"
  done
done
echo
echo "Vigil open (fresh process, first term; not in the query times): ${R[vigil,$RARE,open_s]} s"
