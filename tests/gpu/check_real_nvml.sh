#!/usr/bin/env bash
# Compares what Vigil's GPU collector reads through NVML with nvidia-smi on a
# machine with a real NVIDIA driver, and prints a PASS/FAIL table.
#
#   tests/gpu/check_real_nvml.sh [path/to/nvml_dump]
#
# Builds nothing: pass the nvml_dump built by the gpu.cmake target (default
# build/src/collect/metrics/nvml_dump). Exit status 0 when nothing FAILs.
# Tolerances allow for the two tools sampling at slightly different moments:
# instantaneous values (utilisation, power, clocks) get wide bounds, static
# facts (names, limits, thresholds, totals) must match exactly.
set -euo pipefail

DUMP=${1:-build/src/collect/metrics/nvml_dump}
[[ -x "$DUMP" ]] || { echo "nvml_dump not found at $DUMP (build target nvml_dump)" >&2; exit 2; }
command -v nvidia-smi >/dev/null || { echo "nvidia-smi not found: no NVIDIA driver here?" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 is needed to compare" >&2; exit 2; }

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
unset VIGIL_NVML_LIBRARY VIGIL_FAKE_NVML_SCENARIO   # the real libnvidia-ml.so.1

"$DUMP" --probe >"$WORK/probe.txt" 2>&1 || true
timeout 60 "$DUMP" >"$WORK/vigil.prom" 2>"$WORK/vigil.err" || {
  echo "nvml_dump failed:" >&2; cat "$WORK/vigil.err" >&2; exit 1; }

# One field per query: an unknown field (old driver) fails only itself.
FIELDS="index uuid name pci.bus_id compute_cap driver_version temperature.gpu power.draw
  enforced.power.limit memory.total memory.used memory.free memory.reserved
  utilization.gpu utilization.memory clocks.sm clocks.mem clocks.max.sm clocks.max.mem
  clocks_event_reasons.active clocks_throttle_reasons.active
  ecc.errors.corrected.volatile.total ecc.errors.uncorrected.volatile.total
  ecc.errors.corrected.aggregate.total ecc.errors.uncorrected.aggregate.total"
for f in $FIELDS; do
  nvidia-smi --query-gpu="$f" --format=csv,noheader,nounits >"$WORK/smi.$f" 2>/dev/null \
    || echo "__unsupported__" >"$WORK/smi.$f"
done
nvidia-smi --query-compute-apps=pid,gpu_uuid,used_memory --format=csv,noheader,nounits \
  >"$WORK/apps.csv" 2>/dev/null || true
nvidia-smi >"$WORK/smi.txt" 2>&1 || true
n=$(wc -l <"$WORK/smi.index")
for ((i = 0; i < n; i++)); do
  nvidia-smi -q -d TEMPERATURE -i "$i" >"$WORK/temp.$i" 2>/dev/null || true
done

python3 - "$WORK" <<'PY'
import os, re, sys
work = sys.argv[1]
rows, fails = [], 0

def row(check, gpu, vigil, smi, ok, note=""):
    global fails
    status = "PASS" if ok is True else ("SKIP" if ok is None else "FAIL")
    fails += status == "FAIL"
    rows.append((status, check, str(gpu), str(vigil), str(smi), note))

# Prometheus text from nvml_dump.
series = []
line_re = re.compile(r'^([A-Za-z_:][A-Za-z0-9_:]*)\{(.*)\} (\S+)$')
label_re = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"')
for line in open(os.path.join(work, "vigil.prom")):
    m = line_re.match(line.strip())
    if m:
        series.append((m.group(1), dict(label_re.findall(m.group(2))), float(m.group(3))))

def v(name, gpu=None, **labels):
    for n, l, val in series:
        if n != name or (gpu is not None and l.get("gpu") != str(gpu)):
            continue
        if all(l.get(k) == x for k, x in labels.items()):
            return val, l
    return None, None

def smi(field):
    lines = [x.strip() for x in open(os.path.join(work, "smi." + field))]
    return None if lines and lines[0] == "__unsupported__" else lines

def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None

def near(check, gpu, got, want, tol, note=""):
    if want is None:
        row(check, gpu, got, "n/a", None, "nvidia-smi lacks it")
    elif got is None:
        row(check, gpu, "missing", want, False, note)
    else:
        row(check, gpu, got, want, abs(got - want) <= tol, note or f"±{tol:g}")

info, _ = v("vigil_gpu_driver_info")
_, dl = v("vigil_gpu_driver_info")
row("driver state", "-", dl and dl.get("state"), "ok", bool(dl) and dl.get("state") == "ok")
resp, _ = v("vigil_gpu_driver_responsive")
row("driver responsive", "-", resp, 1, resp == 1)
drv = (smi("driver_version") or [""])[0]
row("driver_version", "-", dl and dl.get("driver_version"), drv, bool(dl) and dl.get("driver_version") == drv)
m = re.search(r"CUDA Version:\s*([0-9.]+)", open(os.path.join(work, "smi.txt")).read())
row("cuda_version", "-", dl and dl.get("cuda_version"), m and m.group(1),
    None if not m else (bool(dl) and dl.get("cuda_version") == m.group(1)))
count, _ = v("vigil_gpu_count")
idx = smi("index") or []
row("gpu count", "-", count, len(idx), count == len(idx))

MiB = 1024.0 * 1024.0
for i in range(len(idx)):
    g = int(idx[i])
    col = lambda f: (smi(f) or [None] * len(idx))[i] if smi(f) else None
    _, labels = v("vigil_gpu_info", g)
    labels = labels or {}
    row("UUID", g, labels.get("UUID"), col("uuid"), labels.get("UUID") == col("uuid"))
    row("modelName", g, labels.get("modelName"), col("name"), labels.get("modelName") == col("name"))
    bus = (col("pci.bus_id") or "").upper()
    row("pci_bus_id", g, labels.get("pci_bus_id"), bus, (labels.get("pci_bus_id") or "").upper() == bus)
    # An older nvidia-smi has no compute_cap field: nothing to compare then.
    row("compute_capability", g, labels.get("compute_capability"), col("compute_cap"),
        None if col("compute_cap") is None else labels.get("compute_capability") == col("compute_cap"))
    near("temperature C", g, v("DCGM_FI_DEV_GPU_TEMP", g)[0], num(col("temperature.gpu")), 3)
    pw = num(col("power.draw"))
    near("power W", g, v("DCGM_FI_DEV_POWER_USAGE", g)[0], pw, max(30, 0.15 * (pw or 0)))
    near("power limit W", g, v("vigil_gpu_power_limit_watts", g)[0], num(col("enforced.power.limit")), 1)
    tot = v("vigil_gpu_memory_total_bytes", g)[0]
    near("memory total MiB", g, tot / MiB if tot is not None else None, num(col("memory.total")), 1)
    used = num(col("memory.used"))
    near("FB used MiB", g, v("DCGM_FI_DEV_FB_USED", g)[0], used, max(256, 0.05 * (used or 0)))
    free = num(col("memory.free"))
    near("FB free MiB", g, v("DCGM_FI_DEV_FB_FREE", g)[0], free, max(256, 0.05 * (free or 0)))
    near("FB reserved MiB", g, v("DCGM_FI_DEV_FB_RESERVED", g)[0], num(col("memory.reserved")), 2)
    near("GPU util %", g, v("DCGM_FI_DEV_GPU_UTIL", g)[0], num(col("utilization.gpu")), 25, "instantaneous, ±25")
    near("mem util %", g, v("DCGM_FI_DEV_MEM_COPY_UTIL", g)[0], num(col("utilization.memory")), 25, "instantaneous, ±25")
    sm = num(col("clocks.sm"))
    near("SM clock MHz", g, v("DCGM_FI_DEV_SM_CLOCK", g)[0], sm, max(100, 0.15 * (sm or 0)))
    mc = num(col("clocks.mem"))
    near("mem clock MHz", g, v("DCGM_FI_DEV_MEM_CLOCK", g)[0], mc, max(50, 0.05 * (mc or 0)))
    near("max SM clock MHz", g, v("vigil_gpu_sm_clock_max_mhz", g)[0], num(col("clocks.max.sm")), 1)
    near("max mem clock MHz", g, v("vigil_gpu_mem_clock_max_mhz", g)[0], num(col("clocks.max.mem")), 1)
    reasons = col("clocks_event_reasons.active") or col("clocks_throttle_reasons.active")
    got = v("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", g)[0]
    if reasons is None or num(reasons) is None and not reasons.startswith("0x"):
        row("clock event reasons", g, got, "n/a", None)
    else:
        want = int(reasons, 16)
        # The idle bit flips with load between the two reads; compare the rest.
        row("clock event reasons", g, got, reasons,
            got is not None and (int(got) & ~1) == (want & ~1), "ignoring the idle bit")
    for metric, field in [("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "ecc.errors.corrected.volatile.total"),
                          ("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "ecc.errors.uncorrected.volatile.total"),
                          ("DCGM_FI_DEV_ECC_SBE_AGG_TOTAL", "ecc.errors.corrected.aggregate.total"),
                          ("DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", "ecc.errors.uncorrected.aggregate.total")]:
        near(metric, g, v(metric, g)[0], num(col(field)), 0)
    temp_q = open(os.path.join(work, f"temp.{i}")).read()
    for metric, label in [("vigil_gpu_temp_slowdown_celsius", "GPU Slowdown Temp"),
                          ("vigil_gpu_temp_shutdown_celsius", "GPU Shutdown Temp"),
                          ("vigil_gpu_temp_max_operating_celsius", "GPU Max Operating Temp")]:
        mm = re.search(label + r"\s*:\s*([0-9]+)", temp_q)
        near(metric, g, v(metric, g)[0], float(mm.group(1)) if mm else None, 0)
    energy = v("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", g)[0]
    row("energy counter mJ", g, energy, "> 0", None if energy is None else energy > 0,
        "nvidia-smi has no energy query")
    gpm, _ = v("vigil_gpu_gpm_supported", g)
    sm_active = v("DCGM_FI_PROF_SM_ACTIVE", g)[0]
    hopper_plus = bool(re.search(r"H100|H200|H800|H20|GH200|B100|B200|GB200", col("name") or ""))
    row("GPM supported", g, gpm, "1 on Hopper+", (gpm == 1) if hopper_plus else None)
    if gpm == 1:
        row("DCGM_FI_PROF_SM_ACTIVE in [0,1]", g, sm_active, "0..1",
            sm_active is not None and 0 <= sm_active <= 1)

# Per-process memory: nvidia-smi reports MiB per (pid, GPU UUID).
uuid_to_gpu = {labels.get("UUID"): labels.get("gpu") for n, labels, _ in series if n == "vigil_gpu_info"}
for line in open(os.path.join(work, "apps.csv")):
    parts = [p.strip() for p in line.split(",")]
    if len(parts) != 3 or not parts[0].isdigit():
        continue
    pid, uuid, mib = parts
    g = uuid_to_gpu.get(uuid)
    got = v("vigil_gpu_process_memory_bytes", g, pid=pid)[0] if g is not None else None
    near(f"process {pid} memory MiB", g, got / MiB if got is not None else None, num(mib),
         max(64, 0.05 * (num(mib) or 0)))

w = [max(len(r[k]) for r in rows + [("status", "check", "gpu", "vigil", "nvidia-smi", "note")]) for k in range(6)]
fmt = "  ".join("{:<%d}" % x for x in w)
print(fmt.format("status", "check", "gpu", "vigil", "nvidia-smi", "note"))
for r in rows:
    print(fmt.format(*r))
print(f"\n{sum(r[0] == 'PASS' for r in rows)} passed, {fails} failed, "
      f"{sum(r[0] == 'SKIP' for r in rows)} skipped")
sys.exit(1 if fails else 0)
PY
