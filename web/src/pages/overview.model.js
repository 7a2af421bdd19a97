// The overview's data, without the DOM (tested in node): the PromQL it asks
// for, the view it draws (every GPU's series and latest values, the system's
// CPU, memory, disk and network) built from the answers, each GPU's flag
// (hot, throttling, idle) and the summary over all GPUs.

import * as api from '../api.js';

export const CPU_MODES = ['user', 'system', 'iowait', 'softirq', 'irq', 'nice', 'steal'];
// A GPU this close to its slowdown temperature is flagged before it throttles.
export const HOT_MARGIN_C = 5;
export const IDLE_UTIL = 5;

// rate() needs a window that covers at least one step, or long ranges sample
// isolated moments; 1m is the floor node_exporter dashboards use.
export function rateWindow(step) {
  const s = Math.max(60, step);
  return s % 60 === 0 ? `${s / 60}m` : `${s}s`;
}

export function rangeQueries(step) {
  const w = rateWindow(step);
  return {
    util: 'DCGM_FI_DEV_GPU_UTIL',
    used: 'DCGM_FI_DEV_FB_USED',
    free: 'DCGM_FI_DEV_FB_FREE',
    temp: 'DCGM_FI_DEV_GPU_TEMP',
    power: 'DCGM_FI_DEV_POWER_USAGE',
    cpu: `sum by (mode) (rate(node_cpu_seconds_total[${w}]))`,
    memAvail: 'node_memory_MemAvailable_bytes',
    diskRead: `rate(node_disk_read_bytes_total[${w}])`,
    diskWrite: `rate(node_disk_written_bytes_total[${w}])`,
    netRx: `rate(node_network_receive_bytes_total{device!="lo"}[${w}])`,
    netTx: `rate(node_network_transmit_bytes_total{device!="lo"}[${w}])`,
  };
}

export const INSTANT_QUERIES = {
  slowdown: 'vigil_gpu_temp_slowdown_celsius',
  limit: 'vigil_gpu_power_limit_watts',
  tx: 'DCGM_FI_DEV_PCIE_TX_THROUGHPUT',
  rx: 'DCGM_FI_DEV_PCIE_RX_THROUGHPUT',
  memTotal: 'node_memory_MemTotal_bytes',
  cpus: 'node_cpu_seconds_total{mode="idle"}', // one series per CPU
};

// Settled answers ({key: Promise.allSettled result}) as {key: result} with
// [] for a failed query, and the first failure.
export function settledResults(keys, settled) {
  const out = {};
  let error = null;
  keys.forEach((k, i) => {
    const r = settled[i];
    if (r.status === 'fulfilled') out[k] = r.value;
    else { out[k] = []; error ??= r.reason; }
  });
  return { results: out, error };
}

function byGpu(results) {
  const m = new Map();
  for (const s of results) {
    const gpu = s.metric?.gpu;
    if (gpu != null) m.set(String(gpu), s);
  }
  return m;
}

function instantByGpu(results) {
  const m = new Map();
  for (const s of results) {
    const gpu = s.metric?.gpu;
    if (gpu != null) m.set(String(gpu), Number(s.value?.[1]));
  }
  return m;
}

