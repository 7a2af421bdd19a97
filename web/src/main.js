// Vigil's page: the overview (every GPU as a card and the system below,
// live), the jobs (jobs.js) and the log explorer (logs.js), switched by tabs
// and the URL hash (#range=1h, #jobs&range=1h&id=..., #logs&range=1h&job=...). Data: /api/v1/status (what was
// detected), the Prometheus-compatible /api/v1/query_range and /api/v1/query,
// and the log API (/api/v1/logs/...).

import 'uplot/dist/uPlot.min.css';
import './style.css';
import * as api from './api.js';
import { Chart } from './charts.js';
import { h, setBar, setClass, setText } from './dom.js';
import * as fmt from './format.js';
import { detectLang, duration, lang, saveLang, setLang, t } from './i18n.js';
import { JobsPage, jobIdFromHash, jobsHash } from './jobs.js';
import { LogsPage } from './logs.js';

const RANGES = [
  ['5m', 300], ['15m', 900], ['1h', 3600], ['6h', 21600], ['24h', 86400], ['7d', 604800],
];
const DEFAULT_RANGE = '15m';
const CPU_MODES = ['user', 'system', 'iowait', 'softirq', 'irq', 'nice', 'steal'];
// A GPU this close to its slowdown temperature is flagged before it throttles.
const HOT_MARGIN_C = 5;
const IDLE_UTIL = 5;

// rate() needs a window that covers at least one step, or long ranges sample
// isolated moments; 1m is the floor node_exporter dashboards use.
function rateWindow(step) {
  const s = Math.max(60, step);
  return s % 60 === 0 ? `${s / 60}m` : `${s}s`;
}

