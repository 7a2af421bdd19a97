// The Jobs tab: every training or inference job the server tracks
// (/api/v1/jobs) in a table, and one job's detail: what it is and how it
// ended, its loss, learning rate, grad norm and throughput next to its node's
// GPU utilization and memory on one time axis (the job's start to its end, or
// now), its events as markers under the charts and as a list, and a link to
// its logs. URL: #jobs&range=15m (the list), #jobs&range=15m&id=<job id>.
//
// Job names, command lines, event messages and log queries are untrusted:
// they reach the page only as text nodes (dom.js h / setText), never as HTML.

import * as api from './api.js';
import { Chart } from './charts.js';
import { h, retranslate, setClass, setText, translated } from './dom.js';
import * as fmt from './format.js';
import { duration, lang, t, tLabel } from './i18n.js';
import { logsHash, quote } from './logql.js';

const LIST_REFRESH_MS = 5000;
const MIN_SPAN_S = 60; // a job that just started still gets a readable axis
const MAX_PROCESSES = 64;
const GPU_PALETTE = ['--c1', '--c2', '--c3', '--c4', '--c5', '--c6', '--c7', '--c8'];

// ---------------------------------------------------------------------------
// Pure helpers (no DOM; tested in node)

export const STATES = ['running', 'stalled', 'completed', 'crashed', 'killed', 'exited'];
const TONES = { running: 'green', stalled: 'amber', crashed: 'red', killed: 'grey', completed: 'blue', exited: 'grey' };

// A state's badge: its colour and its i18n key. Unknown states are grey and
// shown as the server wrote them.
export function stateBadge(state) {
  const known = STATES.includes(state);
  return { tone: known ? TONES[state] : 'grey', key: known ? `jobstate.${state}` : null, text: String(state ?? '') };
}

export function isActive(job) { return job?.state === 'running' || job?.state === 'stalled'; }

const num = (v) => (v == null || v === '' ? NaN : Number(v));

// When the job's charts end: its end, or now while it runs; a job that is
// over but has no end time ends when it was last seen.
export function jobEndMs(job, nowMs) {
  const end = num(job.end_time_ms);
  if (Number.isFinite(end)) return end;
  if (isActive(job)) return nowMs;
  const seen = num(job.last_seen_ms);
  return Number.isFinite(seen) ? seen : nowMs;
}

export function jobDurationSec(job, nowMs) {
  const start = num(job.start_time_ms);
  if (!Number.isFinite(start)) return NaN;
  return Math.max(0, (jobEndMs(job, nowMs) - start) / 1000);
}

// The shared time axis of a job's charts: from its start to its end (or now),
// at a step giving about 150-300 points, start and end on the step. A running
// job's window ends at the last whole step (a later one would repeat the last
// sample into the future); a finished job's includes its end.
export function jobWindow(job, nowMs) {
  const live = isActive(job) && !Number.isFinite(num(job.end_time_ms));
  let startS = num(job.start_time_ms) / 1000;
  if (!Number.isFinite(startS)) startS = jobEndMs(job, nowMs) / 1000 - 3600; // no start time: its last hour
  const endS = Math.max(jobEndMs(job, nowMs) / 1000, startS + MIN_SPAN_S);
  const span = endS - startS;
  let step = api.pickStep(span);
  if (span / step > 300) step = Math.ceil(span / 240 / 3600) * 3600; // jobs longer than 10 days
  const start = Math.floor(startS / step) * step;
  let end = live ? Math.floor(endS / step) * step : Math.ceil(endS / step) * step;
  if (end <= start) end = start + step;
  return { start, end, step, live };
}

// How often a job's charts refresh: as the overview at the same step (2-30 s);
// a finished job's charts don't change.
export function chartRefreshMs(win) {
  return win.live ? Math.min(30000, Math.max(2000, win.step * 1000)) : null;
}

export const THROUGHPUT = ['tokens', 'samples', 'iterations'];

// Which throughput series to chart: those with at least one value, in the
// order tokens, samples, iterations. series: {tokens: [..], ...}.
export function throughputToShow(series) {
  return THROUGHPUT.filter((k) => (series?.[k] ?? []).some((v) => v != null && Number.isFinite(v)));
}

// Active jobs first, then the newest.
export function sortJobs(jobs) {
  return [...jobs].sort((a, b) => (isActive(b) - isActive(a)) || (num(b.start_time_ms) || 0) - (num(a.start_time_ms) || 0));
}