// The view of one refresh. win: the query window; range, inst: the range
// and instant queries' results by key (rangeQueries, INSTANT_QUERIES);
// status: /api/v1/status (its GPUs are listed even without data).
export function computeView(win, range, inst, status) {
  const xs = api.timeAxis(win);
  const align = (s) => api.alignValues(s, win, xs);

  // The GPU list: what the status reports, plus any GPU that has data.
  const gpuMeta = new Map();
  for (const g of status?.gpu?.gpus ?? []) {
    if (g.gpu != null) gpuMeta.set(String(g.gpu), { model: g.modelName ?? '' });
  }
  const series = {};
  for (const k of ['util', 'used', 'free', 'temp', 'power']) {
    series[k] = byGpu(range[k]);
    for (const [gpu, s] of series[k]) {
      if (!gpuMeta.has(gpu)) gpuMeta.set(gpu, { model: s.metric?.modelName ?? '' });
    }
  }
  const slowdown = instantByGpu(inst.slowdown), limit = instantByGpu(inst.limit);
  const tx = instantByGpu(inst.tx), rx = instantByGpu(inst.rx);
  const empty = () => new Array(xs.length).fill(null);
  const get = (k, gpu) => (series[k].has(gpu) ? align(series[k].get(gpu)) : empty());

  const gpus = [...gpuMeta.keys()].sort((a, b) => Number(a) - Number(b) || a.localeCompare(b));
  const gpuViews = gpus.map((gpu) => {
    const util = get('util', gpu), used = get('used', gpu), free = get('free', gpu);
    const memPct = used.map((u, i) => (u != null && free[i] != null && u + free[i] > 0
      ? (100 * u) / (u + free[i]) : null));
    const temp = get('temp', gpu), power = get('power', gpu);
    const usedNow = api.lastValue(used), freeNow = api.lastValue(free);
    return {
      gpu, model: gpuMeta.get(gpu).model, util, memPct, temp, power,
      utilNow: api.lastValue(util),
      memUsed: usedNow * 1048576, memTotal: (usedNow + freeNow) * 1048576,
      tempNow: api.lastValue(temp), slowdown: slowdown.get(gpu) ?? NaN,
      powerNow: api.lastValue(power), limit: limit.get(gpu) ?? NaN,
      // NVML reports PCIe throughput in KiB/s.
      tx: (tx.get(gpu) ?? NaN) * 1024, rx: (rx.get(gpu) ?? NaN) * 1024,
    };
  });

  // CPU modes as shares of all CPU time: unlike raw rates, shares are right
  // from the first samples (rate() extrapolates a young series low).
  const cpuModes = new Map();
  for (const s of range.cpu) cpuModes.set(s.metric?.mode, align(s));
  const allModes = api.sumAligned([...cpuModes.values()], xs.length);
  const share = (arr) => arr.map((v, i) => (v != null && allModes[i] > 0 ? (100 * v) / allModes[i] : null));
  const cpuSeries = CPU_MODES.map((m) => share(cpuModes.get(m) ?? empty()));
  const busyPct = api.sumAligned(cpuSeries, xs.length);

  const memTotal = Number(inst.memTotal[0]?.value?.[1]);
  const avail = range.memAvail[0] ? align(range.memAvail[0]) : empty();
  const memUsed = avail.map((a) => (a != null && Number.isFinite(memTotal) ? memTotal - a : null));
  const sumOf = (k) => api.sumAligned(range[k].map(align), xs.length);

  return {
    win, xs, gpus: gpuViews,
    cpu: { series: cpuSeries, busyPct: api.lastValue(busyPct), cores: inst.cpus.length || NaN },
    mem: { used: memUsed, total: memTotal },
    disk: { read: sumOf('diskRead'), write: sumOf('diskWrite') },
    net: { rx: sumOf('netRx'), tx: sumOf('netTx') },
  };
}

// A GPU's flag: 'throttle' at or past its slowdown temperature, 'hot' within
// HOT_MARGIN_C of it, 'idle' under IDLE_UTIL % utilization, else null.
export function gpuFlag(v) {
  if (Number.isFinite(v.tempNow) && Number.isFinite(v.slowdown)) {
    if (v.tempNow >= v.slowdown) return 'throttle';
    if (v.tempNow >= v.slowdown - HOT_MARGIN_C) return 'hot';
  }
  if (Number.isFinite(v.utilNow) && v.utilNow < IDLE_UTIL) return 'idle';
  return null;
}

// The summary over the GPUs' views: average utilization, memory used and
// total, the hottest GPU (and its flag), power and the sum of limits, idle
// GPUs. A sum over no values is unknown (NaN), not 0.
export function summarize(gpus) {
  const fin = (a) => a.filter(Number.isFinite);
  const sum = (a) => { const f = fin(a); return f.length ? f.reduce((x, y) => x + y, 0) : NaN; };
  const utils = fin(gpus.map((x) => x.utilNow));
  let hottest = null;
  for (const x of gpus) if (Number.isFinite(x.tempNow) && (!hottest || x.tempNow > hottest.tempNow)) hottest = x;
  return {
    avgUtil: utils.length ? utils.reduce((a, b) => a + b, 0) / utils.length : NaN,
    utilKnown: utils.length > 0,
    memUsed: sum(gpus.map((x) => x.memUsed)),
    memTotal: sum(gpus.map((x) => x.memTotal)),
    hottest,
    hottestFlag: hottest ? gpuFlag(hottest) : null,
    power: sum(gpus.map((x) => x.powerNow)),
    powerLimit: sum(gpus.map((x) => x.limit)),
    idle: gpus.filter((x) => Number.isFinite(x.utilNow) && x.utilNow < IDLE_UTIL).length,
  };
}

// How often the overview refreshes: every 2 s for short windows; long
// windows move slowly, so at their step, at most every 30 s.
export function refreshMs(rangeSec) {
  return Math.min(30000, Math.max(2000, api.pickStep(rangeSec) * 1000));
}

// The overview's URL: #range=1h, and with one GPU's card brought into view
// and outlined, #range=1h&gpu=3 (the Alerts tab links there).
export function overviewHash(range, gpu) {
  const p = new URLSearchParams();
  p.set('range', range);
  if (gpu != null && gpu !== '') p.set('gpu', String(gpu));
  return `#${p.toString()}`;
}

export function gpuFromHash(hash) {
  return new URLSearchParams(String(hash ?? '').replace(/^#/, '')).get('gpu') ?? '';
}