function rangeQueries(step) {
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
const INSTANT_QUERIES = {
  slowdown: 'vigil_gpu_temp_slowdown_celsius',
  limit: 'vigil_gpu_power_limit_watts',
  tx: 'DCGM_FI_DEV_PCIE_TX_THROUGHPUT',
  rx: 'DCGM_FI_DEV_PCIE_RX_THROUGHPUT',
  memTotal: 'node_memory_MemTotal_bytes',
  cpus: 'node_cpu_seconds_total{mode="idle"}', // one series per CPU
};

const state = {
  page: pageFromHash(),
  range: rangeFromHash(),
  status: null,
  statusError: null,
  queryError: null,
  lastUpdate: 0,
  cards: new Map(), // gpu index (string) -> card
  inflight: null,
  view: null, // the latest computed view, re-rendered on a language switch
};

function rangeFromHash() {
  const m = /range=([0-9a-z]+)/.exec(location.hash);
  return m && RANGES.some(([k]) => k === m[1]) ? m[1] : DEFAULT_RANGE;
}
function pageFromHash() {
  const m = /^#(logs|jobs)(&|$)/.exec(location.hash);
  return m ? m[1] : 'overview';
}
function rangeSeconds() { return RANGES.find(([k]) => k === state.range)[1]; }

// ---------------------------------------------------------------------------
// Static strings: registered once, retranslated on a language switch.
const i18nEls = [];
function T(key, tag = 'span', cls = null) {
  const el = h(tag, cls ? { class: cls } : null, t(key));
  i18nEls.push([el, key]);
  return el;
}

// ---------------------------------------------------------------------------
// Layout

const ui = {};

function buildPage() {
  ui.rangeButtons = RANGES.map(([key]) => {
    const b = h('button', { type: 'button', class: 'seg', 'data-range': key,
      onclick: () => selectRange(key) });
    i18nEls.push([b, `range.${key}`]);
    return b;
  });
  ui.langButton = h('button', { type: 'button', class: 'lang', onclick: toggleLang });
  ui.tabs = {
    overview: h('a', { class: 'tab', 'data-page': 'overview', href: '#' }, T('nav.overview')),
    jobs: h('a', { class: 'tab', 'data-page': 'jobs', href: '#jobs' }, T('nav.jobs')),
    logs: h('a', { class: 'tab', 'data-page': 'logs', href: '#logs' }, T('nav.logs')),
  };
  ui.node = h('span', { class: 'node' });
  ui.statusDot = h('i', { class: 'dot' });
  ui.statusText = h('span', { class: 'status-text' });
  ui.queryNote = h('div', { class: 'note', hidden: true });
  ui.live = h('span', { class: 'live' });
  ui.updated = h('span', { class: 'updated' });

  const header = h('header', { class: 'top' },
    h('div', { class: 'brand' },
      h('span', { class: 'logo', 'aria-hidden': 'true' }),
      h('span', { class: 'name' }, 'Vigil'),
      ui.node),
    h('nav', { class: 'tabs' }, ui.tabs.overview, ui.tabs.jobs, ui.tabs.logs),
    h('div', { class: 'controls' },
      ui.rangeGroup = h('div', { class: 'segmented', role: 'group' }, ui.rangeButtons),
      ui.langButton));
  const statusBar = h('div', { class: 'statusbar' },
    h('div', { class: 'status', 'data-testid': 'status' }, ui.statusDot, ui.statusText),
    h('div', { class: 'freshness' }, ui.live, ui.updated));

  ui.summary = h('section', { class: 'summary' });
  ui.kpi = {
    util: kpi('sum.util'), mem: kpi('sum.mem'), hot: kpi('sum.hot'),
    power: kpi('sum.power'), idle: kpi('sum.idle'),
  };
  for (const k of Object.values(ui.kpi)) ui.summary.append(k.el);

  ui.gpuGrid = h('div', { class: 'gpu-grid' });
  ui.noGpus = T('noGpus', 'p', 'empty');
  ui.gpuCount = h('span', { class: 'count' });
  ui.gpuSection = h('section', { class: 'gpus' },
    h('h2', null, T('gpus'), ui.gpuCount), ui.noGpus, ui.gpuGrid);

  ui.sysGrid = h('div', { class: 'sys-grid' });
  ui.sysSection = h('section', { class: 'system' }, h('h2', null, T('system')), ui.sysGrid);
  ui.footer = h('footer', null);

  ui.overview = h('div', { class: 'overview' }, ui.queryNote, ui.summary, ui.gpuSection, ui.sysSection);
  ui.logs = new LogsPage(() => ({ key: state.range, seconds: rangeSeconds() }));
  ui.jobs = new JobsPage(() => ({ key: state.range, seconds: rangeSeconds() }), RANGES);
  document.body.replaceChildren(
    h('div', { class: 'page' }, header, statusBar, ui.overview, ui.jobs.el, ui.logs.el, ui.footer));

  buildSystem();
}

function kpi(key) {
  const value = h('div', { class: 'kpi-value' }, '–');
  const sub = h('div', { class: 'kpi-sub' });
  const bar = h('span');
  const el = h('div', { class: 'kpi' }, T(key, 'div', 'kpi-label'), value,
    h('div', { class: 'bar' }, bar), sub);
  return { el, value, sub, bar };
}

function stat(labelKey) {
  const value = h('span', { class: 'stat-value' }, '–');
  const sub = h('span', { class: 'stat-sub' });
  const bar = h('span');
  const el = h('div', { class: 'stat' }, T(labelKey, 'span', 'stat-label'), value,
    h('div', { class: 'bar' }, bar), sub);
  return { el, value, sub, bar };
}

function ensureCard(gpu) {
  let card = state.cards.get(gpu);
  if (card) return card;
  const title = h('span', { class: 'gpu-index' });
  const model = h('span', { class: 'gpu-model' });
  const flag = h('span', { class: 'flag', hidden: true });
  const stats = { util: stat('util'), mem: stat('mem'), temp: stat('temp'), power: stat('power') };
  const pcieTx = h('span', { class: 'pcie-v' });
  const pcieRx = h('span', { class: 'pcie-v' });
  const charts = h('div', { class: 'charts' });
  const el = h('article', { class: 'gpu card', 'data-gpu': gpu },
    h('div', { class: 'card-head' }, title, model, flag),
    h('div', { class: 'stats' }, Object.values(stats).map((s) => s.el)),
    charts,
    h('div', { class: 'pcie' }, T('pcie', 'span', 'pcie-label'),
      T('tx', 'span', 'pcie-k'), pcieTx, T('rx', 'span', 'pcie-k'), pcieRx));
  card = { gpu, el, title, model, flag, stats, pcieTx, pcieRx };
  state.cards.set(gpu, card);
  ui.gpuGrid.append(el);
  // Charts measure their parent, so they are made once the card is in the page.
  card.utilChart = new Chart(charts, {
    yMax: 100, height: 58, axis: false, series: [
      { key: 'series.util', color: '--c-util', fill: true, fmt: fmt.percent },
      { key: 'series.mem', color: '--c-mem', fmt: fmt.percent }] });
  card.tempChart = new Chart(charts, {
    yFloat: true, height: 50, axis: false, series: [{ key: 'series.temp', color: '--c-temp', fmt: (v) => `${fmt.fixed(v)} °C` }] });
  card.powerChart = new Chart(charts, {
    height: 70, series: [{ key: 'series.power', color: '--c-power', fmt: (v) => `${fmt.fixed(v)} W` }] });
  return card;
}

function panel(titleKey, chartOpts) {
  const value = h('div', { class: 'panel-value' }, '–');
  const sub = h('div', { class: 'panel-sub' });
  const body = h('div', { class: 'panel-chart' });
  const el = h('article', { class: 'card panel' },
    h('div', { class: 'panel-head' }, T(titleKey, 'h3'), value), sub, body);
  ui.sysGrid.append(el);
  const chart = new Chart(body, { height: 120, ...chartOpts });
  return { el, value, sub, chart };
}

function buildSystem() {
  const palette = ['--c1', '--c2', '--c3', '--c4', '--c5', '--c6', '--c7'];
  ui.cpu = panel('cpu', {
    title: 'chart.cpu',
    yMax: 100,
    series: CPU_MODES.map((m, i) => ({ key: `mode.${m}`, color: palette[i], fill: i === 0,
      fmt: (v) => `${v.toFixed(v < 10 ? 1 : 0)}%` })),
  });
  ui.mem = panel('memory', {
    title: 'chart.memory',
    series: [{ key: 'memUsedGiB', color: '--c-mem', fill: true, fmt: (v) => `${v.toFixed(1)} GiB` }],
  });
  ui.disk = panel('disk', {
    fmtAxis: fmt.compact,
    series: [{ key: 'read', color: '--c1', fmt: fmt.rate }, { key: 'write', color: '--c2', fmt: fmt.rate }],
  });
  ui.net = panel('net', {
    fmtAxis: fmt.compact,
    series: [{ key: 'recv', color: '--c3', fmt: fmt.rate }, { key: 'send', color: '--c4', fmt: fmt.rate }],
  });
}

// ---------------------------------------------------------------------------
// Data

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

async function refresh() {
  if (state.inflight) return;
  const ctrl = new AbortController();
  state.inflight = ctrl;
  const win = api.windowFor(rangeSeconds());
  const rq = rangeQueries(win.step);
  if (state.page !== 'overview') {
    // The jobs and the log explorer show the status line only; their data is their own.
    try {
      state.status = await api.getJson('/api/v1/status', null, ctrl.signal);
      state.statusError = null;
      state.lastUpdate = Date.now();
    } catch (e) {
      if (e.name !== 'AbortError') state.statusError = e;
    } finally {
      if (state.inflight === ctrl) state.inflight = null;
    }
    if (!ctrl.signal.aborted) renderStatus();
    return;
  }
  try {
    const statusP = api.getJson('/api/v1/status', null, ctrl.signal);
    const rangeKeys = Object.keys(rq);
    const instKeys = Object.keys(INSTANT_QUERIES);
    const settled = await Promise.allSettled([
      statusP,
      ...rangeKeys.map((k) => api.queryRange(rq[k], win, ctrl.signal)),
      ...instKeys.map((k) => api.queryInstant(INSTANT_QUERIES[k], ctrl.signal)),
    ]);
    if (ctrl.signal.aborted) return;
    const [st, ...rest] = settled;
    if (st.status === 'fulfilled') {
      state.status = st.value;
      state.statusError = null;
    } else {
      state.statusError = st.reason;
    }
    const range = {}, inst = {};
    let qerr = null;
    rangeKeys.forEach((k, i) => {
      const r = rest[i];
      if (r.status === 'fulfilled') range[k] = r.value;
      else { range[k] = []; qerr ??= r.reason; }
    });
    instKeys.forEach((k, i) => {
      const r = rest[rangeKeys.length + i];
      if (r.status === 'fulfilled') inst[k] = r.value;
      else { inst[k] = []; qerr ??= r.reason; }
    });
    state.queryError = qerr;
    if (st.status === 'fulfilled') state.lastUpdate = Date.now();
    state.view = computeView(win, range, inst);
    render();
  } finally {
    if (state.inflight === ctrl) state.inflight = null;
  }
}

function computeView(win, range, inst) {
  const xs = api.timeAxis(win);
  const align = (s) => api.alignValues(s, win, xs);

  // The GPU list: what the status reports, plus any GPU that has data.
  const gpuMeta = new Map();
  for (const g of state.status?.gpu?.gpus ?? []) {
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

// ---------------------------------------------------------------------------
// Rendering (idempotent: runs after each refresh and on a language switch)

function gpuFlag(v) {
  if (Number.isFinite(v.tempNow) && Number.isFinite(v.slowdown)) {
    if (v.tempNow >= v.slowdown) return 'throttle';
    if (v.tempNow >= v.slowdown - HOT_MARGIN_C) return 'hot';
  }
  if (Number.isFinite(v.utilNow) && v.utilNow < IDLE_UTIL) return 'idle';
  return null;
}

function renderStatus() {
  const s = state.status;
  let text, level;
  if (state.statusError) {
    text = t('unreachable', { err: state.statusError.message });
    level = 'bad';
  } else if (!s) {
    text = t('connecting');
    level = 'info';
  } else {
    const g = s.gpu ?? {};
    const gpus = g.gpus ?? [];
    if (g.state === 'ok' && g.responsive === false) { text = t('notResponding'); level = 'bad'; }
    else if (g.state === 'ok' && gpus.length === 0) { text = t('gpuNone'); level = 'info'; }
    else if (g.state === 'ok') {
      const models = new Set(gpus.map((x) => x.modelName));
      const model = models.size === 1 ? [...models][0] : t('gpuMixed');
      text = t(gpus.length === 1 ? 'gpuOkOne' : 'gpuOk', { n: gpus.length, model,
        driver: g.driver_version || '?', cuda: g.cuda_version || '?' });
      level = 'ok';
    } else if (g.state === 'no_driver') { text = t('noDriver'); level = 'info'; }
    else if (g.state === 'error') { text = t('driverError'); level = 'bad'; }
    else { text = t('starting'); level = 'info'; }
  }
  setText(ui.statusText, text);
  ui.statusDot.className = `dot ${level}`;

  const node = s?.node ?? '';
  setText(ui.node, node);
  document.title = node ? t('pageTitle', { node }) : 'Vigil';
  const live = !state.statusError && s;
  setText(ui.live, live ? t('live') : t('paused'));
  setClass(ui.live, 'on', live);
  setText(ui.updated, state.lastUpdate
    ? t('updated', { t: fmt.clockSeconds(state.lastUpdate / 1000) }) : '');
  setText(ui.footer, s ? t('footer', { version: s.version ?? '', home: s.home ?? '' }) + ' · '
    + t('uptime', { d: duration(s.uptime_seconds ?? 0) }) : '');

  // When the server is away every query fails too; the status line says so.
  const e = state.statusError ? null : state.queryError;
  const note = e ? (e.status === 404 ? t('queryMissing') : t('queryFailed', { err: e.message })) : '';
  setText(ui.queryNote, note);
  ui.queryNote.hidden = !note;
}

function renderSummary(v) {
  const g = v.gpus;
  ui.summary.hidden = g.length === 0;
  if (g.length === 0) return;
  const fin = (a) => a.filter(Number.isFinite);
  const utils = fin(g.map((x) => x.utilNow));
  const avgUtil = utils.length ? utils.reduce((a, b) => a + b, 0) / utils.length : NaN;
  setText(ui.kpi.util.value, fmt.percent(avgUtil));
  setText(ui.kpi.util.sub, t('sum.utilSub', { n: g.length }));
  setBar(ui.kpi.util.bar, avgUtil / 100);

  // A sum over no values is unknown, not 0.
  const sum = (a) => { const f = fin(a); return f.length ? f.reduce((x, y) => x + y, 0) : NaN; };
  const used = sum(g.map((x) => x.memUsed));
  const total = sum(g.map((x) => x.memTotal));
  setText(ui.kpi.mem.value, fmt.bytes(used, 0));
  setText(ui.kpi.mem.sub, Number.isFinite(total) ? t('sum.of', { total: fmt.bytes(total, 0) }) : '');
  setBar(ui.kpi.mem.bar, total > 0 ? used / total : 0);

  let hottest = null;
  for (const x of g) if (Number.isFinite(x.tempNow) && (!hottest || x.tempNow > hottest.tempNow)) hottest = x;
  const flag = hottest ? gpuFlag(hottest) : null;
  setText(ui.kpi.hot.value, hottest ? `${fmt.fixed(hottest.tempNow)} °C` : '–');
  setText(ui.kpi.hot.sub, hottest ? t('sum.hotSub', { gpu: hottest.gpu,
    limit: Number.isFinite(hottest.slowdown) ? `${hottest.slowdown} °C` : '?' }) : '');
  setBar(ui.kpi.hot.bar, hottest && hottest.slowdown ? hottest.tempNow / hottest.slowdown : 0);
  setClass(ui.kpi.hot.el, 'warn', flag === 'hot');
  setClass(ui.kpi.hot.el, 'crit', flag === 'throttle');

  const pw = sum(g.map((x) => x.powerNow));
  const lim = sum(g.map((x) => x.limit));
  const kw = (w) => (!Number.isFinite(w) ? '–' : w >= 1000 ? `${(w / 1000).toFixed(1)} kW` : `${Math.round(w)} W`);
  setText(ui.kpi.power.value, kw(pw));
  setText(ui.kpi.power.sub, lim > 0 ? t('sum.of', { total: kw(lim) }) : '');
  setBar(ui.kpi.power.bar, lim > 0 ? pw / lim : 0);

  const idle = g.filter((x) => Number.isFinite(x.utilNow) && x.utilNow < IDLE_UTIL).length;
  setText(ui.kpi.idle.value, utils.length ? String(idle) : '–');
  setText(ui.kpi.idle.sub, t('sum.idleSub'));
  setBar(ui.kpi.idle.bar, idle / g.length);
  setClass(ui.kpi.idle.el, 'warn', idle > 0);
}

function renderGpus(v) {
  const seen = new Set();
  for (const gv of v.gpus) {
    const c = ensureCard(gv.gpu);
    seen.add(gv.gpu);
    setText(c.title, t('gpu', { i: gv.gpu }));
    setText(c.model, gv.model);
    if (c.model.title !== gv.model) c.model.title = gv.model;
    const flag = gpuFlag(gv);
    c.flag.hidden = !flag;
    c.flag.className = `flag ${flag ?? ''}`;
    setText(c.flag, flag ? t(`flag.${flag}`) : '');
    setClass(c.el, 'hot', flag === 'hot');
    setClass(c.el, 'throttle', flag === 'throttle');
    setClass(c.el, 'idle', flag === 'idle');
    c.el.dataset.flag = flag ?? '';

    const s = c.stats;
    setText(s.util.value, fmt.percent(gv.utilNow));
    setBar(s.util.bar, gv.utilNow / 100);
    setText(s.util.sub, '');
    setText(s.mem.value, fmt.bytes(gv.memUsed, 1).replace('.0 ', ' '));
    setText(s.mem.sub, t('ofTotal', { v: fmt.bytes(gv.memTotal, 0) }));
    setBar(s.mem.bar, gv.memUsed / gv.memTotal);
    setText(s.temp.value, Number.isFinite(gv.tempNow) ? `${fmt.fixed(gv.tempNow)} °C` : '–');
    setText(s.temp.sub, Number.isFinite(gv.slowdown) ? t('slowdownAt', { v: gv.slowdown }) : '');
    setBar(s.temp.bar, gv.tempNow / (gv.slowdown || 100));
    setClass(s.temp.el, 'warn', flag === 'hot');
    setClass(s.temp.el, 'crit', flag === 'throttle');
    setText(s.power.value, Number.isFinite(gv.powerNow) ? `${fmt.fixed(gv.powerNow)} W` : '–');
    setText(s.power.sub, Number.isFinite(gv.limit) ? t('limitOf', { v: `${fmt.fixed(gv.limit)} W` }) : '');
    setBar(s.power.bar, gv.powerNow / gv.limit);
    setText(c.pcieTx, fmt.rate(gv.tx));
    setText(c.pcieRx, fmt.rate(gv.rx));

    c.utilChart.set(v.win, [v.xs, gv.util, gv.memPct]);
    c.tempChart.set(v.win, [v.xs, gv.temp], Number.isFinite(gv.slowdown) ? gv.slowdown : null);
    c.powerChart.set(v.win, [v.xs, gv.power], Number.isFinite(gv.limit) ? gv.limit : null);
  }
  for (const [gpu, c] of state.cards) {
    if (!seen.has(gpu)) { c.el.remove(); state.cards.delete(gpu); }
  }
  // Keep cards in GPU order even when one appears late.
  const order = v.gpus.map((g) => state.cards.get(g.gpu).el);
  if (order.some((el, i) => ui.gpuGrid.children[i] !== el)) ui.gpuGrid.append(...order);
  ui.noGpus.hidden = v.gpus.length > 0;
  setText(ui.gpuCount, v.gpus.length ? String(v.gpus.length) : '');
}

function renderSystem(v) {
  const { cpu, mem, disk, net } = v;
  setText(ui.cpu.value, fmt.percent(cpu.busyPct));
  setText(ui.cpu.sub, Number.isFinite(cpu.cores) && Number.isFinite(cpu.busyPct)
    ? t('cpuSub', { busy: fmt.fixed((cpu.busyPct / 100) * cpu.cores, 1), cores: cpu.cores }) : '');
  ui.cpu.chart.set(v.win, [v.xs, ...cpu.series]);

  const used = api.lastValue(mem.used);
  setText(ui.mem.value, fmt.bytes(used));
  setText(ui.mem.sub, Number.isFinite(mem.total) ? t('memSub', { used: fmt.bytes(used), total: fmt.bytes(mem.total) }) : '');
  const gib = (b) => (b == null ? null : b / 1073741824);
  ui.mem.chart.set(v.win, [v.xs, mem.used.map(gib)], Number.isFinite(mem.total) ? gib(mem.total) : null);

  const r = api.lastValue(disk.read), w = api.lastValue(disk.write);
  const total = (a, b) => (Number.isFinite(a) || Number.isFinite(b) ? (a || 0) + (b || 0) : NaN);
  setText(ui.disk.value, fmt.rate(total(r, w)));
  setText(ui.disk.sub, t('diskSub', { r: fmt.rate(r), w: fmt.rate(w) }));
  ui.disk.chart.set(v.win, [v.xs, disk.read, disk.write]);

  const rx = api.lastValue(net.rx), tx = api.lastValue(net.tx);
  setText(ui.net.value, fmt.rate(total(rx, tx)));
  setText(ui.net.sub, t('netSub', { rx: fmt.rate(rx), tx: fmt.rate(tx) }));
  ui.net.chart.set(v.win, [v.xs, net.rx, net.tx]);
}

function render() {
  renderStatus();
  if (!state.view) return;
  renderGpus(state.view);
  renderSummary(state.view);
  renderSystem(state.view);
}

function applyLang() {
  for (const [el, key] of i18nEls) setText(el, t(key));
  setText(ui.langButton, t('switchTo'));
  ui.langButton.setAttribute('aria-label', t('language'));
  for (const c of state.cards.values()) {
    for (const ch of [c.utilChart, c.tempChart, c.powerChart]) ch.relabel();
  }
  for (const p of [ui.cpu, ui.mem, ui.disk, ui.net]) p.chart.relabel();
  ui.logs.relabel();
  ui.jobs.relabel();
  render();
}

function toggleLang() {
  const next = lang() === 'zh' ? 'en' : 'zh';
  setLang(next);
  saveLang(next);
  applyLang();
}

function markRange() {
  if (ui.tabs) {
    ui.tabs.overview.href = `#range=${state.range}`;
    ui.tabs.logs.href = `#logs&range=${state.range}`;
    ui.tabs.jobs.href = `#jobs&range=${state.range}`;
  }
  for (const b of ui.rangeButtons) {
    const on = b.dataset.range === state.range;
    setClass(b, 'active', on);
    b.setAttribute('aria-pressed', String(on));
  }
}

function selectRange(key) {
  if (key === state.range) return;
  state.range = key;
  markRange();
  if (state.page === 'logs') {
    ui.logs.run(); // writes the hash with the new range
    return;
  }
  if (state.page === 'jobs') {
    history.replaceState(null, '', jobsHash(key, jobIdFromHash(location.hash)));
    return;
  }
  history.replaceState(null, '', `#range=${key}`);
  // A refresh for the old window must not overwrite the new one.
  state.inflight?.abort();
  state.inflight = null;
  schedule(0);
}

// The page for the URL: tabs are links, so the back button and a copied
// link both work; the range carries over between the pages.
function route() {
  const page = pageFromHash();
  const range = rangeFromHash();
  const changed = page !== state.page || range !== state.range;
  state.page = page;
  state.range = range;
  markRange();
  for (const [k, a] of Object.entries(ui.tabs)) {
    setClass(a, 'active', k === page);
    if (k === page) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  }
  ui.overview.hidden = page !== 'overview';
  // A job's charts span the job's life, not the picked range.
  ui.rangeGroup.hidden = page === 'jobs';
  if (page === 'logs') ui.logs.show(location.hash);
  else ui.logs.hide();
  if (page === 'jobs') ui.jobs.show(location.hash);
  else ui.jobs.hide();
  if (changed) {
    state.inflight?.abort();
    state.inflight = null;
    schedule(0);
  }
}

// Live refresh: every 2 s for short windows; long windows move slowly, so
// they refresh at their step (at most every 30 s).
let timer = null;
function schedule(delay) {
  clearTimeout(timer);
  timer = setTimeout(async () => {
    if (!document.hidden) await refresh().catch(() => {});
    const step = api.pickStep(rangeSeconds());
    // The jobs and the log explorer only refresh the status line from here.
    schedule(state.page !== 'overview' ? 10000 : Math.min(30000, Math.max(2000, step * 1000)));
  }, delay);
}

function main() {
  setLang(detectLang());
  buildPage();
  markRange();
  applyLang();
  document.addEventListener('visibilitychange', () => {
    ui.logs.onVisibility(document.hidden);
    ui.jobs.onVisibility(document.hidden);
    if (!document.hidden) schedule(0);
  });
  window.addEventListener('hashchange', route);
  route();
  schedule(0);
}

main();