// A LogQL stream selector of equality matchers ({job="a", node="b"}) as
// {label: value}; null for anything else (regex matchers, line filters).
export function parseSelector(q) {
  const s = String(q ?? '').trim();
  if (!s.startsWith('{') || !s.endsWith('}')) return null;
  const out = {};
  const re = /\s*([A-Za-z_]\w*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(,|$)/y;
  const body = s.slice(1, -1);
  re.lastIndex = 0;
  while (re.lastIndex < body.length) {
    const m = re.exec(body);
    if (!m) return null;
    let v;
    try { v = JSON.parse(`"${m[2]}"`); } catch { return null; }
    out[m[1]] = v;
    if (m[3] === '') break;
  }
  return out;
}

// The Logs tab's URL for a job: its node, job and container filters (from
// its log_query, or its name and node), and the shortest range of the
// picker that reaches back to its start. ranges: [[key, seconds], ...].
export function logsLinkFor(job, nowMs, ranges) {
  const sel = parseSelector(job.log_query);
  const f = { node: '', job: '', container: '', levels: [], search: '', regex: false };
  if (sel && Object.keys(sel).every((k) => ['node', 'job', 'container'].includes(k)) && Object.keys(sel).length) {
    Object.assign(f, sel);
  } else {
    f.job = job.name ?? '';
    f.node = job.node ?? '';
  }
  const back = (nowMs - (num(job.start_time_ms) || nowMs)) / 1000;
  const range = ranges.find(([, s]) => s >= back) ?? ranges[ranges.length - 1];
  return logsHash(range[0], f);
}

export function jobsHash(range, id) {
  const p = new URLSearchParams();
  p.set('range', range);
  if (id) p.set('id', id);
  return `#jobs&${p.toString()}`;
}

export function jobIdFromHash(hash) {
  return new URLSearchParams(String(hash).replace(/^#/, '')).get('id') ?? '';
}

// A PromQL selector for a job's training series: its name and node.
export function trainingSelector(job) {
  const m = [`job=${quote(job.name ?? '')}`];
  if (job.node) m.push(`node=${quote(job.node)}`);
  return `{${m.join(', ')}}`;
}

// The event's one-line text: its message, else its exception, else its
// details as key=value.
export function eventText(ev) {
  const d = ev?.details ?? {};
  if (d.message != null && d.message !== '') return String(d.message);
  if (d.exception != null && d.exception !== '') return String(d.exception);
  return Object.entries(d).map(([k, v]) => `${k}=${v}`).join(' ');
}

// How alarming an event is: the colour of its marker.
export function eventTone(kind) {
  if (kind === 'completed') return 'blue';
  if (kind === 'loss_overflow' || kind === 'nan_loss') return 'amber';
  return 'red';
}

// Numbers of any magnitude in 4 significant digits: 2.345, 0.0003, 5.2e-7.
export function sig(v) {
  if (!Number.isFinite(v)) return '–';
  const a = Math.abs(v);
  if (a !== 0 && (a < 1e-3 || a >= 1e6)) return v.toExponential(2).replace('e+', 'e');
  return String(Number(v.toPrecision(4)));
}

function axisSig(v) {
  if (!Number.isFinite(v)) return '';
  const a = Math.abs(v);
  if (a !== 0 && a < 1e-2) return v.toExponential(0); // 34 px of axis: "3e-4"
  return fmt.compact(v);
}

// ---------------------------------------------------------------------------
// Small DOM helpers

function pad(n) { return String(n).padStart(2, '0'); }
function dateTime(ms) {
  if (!Number.isFinite(ms)) return '–';
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}
function shortTime(ms, withDate) {
  if (!Number.isFinite(ms)) return '–';
  const d = new Date(ms);
  const s = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  return withDate ? `${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${s}` : s;
}

// Text with `code` spans (from our own strings; the parts are text nodes).
function withCode(s) {
  return String(s).split('`').map((part, i) => (i % 2 ? h('code', null, part) : part));
}

function badge(state) {
  const b = stateBadge(state);
  return h('span', { class: `badge ${b.tone}`, 'data-state': b.text }, b.key ? t(b.key) : b.text);
}

function cssVar(name) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
}

// ---------------------------------------------------------------------------

export class JobsPage {
  // getRange(): {key, seconds} of the header's picker (carried in links);
  // ranges: the picker's [[key, seconds], ...] (for the logs link).
  constructor(getRange, ranges) {
    this.getRange = getRange;
    this.ranges = ranges;
    this.visible = false;
    this.jobs = null; // the latest list, or null before the first answer
    this.listError = null;
    this.id = '';
    this.listTimer = null;
    this.chartTimer = null;
    this.listCtrl = null;
    this.chartCtrl = null;
    this.chartGen = 0;
    this.winKey = '';
    this.events = []; // the shown job's events, for the chart markers
    this.i18n = [];
    this.syncing = false;
    this.build();
  }

  T(key, tag = 'span', cls = null) {
    return translated(this.i18n, t, key, tag, cls);
  }

  // -------------------------------------------------------------------------
  // Layout

  build() {
    this.note = h('div', { class: 'note', hidden: true, role: 'alert' });

    // The list.
    const cols = ['name', 'state', 'framework', 'ranks', 'started', 'duration', 'reason'];
    this.listBody = h('tbody');
    this.listEmpty = h('div', { class: 'jobs-empty', hidden: true, 'data-testid': 'jobs-empty' });
    this.listCount = h('span', { class: 'count' });
    this.listView = h('section', { class: 'card jobs-list' },
      h('div', { class: 'jobs-head' }, h('h3', null, this.T('jobs.title'), this.listCount),
        this.T('jobs.clickHint', 'span', 'hint')),
      this.listEmpty,
      h('div', { class: 'jobs-table-wrap' }, h('table', { class: 'jobs-table', 'data-testid': 'jobs-table' },
        h('thead', null, h('tr', null, cols.map((c) => this.T(`jobs.col.${c}`, 'th', c === 'ranks' ? 'num' : null)))),
        this.listBody)));

    // The detail.
    this.back = h('a', { class: 'back', href: '#jobs' }, this.T('jobs.back'));
    this.dName = h('h2', { class: 'job-name', 'data-testid': 'job-name' });
    this.dBadge = h('span');
    this.dKind = h('span', { class: 'job-kind' });
    this.logsLink = h('a', { class: 'btn primary', 'data-testid': 'job-logs', href: '#logs' }, this.T('jobs.viewLogs'));
    this.dReason = h('div', { class: 'job-reason', hidden: true, 'data-testid': 'job-reason' });
    this.dFacts = h('dl', { class: 'job-facts' });
    this.procBody = h('tbody');
    this.procMore = h('div', { class: 'src-more' });
    this.procCount = h('span', { class: 'count' });
    const procCols = ['pid', 'role', 'rank', 'localRank', 'cmdline'];
    this.procs = h('details', { class: 'src-details job-procs' },
      h('summary', null, this.T('jobs.processes'), ' ', this.procCount),
      h('div', { class: 'table-wrap' }, h('table', { class: 'src-table', 'data-testid': 'job-processes' },
        h('thead', null, h('tr', null, procCols.map((c) => this.T(`jobs.proc.${c}`, 'th', c === 'cmdline' || c === 'role' ? null : 'num')))),
        this.procBody)),
      this.procMore);
    const head = h('section', { class: 'card job-head' },
      h('div', { class: 'job-title' }, this.dName, this.dBadge, this.dKind,
        h('span', { class: 'spacer' }), this.logsLink),
      this.dReason, this.dFacts, this.procs);

    // Charts on one time axis, the events' timeline under them.
    this.chartsEl = h('div', { class: 'job-charts' });
    this.trainEl = h('div', { class: 'job-chart-group' });
    this.noMetrics = h('div', { class: 'jobs-empty', hidden: true, 'data-testid': 'job-no-metrics' });
    this.gpuTitle = h('h3', { class: 'job-gpu-title' });
    this.gpuNote = this.T('jobs.gpuNote', 'span', 'hint');
    this.gpuEl = h('div', { class: 'job-chart-group' });
    this.timeline = h('div', { class: 'job-timeline', 'data-testid': 'job-timeline', role: 'group' });
    this.axisNote = h('div', { class: 'job-axis' });
    this.chartsEl.append(
      h('div', { class: 'jobs-head' }, this.T('jobs.metrics', 'h3'), this.axisNote),
      this.noMetrics, this.trainEl,
      h('div', { class: 'job-gpu-head' }, this.gpuTitle, this.gpuNote), this.gpuEl,
      this.timelineRow = h('div', { class: 'job-timeline-row' }, this.timeline));
    const chartsCard = h('section', { class: 'card job-charts-card' }, this.chartsEl);

    this.evBody = h('tbody');
    this.evEmpty = this.T('jobs.noEvents', 'div', 'jobs-empty');
    this.evCount = h('span', { class: 'count' });
    const evCols = ['time', 'since', 'kind', 'message'];
    const eventsCard = h('section', { class: 'card job-events' },
      h('div', { class: 'jobs-head' }, h('h3', null, this.T('jobs.events'), this.evCount)),
      this.evEmpty,
      this.evTable = h('div', { class: 'jobs-table-wrap' }, h('table', { class: 'jobs-table events-table', 'data-testid': 'job-events' },
        h('thead', null, h('tr', null, evCols.map((c) => this.T(`jobs.ev.${c}`, 'th')))), this.evBody)));

    this.missing = h('div', { class: 'jobs-empty', hidden: true });
    this.detailView = h('div', { class: 'job-detail', hidden: true, 'data-testid': 'job-detail' },
      h('div', { class: 'job-nav' }, this.back), this.missing,
      this.detailBody = h('div', { class: 'job-detail-body' }, head, chartsCard, eventsCard));

    this.el = h('div', { class: 'jobs-page', hidden: true }, this.note, this.listView, this.detailView);
  }

  // Charts measure their parent, so they are made once the detail shows.
  ensureCharts() {
    if (this.charts) return;
    const mk = (parent, key, opts) => {
      const wrap = h('div', { class: 'job-chart', 'data-chart': key });
      parent.append(wrap);
      const c = new Chart(wrap, { height: 110, ...opts });
      c.wrap = wrap;
      this.hookChart(c);
      return c;
    };
    this.charts = {
      loss: mk(this.trainEl, 'loss', { title: 'jobs.chart.loss', fmtAxis: axisSig,
        series: [{ key: 'jobs.series.loss', color: '--c1', fmt: sig }] }),
      lr: mk(this.trainEl, 'lr', { title: 'jobs.chart.lr', fmtAxis: axisSig,
        series: [{ key: 'jobs.series.lr', color: '--c4', fmt: sig }] }),
      grad: mk(this.trainEl, 'grad', { title: 'jobs.chart.grad', fmtAxis: axisSig,
        series: [{ key: 'jobs.series.grad', color: '--c2', fmt: sig }] }),
      tokens: mk(this.trainEl, 'tokens', { title: 'jobs.chart.tokens',
        series: [{ key: 'jobs.series.tokens', color: '--c3', fill: true, fmt: (v) => `${fmt.compact(v)}/s` }] }),
      samples: mk(this.trainEl, 'samples', { title: 'jobs.chart.samples',
        series: [{ key: 'jobs.series.samples', color: '--c3', fill: true, fmt: (v) => `${sig(v)}/s` }] }),
      iterations: mk(this.trainEl, 'iterations', { title: 'jobs.chart.iterations',
        series: [{ key: 'jobs.series.iterations', color: '--c3', fill: true, fmt: (v) => `${sig(v)}/s` }] }),
    };
    this.gpuCharts = null; // made when the node's GPU list is known
  }

  makeGpuCharts(gpus) {
    const key = gpus.join(',');
    if (this.gpuCharts?.key === key) return this.gpuCharts;
    if (this.gpuCharts) for (const c of [this.gpuCharts.util, this.gpuCharts.mem]) this.dropChart(c);
    this.gpuEl.replaceChildren();
    const series = (fmtV) => gpus.map((g, i) => ({ key: `GPU ${g}`, color: GPU_PALETTE[i % GPU_PALETTE.length], fmt: fmtV }));
    const mk = (name, opts) => {
      const wrap = h('div', { class: 'job-chart', 'data-chart': name });
      this.gpuEl.append(wrap);
      const c = new Chart(wrap, { height: 110, ...opts });
      c.wrap = wrap;
      this.hookChart(c);
      return c;
    };
    this.gpuCharts = {
      key,
      util: mk('gpu-util', { title: 'jobs.chart.gpuUtil', yMax: 100, series: series(fmt.percent) }),
      mem: mk('gpu-mem', { title: 'jobs.chart.gpuMem', series: series((v) => `${v.toFixed(1)} GiB`) }),
    };
    return this.gpuCharts;
  }

  dropChart(c) {
    c.ro?.disconnect();
    c.u?.destroy();
    c.wrap?.remove();
  }

  allCharts() {
    const out = this.charts ? Object.values(this.charts) : [];
    if (this.gpuCharts) out.push(this.gpuCharts.util, this.gpuCharts.mem);
    return out;
  }

  // Every chart: the events as dashed lines, and one cursor for all (they
  // share the time axis and their plot widths).
  hookChart(c) {
    const u = c.u;
    (u.hooks.draw ??= []).push((uu) => this.drawEvents(uu));
    (u.hooks.setCursor ??= []).push((uu) => this.syncCursor(uu));
  }

  drawEvents(u) {
    if (!this.events.length) return;
    const ctx = u.ctx;
    const { left, top, width, height } = u.bbox;
    ctx.save();
    ctx.setLineDash([3, 3]);
    ctx.lineWidth = 1;
    for (const ev of this.events) {
      const x = Math.round(u.valToPos(num(ev.time_ms) / 1000, 'x', true)) + 0.5;
      if (x < left || x > left + width) continue;
      ctx.strokeStyle = cssVar(`--tone-${eventTone(ev.event)}`) || '#888';
      ctx.beginPath();
      ctx.moveTo(x, top);
      ctx.lineTo(x, top + height);
      ctx.stroke();
    }
    ctx.restore();
  }

  syncCursor(u) {
    if (this.syncing) return;
    this.syncing = true;
    try {
      const left = u.cursor.left ?? -10;
      for (const c of this.allCharts()) {
        if (c.u === u || !c.u) continue;
        c.u.setCursor({ left, top: left < 0 ? -10 : 10 });
      }
    } finally {
      this.syncing = false;
    }
  }

  // -------------------------------------------------------------------------
  // Visibility, URL, language

  show(hash) {
    this.visible = true;
    this.el.hidden = false;
    const id = jobIdFromHash(hash);
    if (id !== this.id) {
      this.id = id;
      this.winKey = '';
      this.chartCtrl?.abort();
      clearTimeout(this.chartTimer);
      this.chartGen++;
      this.clearCharts();
    }
    this.listView.hidden = !!id;
    this.detailView.hidden = !id;
    if (id) this.ensureCharts();
    this.render();
    this.refreshList();
  }

  hide() {
    this.visible = false;
    this.el.hidden = true;
    clearTimeout(this.listTimer);
    clearTimeout(this.chartTimer);
    this.listCtrl?.abort();
    this.chartCtrl?.abort();
    this.winKey = ''; // charts are fetched again when shown
  }

  onVisibility(hidden) {
    if (!this.visible) return;
    if (hidden) {
      clearTimeout(this.listTimer);
      clearTimeout(this.chartTimer);
    } else {
      this.winKey = '';
      this.refreshList();
    }
  }

  relabel() {
    retranslate(this.i18n, t);
    for (const c of this.allCharts()) c.relabel();
    this.render();
  }

  // -------------------------------------------------------------------------
  // Data

  async refreshList() {
    clearTimeout(this.listTimer);
    if (!this.visible) return;
    if (!document.hidden) {
      this.listCtrl?.abort();
      const ctrl = new AbortController();
      this.listCtrl = ctrl;
      try {
        const body = await api.getJson('/api/v1/jobs', null, ctrl.signal);
        this.jobs = Array.isArray(body?.data?.jobs) ? body.data.jobs : [];
        this.listError = null;
      } catch (e) {
        if (e.name === 'AbortError') return;
        this.listError = e;
      }
      if (this.listCtrl !== ctrl || !this.visible) return;
      this.render();
      this.maybeRefreshCharts();
    }
    if (this.visible) this.listTimer = setTimeout(() => this.refreshList(), LIST_REFRESH_MS);
  }

  job() { return this.jobs?.find((j) => String(j.id) === this.id) ?? null; }

  // Fetches the charts when the job's window moved (a new job, a finished
  // job's end) and on the live cadence while it runs.
  maybeRefreshCharts() {
    const job = this.job();
    if (!this.id || !job || !this.visible) return;
    const win = jobWindow(job, Date.now());
    // A running job's charts follow their own timer; a new window (another
    // job, a longer step, the job's end) fetches at once.
    const key = `${job.id}|${win.start}|${win.step}|${win.live ? 'live' : win.end}`;
    if (key === this.winKey) return;
    this.winKey = key;
    this.refreshCharts();
  }

  async refreshCharts() {
    clearTimeout(this.chartTimer);
    this.chartTimer = null;
    const job = this.job();
    if (!job || !this.visible || document.hidden) return;
    const gen = ++this.chartGen;
    this.chartCtrl?.abort();
    const ctrl = new AbortController();
    this.chartCtrl = ctrl;
    const win = jobWindow(job, Date.now());
    const sel = trainingSelector(job);
    const node = job.node ? `{node=${quote(job.node)}}` : '';
    const queries = {
      loss: `avg(training_loss${sel})`,
      lr: `avg(training_learning_rate${sel})`,
      grad: `avg(training_grad_norm${sel})`,
      tokens: `avg(training_tokens_per_second${sel})`,
      samples: `avg(training_samples_per_second${sel})`,
      iterations: `avg(training_iterations_per_second${sel})`,
      util: `DCGM_FI_DEV_GPU_UTIL${node}`,
      used: `DCGM_FI_DEV_FB_USED${node}`,
      free: `DCGM_FI_DEV_FB_FREE${node}`,
    };
    const keys = Object.keys(queries);
    const settled = await Promise.allSettled(keys.map((k) => api.queryRange(queries[k], win, ctrl.signal)));
    if (gen !== this.chartGen || ctrl.signal.aborted || !this.visible) return;
    const res = {};
    let err = null;
    keys.forEach((k, i) => {
      if (settled[i].status === 'fulfilled') res[k] = settled[i].value;
      else { res[k] = []; err ??= settled[i].reason; }
    });
    this.chartError = err;
    this.view = this.computeView(job, win, res);
    this.renderCharts();
    this.renderNote();
    const next = chartRefreshMs(win);
    if (next && this.visible) this.chartTimer = setTimeout(() => this.refreshCharts(), next);
  }

  computeView(job, win, res) {
    const xs = api.timeAxis(win);
    const align = (s) => api.alignValues(s, win, xs);
    const empty = () => new Array(xs.length).fill(null);
    const first = (k) => (res[k][0] ? align(res[k][0]) : empty());
    const training = {};
    for (const k of ['loss', 'lr', 'grad', ...THROUGHPUT]) training[k] = first(k);
    const byGpu = (k) => {
      const m = new Map();
      for (const s of res[k]) if (s.metric?.gpu != null) m.set(String(s.metric.gpu), align(s));
      return m;
    };
    const util = byGpu('util'), used = byGpu('used'), free = byGpu('free');
    const gpus = [...new Set([...util.keys(), ...used.keys()])]
      .sort((a, b) => Number(a) - Number(b) || a.localeCompare(b));
    const gib = (v) => (v == null ? null : v / 1024); // MiB to GiB
    let totalGiB = NaN;
    const mem = gpus.map((g) => {
      const u = used.get(g) ?? empty(), f = free.get(g) ?? empty();
      u.forEach((v, i) => {
        if (v != null && f[i] != null) totalGiB = Math.max(Number.isFinite(totalGiB) ? totalGiB : 0, (v + f[i]) / 1024);
      });
      return u.map(gib);
    });
    return { win, xs, training, gpus, util: gpus.map((g) => util.get(g) ?? empty()), mem, totalGiB };
  }

  clearCharts() {
    this.view = null;
    this.events = [];
    for (const c of this.allCharts()) c.set({ start: 0, end: 1, step: 1 }, [[], ...c.series.map(() => [])]);
  }

  // -------------------------------------------------------------------------
  // Rendering

  render() {
    this.renderNote();
    if (!this.id) this.renderList();
    else this.renderDetail();
  }

  renderNote() {
    const e = this.listError ?? (this.id ? this.chartError : null);
    let text = '';
    if (this.listError) text = e.status === 404 ? t('jobs.apiMissing') : t('jobs.loadFailed', { err: e.message });
    else if (e) text = t('queryFailed', { err: e.message });
    setText(this.note, text);
    this.note.hidden = !text;
  }

  renderList() {
    const now = Date.now();
    const jobs = this.jobs ? sortJobs(this.jobs) : [];
    const range = this.getRange().key;
    // Before the first answer: loading (or nothing, when the note says why).
    if (this.jobs === null) this.listEmpty.replaceChildren(t('jobs.loading'));
    else this.listEmpty.replaceChildren(...withCode(t('jobs.none')));
    this.listEmpty.hidden = this.jobs === null ? !!this.listError : jobs.length > 0;
    setText(this.listCount, jobs.length ? String(jobs.length) : '');
    const rows = jobs.map((j) => {
      const dur = jobDurationSec(j, now);
      return {
        id: String(j.id), href: jobsHash(range, String(j.id)), name: String(j.name ?? ''),
        kind: j.kind ? tLabel('jobs.kind', j.kind) : '', state: j.state,
        stateText: stateBadge(j.state).key ? t(stateBadge(j.state).key) : '',
        fw: [j.framework, j.launcher].filter(Boolean).join(' · ') || '–',
        ranks: Number.isFinite(num(j.world_size)) ? String(j.world_size) : '–',
        started: dateTime(num(j.start_time_ms)), dur: Number.isFinite(dur) ? duration(dur) : '–',
        // The server's text, else the kind of event that ended it.
        reason: String(j.reason_text || (j.reason && j.reason !== 'completed' ? tLabel('event', j.reason) : '')),
      };
    });
    // Rebuilt only when something shown changed (a row under the pointer
    // being replaced every 5 s can swallow a click).
    const key = JSON.stringify(rows);
    if (key === this.listKey) return;
    this.listKey = key;
    this.listBody.replaceChildren(...rows.map((r, i) => h('tr', { class: 'job-row', 'data-id': r.id, onclick: (e) => {
      if (e.target.closest?.('a')) return;
      location.hash = r.href;
    } },
    h('td', { class: 'job-cell-name' }, h('a', { href: r.href, class: 'job-link' }, r.name),
      r.kind ? h('div', { class: 'job-sub' }, r.kind) : null),
    h('td', null, badge(jobs[i].state)),
    h('td', null, r.fw),
    h('td', { class: 'num' }, r.ranks),
    h('td', { class: 'nowrap' }, r.started),
    h('td', { class: 'nowrap' }, r.dur),
    h('td', { class: 'job-cell-reason', title: r.reason || null }, r.reason))));
  }

  renderDetail() {
    const range = this.getRange().key;
    this.back.href = jobsHash(range, '');
    const job = this.job();
    this.detailBody.hidden = !job;
    this.missing.hidden = !!job;
    if (!job) {
      setText(this.missing, this.jobs === null ? t('jobs.loading') : t('jobs.notFound'));
      return;
    }
    const now = Date.now();
    setText(this.dName, job.name ?? '');
    this.dBadge.replaceChildren(badge(job.state));
    setText(this.dKind, [job.kind ? tLabel('jobs.kind', job.kind) : '', job.trainer].filter(Boolean).join(' · '));
    this.logsLink.href = logsLinkFor(job, now, this.ranges);

    // Why it ended (or what is wrong while it runs).
    const reason = job.reason ? tLabel('event', job.reason) : '';
    const why = [reason, job.reason_text].filter(Boolean);
    // "CUDA out of memory: CUDA out of memory. Tried ..." says it twice.
    if (why.length === 2 && why[1].toLowerCase().startsWith(why[0].toLowerCase())) why.shift();
    setText(this.dReason, why.join(': '));
    this.dReason.hidden = why.length === 0;
    this.dReason.className = `job-reason ${stateBadge(job.state).tone}`;

    const exit = [];
    if (job.exit_code != null) exit.push(t('jobs.exitCode', { code: job.exit_code }));
    if (job.exit_signal) exit.push(String(job.exit_signal));
    const dur = jobDurationSec(job, now);
    const facts = [
      ['jobs.f.framework', [job.framework, job.launcher].filter(Boolean).join(' · ') || '–'],
      ['jobs.f.node', job.node || '–'],
      ['jobs.f.container', job.container_id || '–'],
      ['jobs.f.ranks', Number.isFinite(num(job.world_size)) ? String(job.world_size) : '–'],
      ['jobs.f.started', dateTime(num(job.start_time_ms))],
      ['jobs.f.ended', Number.isFinite(num(job.end_time_ms)) ? dateTime(num(job.end_time_ms)) : (isActive(job) ? t('jobs.stillRunning') : '–')],
      ['jobs.f.duration', Number.isFinite(dur) ? duration(dur) : '–'],
      ['jobs.f.exit', exit.join(' · ') || '–'],
      ['jobs.f.lastStep', job.last_step != null
        ? (Number.isFinite(num(job.last_step_time_ms))
          ? t('jobs.stepAt', { step: job.last_step, t: shortTime(num(job.last_step_time_ms), true) }) : String(job.last_step))
        : '–'],
      ['jobs.f.lastSeen', dateTime(num(job.last_seen_ms))],
    ];
    this.dFacts.replaceChildren(...facts.flatMap(([k, v]) => [h('div', { class: 'fact' }, h('dt', null, t(k)), h('dd', null, v))]));

    const procs = Array.isArray(job.processes) ? job.processes : [];
    setText(this.procCount, `(${procs.length})`);
    const rank = (r) => (r == null || Number(r) < 0 ? '–' : String(r));
    const procKey = JSON.stringify([lang(), procs.slice(0, MAX_PROCESSES)]);
    if (procKey !== this.procKey) this.procBody.replaceChildren(...procs.slice(0, MAX_PROCESSES).map((p) => h('tr', null,
      h('td', { class: 'num' }, String(p.pid ?? '')),
      h('td', null, p.role ? tLabel('jobs.role', p.role) : '–'),
      h('td', { class: 'num' }, rank(p.rank)),
      h('td', { class: 'num' }, rank(p.local_rank)),
      h('td', { class: 'cmdline' }, String(p.cmdline ?? '')))));
    this.procKey = procKey;
    setText(this.procMore, procs.length > MAX_PROCESSES ? t('jobs.moreProcs', { n: procs.length - MAX_PROCESSES }) : '');

    setText(this.gpuTitle, job.node ? t('jobs.gpusOf', { node: job.node }) : t('jobs.gpusOfThis'));
    const win = jobWindow(job, now);
    setText(this.axisNote, t(win.live ? 'jobs.axisLive' : 'jobs.axisEnded', {
      from: dateTime(win.start * 1000), to: dateTime(win.end * 1000) }));

    this.events = (Array.isArray(job.events) ? job.events : [])
      .filter((e) => Number.isFinite(num(e?.time_ms)))
      .sort((a, b) => num(a.time_ms) - num(b.time_ms));
    this.renderEvents(job, win);
    if (this.view) this.renderCharts();
  }

  renderEvents(job, win) {
    const start = num(job.start_time_ms);
    const withDate = win.end - win.start > 86400;
    const title = (ev) => [`${dateTime(num(ev.time_ms))} · ${tLabel('event', ev.event)}`,
      ...Object.entries(ev.details ?? {}).map(([k, v]) => `${k}: ${v}`)].join('\n');
    this.timelineRow.hidden = this.events.length === 0;
    this.timeline.setAttribute('aria-label', t('jobs.timeline'));
    this.evTable.hidden = this.events.length === 0;
    this.evEmpty.hidden = this.events.length > 0;
    setText(this.evCount, this.events.length ? String(this.events.length) : '');

    // Markers on the strip under the charts, at the same x as the charts' lines.
    const span = win.end - win.start;
    this.timeline.replaceChildren(...this.events.map((ev, i) => {
      const pos = Math.max(0, Math.min(1, (num(ev.time_ms) / 1000 - win.start) / span));
      const m = h('button', { type: 'button', class: `ev-marker ${eventTone(ev.event)}`, 'data-i': i,
        title: `${title(ev)}\n${eventText(ev)}`, 'aria-label': `${tLabel('event', ev.event)} ${shortTime(num(ev.time_ms), true)}`,
        onclick: () => this.focusEvent(i) });
      m.style.left = `${(pos * 100).toFixed(3)}%`;
      return m;
    }));

    // The list is rebuilt only when it changes, so a selection in it (to
    // copy a message) survives the 5 s refreshes.
    const key = JSON.stringify([lang(), job.id, job.start_time_ms, withDate, this.events]);
    if (key === this.eventsKey) return;
    this.eventsKey = key;
    this.evBody.replaceChildren(...this.events.map((ev, i) => h('tr', { class: `ev-row ${eventTone(ev.event)}`, 'data-i': i, 'data-event': String(ev.event ?? ''), title: title(ev) },
      h('td', { class: 'nowrap' }, shortTime(num(ev.time_ms), withDate)),
      h('td', { class: 'nowrap' }, Number.isFinite(start) ? `+${duration(Math.max(0, (num(ev.time_ms) - start) / 1000))}` : ''),
      h('td', { class: 'nowrap ev-kind' }, tLabel('event', ev.event)),
      h('td', { class: 'ev-msg' }, eventText(ev)))));
  }

  focusEvent(i) {
    for (const r of this.evBody.children) setClass(r, 'focus', r.dataset.i === String(i));
    const row = this.evBody.querySelector(`tr[data-i="${i}"]`);
    row?.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
  }

  renderCharts() {
    const v = this.view;
    if (!v || !this.charts) return;
    const tr = v.training;
    const has = (a) => a.some((x) => x != null);
    const shown = new Set(['loss', 'lr', 'grad'].filter((k) => has(tr[k])));
    for (const k of throughputToShow(tr)) shown.add(k);
    this.noMetrics.hidden = shown.size > 0;
    this.noMetrics.replaceChildren(...withCode(t('jobs.noMetrics')));
    for (const [k, c] of Object.entries(this.charts)) {
      c.wrap.hidden = !shown.has(k);
      c.set(v.win, [v.xs, tr[k]]);
    }
    const g = this.makeGpuCharts(v.gpus);
    g.util.set(v.win, [v.xs, ...v.util]);
    g.mem.set(v.win, [v.xs, ...v.mem], Number.isFinite(v.totalGiB) ? v.totalGiB : null);
    this.gpuEl.dataset.gpus = String(v.gpus.length);
  }
}
