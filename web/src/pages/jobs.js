// The Jobs tab (#jobs&range=15m, one job: #jobs&range=15m&id=<job id>):
// every training or inference job the server tracks (/api/v1/jobs) in a
// table, and one job's detail: what it is and how it ended, its loss,
// learning rate, grad norm and throughput next to its node's GPU utilization
// and memory on one time axis (the job's start to its end, or now), its
// events as markers under the charts and as a list, and a link to its logs.
// A job's GPUs (from NVML's process list, when known) narrow the GPU charts
// to them; its other training series (eval_loss, accuracy, ..., found with
// /api/v1/series) get a chart each. Its efficiency (/api/v1/jobs/efficiency:
// the share of its GPU time busy, input-bound, communicating or idle, its
// GPU-hours, idle cost and SM/tensor activity) sits under its facts, shaped
// by jobs.efficiency.js. Under the list: the node's events
// (/api/v1/events: Xid errors, OOM kills) in the page's range. The data
// shaping is jobs.model.js'; this is the DOM.
//
// Job names, command lines, event messages, series names, node events'
// details and log queries are untrusted:
// they reach the page only as text nodes (dom.js h / setText), never as HTML.

import * as api from '../api.js';
import { Chart } from '../charts.js';
import { cssVar, h, retranslate, setBar, setClass, setPressed, setText, translated, withCode } from '../dom.js';
import { compact, dateTime, duration, percent, shortTime } from '../format.js';
import { lang, t, tLabel } from '../i18n.js';
import { registerPage } from '../registry.js';
import { DataTable, columns } from '../table.js';
import {
  axisSig, buildJobView, chartQueries, chartRefreshMs, chartWindowKey, endReason, eventPosition, eventText,
  eventTone, eventsWindow, extraQuery, extraTitle, extraTrainingNames, frameworkText, gpuSummary, hasValues,
  isActive, jobDurationSec, jobEvents, jobGpus, jobIdFromHash, jobWindow, jobsHash, logsLinkFor, nodeEventTexts,
  nodeEventsFrom, num, ranksText, severalNodes, sig, sortJobs, stateBadge, trainingChartsToShow,
  trainingSeriesSelector,
} from './jobs.model.js';
import { efficiencyOf, efficiencyParams, efficiencyView, factText, measuredNote } from './jobs.efficiency.js';
import strings from './jobs.i18n.js';

const LIST_REFRESH_MS = 5000;
const MAX_PROCESSES = 64;
const GPU_PALETTE = ['--c1', '--c2', '--c3', '--c4', '--c5', '--c6', '--c7', '--c8'];

// Whose job: the name its node gives its owner, with the uid when that says
// more ("alice (1000)"); a uid with no name is its digits alone; '–' unknown
// (an older agent's job, or its process unreadable).
function ownerText(j) {
  const user = String(j.user ?? '');
  if (!user) return '–';
  const uid = Number.isInteger(j.uid) && j.uid >= 0 ? String(j.uid) : '';
  return uid && uid !== user ? `${user} (${uid})` : user;
}

function badge(state) {
  const b = stateBadge(state);
  return h('span', { class: `badge ${b.tone}`, 'data-state': b.text }, b.key ? t(b.key) : b.text);
}

// ---------------------------------------------------------------------------

class JobsPage {
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
    const T = this.T.bind(this);
    this.note = h('div', { class: 'note', hidden: true, role: 'alert' });

    // The list.
    this.listTable = new DataTable({ T, testid: 'jobs-table',
      columns: columns('jobs.col.', ['name', 'state', 'user', 'framework', 'ranks', 'started', 'duration', 'reason'], ['ranks']) });
    this.listEmpty = h('div', { class: 'jobs-empty', hidden: true, 'data-testid': 'jobs-empty' });
    this.listCount = h('span', { class: 'count' });
    this.listView = h('section', { class: 'card jobs-list' },
      h('div', { class: 'jobs-head' }, h('h3', null, T('jobs.title'), this.listCount),
        T('jobs.clickHint', 'span', 'hint')),
      this.listEmpty,
      this.listTable.el);

    // The node's events (GPU Xid errors, OOM kills) in the page's range.
    this.nevRange = h('span', { class: 'count' });
    this.nevCount = h('span', { class: 'count' });
    this.nevButtons = this.ranges.map(([key]) => h('button', { type: 'button', class: 'seg', 'data-range': key,
      onclick: () => { location.hash = jobsHash(key, ''); } }));
    this.nevEmpty = h('div', { class: 'jobs-empty', hidden: true, 'data-testid': 'node-events-empty' });
    this.nevTable = new DataTable({ T, tableClass: 'jobs-table events-table',
      testid: 'node-events-table', hidden: true, columns: columns('jobs.nev.', ['time', 'gpu', 'kind', 'details']) });
    this.nevView = h('section', { class: 'card jobs-list node-events', hidden: true, 'data-testid': 'node-events' },
      h('div', { class: 'jobs-head' }, h('h3', null, T('jobs.nodeEvents'), this.nevRange, this.nevCount),
        T('jobs.nodeEventsHint', 'span', 'hint'),
        h('span', { class: 'segmented nev-range', role: 'group' }, this.nevButtons)),
      this.nevEmpty,
      this.nevTable.el);

    // The detail.
    this.back = h('a', { class: 'back', href: '#jobs' }, T('jobs.back'));
    this.dName = h('h2', { class: 'job-name', 'data-testid': 'job-name' });
    this.dBadge = h('span');
    this.dKind = h('span', { class: 'job-kind' });
    this.logsLink = h('a', { class: 'btn primary', 'data-testid': 'job-logs', href: '#logs' }, T('jobs.viewLogs'));
    this.dReason = h('div', { class: 'job-reason', hidden: true, 'data-testid': 'job-reason' });
    this.dFacts = h('dl', { class: 'job-facts' });
    this.procTable = new DataTable({ T, wrapClass: 'table-wrap', tableClass: 'src-table',
      testid: 'job-processes', columns: columns('jobs.proc.', ['pid', 'role', 'rank', 'localRank', 'cmdline'], ['pid', 'rank', 'localRank']) });
    this.procMore = h('div', { class: 'src-more' });
    this.procCount = h('span', { class: 'count' });
    this.procs = h('details', { class: 'src-details job-procs' },
      h('summary', null, T('jobs.processes'), ' ', this.procCount),
      this.procTable.el,
      this.procMore);
    const head = h('section', { class: 'card job-head' },
      h('div', { class: 'job-title' }, this.dName, this.dBadge, this.dKind,
        h('span', { class: 'spacer' }), this.logsLink),
      this.dReason, this.dFacts, this.procs);

    // How the job used its GPU time (filled by renderEfficiency).
    this.effPartial = h('span', { class: 'count' });
    this.effEmpty = h('div', { class: 'jobs-empty', hidden: true, 'data-testid': 'job-eff-empty' });
    this.effBar = h('div', { class: 'eff-bar', 'data-testid': 'job-eff-bar' });
    this.effLegend = h('ul', { class: 'eff-legend', 'data-testid': 'job-eff-legend' });
    this.effFacts = h('dl', { class: 'eff-facts', 'data-testid': 'job-eff-facts' });
    this.effNote = h('div', { class: 'eff-note', hidden: true });
    this.effCard = h('section', { class: 'card job-efficiency', hidden: true, 'data-testid': 'job-efficiency' },
      h('div', { class: 'jobs-head' }, h('h3', null, T('jobs.eff.title'), this.effPartial),
        T('jobs.eff.hint', 'span', 'hint')),
      this.effEmpty, this.effBar, this.effLegend, this.effFacts, this.effNote);

    // Charts on one time axis, the events' timeline under them.
    this.chartsEl = h('div', { class: 'job-charts' });
    this.trainEl = h('div', { class: 'job-chart-group' });
    this.noMetrics = h('div', { class: 'jobs-empty', hidden: true, 'data-testid': 'job-no-metrics' });
    this.gpuTitle = h('h3', { class: 'job-gpu-title' });
    this.gpuNote = T('jobs.gpuNote', 'span', 'hint');
    this.gpuEl = h('div', { class: 'job-chart-group' });
    this.timeline = h('div', { class: 'job-timeline', 'data-testid': 'job-timeline', role: 'group' });
    this.axisNote = h('div', { class: 'job-axis' });
    this.extraEl = h('div', { class: 'job-chart-group', 'data-testid': 'job-extra-charts' });
    this.extraMore = h('div', { class: 'hint job-extra-more', hidden: true, 'data-testid': 'job-extra-more' });
    this.chartsEl.append(
      h('div', { class: 'jobs-head' }, T('jobs.metrics', 'h3'), this.axisNote),
      this.noMetrics, this.trainEl, this.extraEl, this.extraMore,
      h('div', { class: 'job-gpu-head' }, this.gpuTitle, this.gpuNote), this.gpuEl,
      this.timelineRow = h('div', { class: 'job-timeline-row' }, this.timeline));
    const chartsCard = h('section', { class: 'card job-charts-card' }, this.chartsEl);

    this.evTable = new DataTable({ T, tableClass: 'jobs-table events-table', testid: 'job-events',
      columns: columns('jobs.ev.', ['time', 'since', 'kind', 'message']) });
    this.evEmpty = T('jobs.noEvents', 'div', 'jobs-empty');
    this.evCount = h('span', { class: 'count' });
    const eventsCard = h('section', { class: 'card job-events' },
      h('div', { class: 'jobs-head' }, h('h3', null, T('jobs.events'), this.evCount)),
      this.evEmpty,
      this.evTable.el);

    this.missing = h('div', { class: 'jobs-empty', hidden: true });
    this.detailView = h('div', { class: 'job-detail', hidden: true, 'data-testid': 'job-detail' },
      h('div', { class: 'job-nav' }, this.back), this.missing,
      this.detailBody = h('div', { class: 'job-detail-body' }, head, this.effCard, chartsCard, eventsCard));

    this.el = h('div', { class: 'jobs-page', hidden: true }, this.note, this.listView, this.nevView, this.detailView);
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
        series: [{ key: 'jobs.series.tokens', color: '--c3', fill: true, fmt: (v) => `${compact(v)}/s` }] }),
      samples: mk(this.trainEl, 'samples', { title: 'jobs.chart.samples',
        series: [{ key: 'jobs.series.samples', color: '--c3', fill: true, fmt: (v) => `${sig(v)}/s` }] }),
      iterations: mk(this.trainEl, 'iterations', { title: 'jobs.chart.iterations',
        series: [{ key: 'jobs.series.iterations', color: '--c3', fill: true, fmt: (v) => `${sig(v)}/s` }] }),
    };
    this.gpuCharts = null; // made when the node's GPU list is known
    this.extraCharts = null; // made when the job's other training series are known
  }

  // One chart per other training series, titled by its name (text only:
  // it is the server's, and no i18n key).
  makeExtraCharts(names) {
    const key = JSON.stringify(names);
    if (this.extraCharts?.key === key) return this.extraCharts;
    for (const c of this.extraCharts?.charts ?? []) this.dropChart(c);
    this.extraEl.replaceChildren();
    const charts = names.map((name, i) => {
      const title = extraTitle(name);
      const wrap = h('div', { class: 'job-chart', 'data-chart': 'extra', 'data-name': name });
      this.extraEl.append(wrap);
      const c = new Chart(wrap, { height: 110, title: 'jobs.chart.extra', fmtAxis: axisSig,
        series: [{ key: 'jobs.series.value', color: GPU_PALETTE[(i + 4) % GPU_PALETTE.length], fmt: sig }] });
      c.relabel = () => {
        Chart.prototype.relabel.call(c);
        setText(c.titleEl, title);
        setText(c.legendNames[0], title);
      };
      c.relabel();
      c.wrap = wrap;
      this.hookChart(c);
      return c;
    });
    this.extraCharts = { key, charts };
    return this.extraCharts;
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
      util: mk('gpu-util', { title: 'jobs.chart.gpuUtil', yMax: 100, series: series(percent) }),
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
    if (this.extraCharts) out.push(...this.extraCharts.charts);
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
  // Page hooks (registry.js): visibility, URL, language

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
      this.effCtrl?.abort();
      this.eff = undefined; // not asked yet
      this.effError = null;
    }
    this.listView.hidden = !!id;
    this.nevView.hidden = !!id || !this.nevShown;
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
    this.nevCtrl?.abort();
    this.effCtrl?.abort();
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

  // The header's picker is hidden here; the range is kept in the URL.
  onRange(key) {
    history.replaceState(null, '', jobsHash(key, jobIdFromHash(location.hash)));
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
      if (!this.id) this.refreshNodeEvents();
    }
    if (this.visible) this.listTimer = setTimeout(() => this.refreshList(), LIST_REFRESH_MS);
  }

  job() { return this.jobs?.find((j) => String(j.id) === this.id) ?? null; }

  // The node's events in the page's range (GET /api/v1/events), with the
  // list. A server without the endpoint (404) hides the panel for good.
  async refreshNodeEvents() {
    if (this.nodeEventsApi === false || !this.visible) return;
    this.nevCtrl?.abort();
    const ctrl = new AbortController();
    this.nevCtrl = ctrl;
    const range = this.getRange();
    const w = eventsWindow(range.seconds, Date.now());
    try {
      const body = await api.getJson('/api/v1/events', { start_ms: w.start_ms, end_ms: w.end_ms }, ctrl.signal);
      this.nodeEvents = nodeEventsFrom(body?.data);
      this.nevError = null;
      this.nodeEventsApi = true;
    } catch (e) {
      if (e.name === 'AbortError') return;
      if (e.status === 404) this.nodeEventsApi = false;
      this.nevError = e;
    }
    if (this.nevCtrl !== ctrl || !this.visible) return;
    this.nevRangeKey = range.key;
    this.renderNodeEvents();
  }

  // Fetches the charts when the job's window moved (a new job, a finished
  // job's end) and on the live cadence while it runs.
  maybeRefreshCharts() {
    const job = this.job();
    if (!this.id || !job || !this.visible) return;
    const win = jobWindow(job, Date.now());
    // A running job's charts follow their own timer; a new window (another
    // job, a longer step, the job's end) fetches at once.
    const key = chartWindowKey(job, win);
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
    this.refreshEfficiency(job);
    const win = jobWindow(job, Date.now());
    const queries = chartQueries(job);
    const keys = Object.keys(queries);
    // The job's other training series are looked up next to them, then
    // fetched (a lookup that fails leaves them out, quietly).
    const lookup = api.getJson('/api/v1/series', { 'match[]': trainingSeriesSelector(job), start: win.start, end: win.end },
      ctrl.signal).then((b) => extraTrainingNames(b?.data), () => ({ names: [], more: 0 }));
    const settled = await Promise.allSettled(keys.map((k) => api.queryRange(queries[k], win, ctrl.signal)));
    const extra = await lookup;
    const extraSettled = await Promise.allSettled(extra.names.map((n) => api.queryRange(extraQuery(job, n), win, ctrl.signal)));
    if (gen !== this.chartGen || ctrl.signal.aborted || !this.visible) return;
    const res = {};
    let err = null;
    keys.forEach((k, i) => {
      if (settled[i].status === 'fulfilled') res[k] = settled[i].value;
      else { res[k] = []; err ??= settled[i].reason; }
    });
    res.extra = extra.names.map((n, i) => {
      if (extraSettled[i].status === 'fulfilled') return extraSettled[i].value;
      err ??= extraSettled[i].reason;
      return [];
    });
    this.chartError = err;
    this.view = buildJobView(job, win, res, extra);
    this.renderCharts();
    this.renderNote();
    const next = chartRefreshMs(win);
    if (next && this.visible) this.chartTimer = setTimeout(() => this.refreshCharts(), next);
  }

  // The job's efficiency report, on the charts' cadence (it changes as they
  // do). A server without the endpoint (404) shows no section.
  async refreshEfficiency(job) {
    this.effCtrl?.abort();
    const ctrl = new AbortController();
    this.effCtrl = ctrl;
    const id = this.id;
    try {
      const body = await api.getJson('/api/v1/jobs/efficiency', efficiencyParams(job), ctrl.signal);
      this.eff = efficiencyOf(body);
      this.effError = null;
    } catch (e) {
      if (e.name === 'AbortError') return;
      this.eff = e.status === 404 ? null : this.eff;
      this.effError = e.status === 404 ? null : e;
    }
    if (this.effCtrl !== ctrl || this.id !== id || !this.visible) return;
    this.renderEfficiency();
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
    if (!this.id) { this.renderList(); this.renderNodeEvents(); } else this.renderDetail();
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
    if (this.jobs === null) this.listEmpty.replaceChildren(t('loading'));
    else this.listEmpty.replaceChildren(...withCode(t('jobs.none')));
    this.listEmpty.hidden = this.jobs === null ? !!this.listError : jobs.length > 0;
    setText(this.listCount, jobs.length ? String(jobs.length) : '');
    // A server with agents lists several nodes' jobs: then each says whose.
    const whose = severalNodes(jobs);
    const rows = jobs.map((j) => {
      const dur = jobDurationSec(j, now);
      const kind = j.kind ? tLabel('jobs.kind', j.kind) : '';
      return {
        id: String(j.id), href: jobsHash(range, String(j.id)), name: String(j.name ?? ''),
        kind: [kind, whose ? String(j.node ?? '') : ''].filter(Boolean).join(' · '), state: j.state,
        stateText: stateBadge(j.state).key ? t(stateBadge(j.state).key) : '',
        user: String(j.user || '–'),
        fw: frameworkText(j),
        ranks: ranksText(j),
        started: dateTime(num(j.start_time_ms)), dur: Number.isFinite(dur) ? duration(dur) : '–',
        // The server's text, else the kind of event that ended it.
        reason: String(j.reason_text || (j.reason && j.reason !== 'completed' ? tLabel('event', j.reason) : '')),
      };
    });
    // Rebuilt only when something shown changed (a row under the pointer
    // being replaced every 5 s can swallow a click).
    this.listTable.update(JSON.stringify(rows), () => rows.map((r, i) => h('tr', { class: 'job-row', 'data-id': r.id, onclick: (e) => {
      if (e.target.closest?.('a')) return;
      location.hash = r.href;
    } },
    h('td', { class: 'job-cell-name' }, h('a', { href: r.href, class: 'job-link' }, r.name),
      r.kind ? h('div', { class: 'job-sub' }, r.kind) : null),
    h('td', null, badge(jobs[i].state)),
    h('td', { class: 'nowrap', 'data-testid': 'job-user' }, r.user),
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
      setText(this.missing, this.jobs === null ? t('loading') : t('jobs.notFound'));
      return;
    }
    const now = Date.now();
    setText(this.dName, job.name ?? '');
    this.dBadge.replaceChildren(badge(job.state));
    setText(this.dKind, [job.kind ? tLabel('jobs.kind', job.kind) : '', job.trainer].filter(Boolean).join(' · '));
    this.logsLink.href = logsLinkFor(job, now, this.ranges);

    // Why it ended (or what is wrong while it runs).
    const why = endReason(job.reason ? tLabel('event', job.reason) : '', job.reason_text);
    setText(this.dReason, why.join(': '));
    this.dReason.hidden = why.length === 0;
    this.dReason.className = `job-reason ${stateBadge(job.state).tone}`;

    const exit = [];
    if (job.exit_code != null) exit.push(t('jobs.exitCode', { code: job.exit_code }));
    if (job.exit_signal) exit.push(String(job.exit_signal));
    const dur = jobDurationSec(job, now);
    const facts = [
      ['jobs.f.framework', frameworkText(job)],
      ['jobs.f.user', ownerText(job)],
      ['jobs.f.node', job.node || '–'],
      ['jobs.f.container', job.container_id || '–'],
      ['jobs.f.ranks', ranksText(job)],
      ['jobs.f.gpus', gpuSummary(job) || t('jobs.gpusUnknown')],
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
    const shownProcs = procs.slice(0, MAX_PROCESSES);
    this.procTable.update(JSON.stringify([lang(), shownProcs]), () => shownProcs.map((p) => h('tr', null,
      h('td', { class: 'num' }, String(p.pid ?? '')),
      h('td', null, p.role ? tLabel('jobs.role', p.role) : '–'),
      h('td', { class: 'num' }, rank(p.rank)),
      h('td', { class: 'num' }, rank(p.local_rank)),
      h('td', { class: 'cmdline' }, String(p.cmdline ?? '')))));
    setText(this.procMore, procs.length > MAX_PROCESSES ? t('jobs.moreProcs', { n: procs.length - MAX_PROCESSES }) : '');

    const own = jobGpus(job).gpus.length > 0;
    setText(this.gpuTitle, own
      ? (job.node ? t('jobs.gpusOfJob', { node: job.node }) : t('jobs.gpusOfJobThis'))
      : (job.node ? t('jobs.gpusOf', { node: job.node }) : t('jobs.gpusOfThis')));
    this.gpuNote.hidden = own;
    const win = jobWindow(job, now);
    setText(this.axisNote, t(win.live ? 'jobs.axisLive' : 'jobs.axisEnded', {
      from: dateTime(win.start * 1000), to: dateTime(win.end * 1000) }));

    this.renderEfficiency();
    this.events = jobEvents(job);
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
    this.evTable.el.hidden = this.events.length === 0;
    this.evEmpty.hidden = this.events.length > 0;
    setText(this.evCount, this.events.length ? String(this.events.length) : '');

    // Markers on the strip under the charts, at the same x as the charts' lines.
    this.timeline.replaceChildren(...this.events.map((ev, i) => {
      const pos = eventPosition(ev, win);
      const m = h('button', { type: 'button', class: `ev-marker ${eventTone(ev.event)}`, 'data-i': i,
        title: `${title(ev)}\n${eventText(ev)}`, 'aria-label': `${tLabel('event', ev.event)} ${shortTime(num(ev.time_ms), true)}`,
        onclick: () => this.focusEvent(i) });
      m.style.left = `${(pos * 100).toFixed(3)}%`;
      return m;
    }));

    // The list is rebuilt only when it changes, so a selection in it (to
    // copy a message) survives the 5 s refreshes.
    const key = JSON.stringify([lang(), job.id, job.start_time_ms, withDate, this.events]);
    this.evTable.update(key, () => this.events.map((ev, i) => h('tr', { class: `ev-row ${eventTone(ev.event)}`, 'data-i': i, 'data-event': String(ev.event ?? ''), title: title(ev) },
      h('td', { class: 'nowrap' }, shortTime(num(ev.time_ms), withDate)),
      h('td', { class: 'nowrap' }, Number.isFinite(start) ? `+${duration(Math.max(0, (num(ev.time_ms) - start) / 1000))}` : ''),
      h('td', { class: 'nowrap ev-kind' }, tLabel('event', ev.event)),
      h('td', { class: 'ev-msg' }, eventText(ev)))));
  }

  // The bar (one segment per class with a share), its legend with each
  // class's share and GPU-hours, and the facts; a note when the report rests
  // on part of the job's GPU time. Hidden until the first answer, and for a
  // server without the report.
  renderEfficiency() {
    const e = this.eff;
    this.effCard.hidden = e === undefined ? !this.effError : (e === null && !this.effError);
    if (this.effCard.hidden) return;
    const view = efficiencyView(e);
    setText(this.effEmpty, this.effError ? t('jobs.eff.failed', { err: this.effError.message }) : t('jobs.eff.none'));
    this.effEmpty.hidden = !!view && !this.effError;
    for (const el of [this.effBar, this.effLegend, this.effFacts]) el.hidden = !view;
    setText(this.effPartial, view?.partial ? t('jobs.eff.partial') : '');
    const note = measuredNote(view);
    setText(this.effNote, note ? t('jobs.eff.measured', { pct: note }) : '');
    this.effNote.hidden = !note;
    if (!view) return;
    const label = (s) => t('jobs.eff.segment', { label: t(s.label), pct: s.pct, hours: s.hours });
    this.effBar.replaceChildren(...view.segments.filter((s) => s.share > 0).map((s) => {
      const seg = h('span', { class: `eff-seg ${s.tone}`, 'data-class': s.field, title: label(s) });
      setBar(seg, s.share);
      return seg;
    }));
    this.effBar.setAttribute('aria-label', view.segments.map(label).join(', '));
    this.effLegend.replaceChildren(...view.segments.map((s) => h('li', { class: `eff-item ${s.tone}`, 'data-class': s.field },
      h('span', { class: 'eff-swatch' }), h('span', { class: 'eff-label' }, t(s.label)),
      h('span', { class: 'eff-pct' }, s.pct), h('span', { class: 'eff-hours' }, t('jobs.eff.hoursValue', { hours: s.hours })))));
    this.effFacts.replaceChildren(...view.facts.map(([k, v]) => h('div', { class: 'fact' },
      h('dt', null, t(k)), h('dd', null, factText(v, t)))));
  }

  focusEvent(i) {
    for (const r of this.evTable.body.children) setClass(r, 'focus', r.dataset.i === String(i));
    const row = this.evTable.body.querySelector(`tr[data-i="${i}"]`);
    row?.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
  }

  renderCharts() {
    const v = this.view;
    if (!v || !this.charts) return;
    const tr = v.training;
    const shown = trainingChartsToShow(tr);
    this.noMetrics.replaceChildren(...withCode(t('jobs.noMetrics')));
    const extras = v.extras.filter((e) => hasValues(e.ys));
    this.noMetrics.hidden = shown.size > 0 || extras.length > 0;
    for (const [k, c] of Object.entries(this.charts)) {
      c.wrap.hidden = !shown.has(k);
      c.set(v.win, [v.xs, tr[k]]);
    }
    const ex = this.makeExtraCharts(v.extras.map((e) => e.name));
    v.extras.forEach((e, i) => {
      ex.charts[i].wrap.hidden = !hasValues(e.ys);
      ex.charts[i].set(v.win, [v.xs, e.ys]);
    });
    setText(this.extraMore, v.more ? t('jobs.moreSeries', { n: v.more }) : '');
    this.extraMore.hidden = !v.more;
    const g = this.makeGpuCharts(v.gpus);
    g.util.set(v.win, [v.xs, ...v.util]);
    g.mem.set(v.win, [v.xs, ...v.mem], Number.isFinite(v.totalGiB) ? v.totalGiB : null);
    this.gpuEl.dataset.gpus = String(v.gpus.length);
  }

  renderNodeEvents() {
    const shown = this.nodeEventsApi !== false && !this.id && (this.nodeEvents != null || this.nevError != null);
    this.nevShown = shown;
    this.nevView.hidden = !shown;
    if (!shown) return;
    const range = this.getRange();
    // The range of the events shown (until those of a newly picked one come).
    setText(this.nevRange, t('jobs.nodeEventsRange', { range: t(`range.${this.nevRangeKey ?? range.key}`) }));
    for (const b of this.nevButtons) {
      setPressed(b, b.dataset.range === range.key);
      setText(b, t(`range.${b.dataset.range}`));
    }
    const evs = this.nodeEvents ?? [];
    setText(this.nevCount, evs.length ? String(evs.length) : '');
    const err = this.nevError;
    this.nevEmpty.hidden = evs.length > 0 && !err;
    setText(this.nevEmpty, err ? t('jobs.nodeEventsFailed', { err: err.message }) : t('jobs.noNodeEvents'));
    this.nevTable.el.hidden = evs.length === 0;
    const language = lang();
    const withDate = range.seconds > 86400;
    const jobs = new Map((this.jobs ?? []).map((j) => [String(j.id), j]));
    // Newest first; rebuilt only when something shown changed.
    const rows = [...evs].reverse();
    const key = JSON.stringify([language, range.key, rows, rows.map((e) => jobs.get(String(e.job_id ?? ''))?.name ?? null)]);
    this.nevTable.update(key, () => rows.map((ev) => {
      const d = ev.details && typeof ev.details === 'object' ? ev.details : {};
      const { meaning, action } = nodeEventTexts(ev, language);
      const kind = tLabel('event', ev.event) + (d.xid != null && d.xid !== '' ? ` ${d.xid}` : '');
      const job = ev.job_id ? jobs.get(String(ev.job_id)) : null;
      const title = [dateTime(num(ev.time_ms)), ev.node, ev.source,
        ...Object.entries(d).map(([k, v]) => `${k}: ${typeof v === 'object' ? JSON.stringify(v) : v}`)].filter(Boolean).join('\n');
      return h('tr', { class: `ev-row ${eventTone(ev.event)} nev-row`, 'data-event': String(ev.event ?? ''), title },
        h('td', { class: 'nowrap' }, shortTime(num(ev.time_ms), withDate)),
        h('td', { class: 'nowrap' }, ev.gpu != null && ev.gpu !== '' ? `GPU ${ev.gpu}` : '–'),
        h('td', { class: 'nowrap ev-kind' }, kind),
        h('td', { class: 'ev-msg' },
          meaning || action ? null : eventText(ev),
          meaning ? h('div', { class: 'nev-meaning' }, meaning) : null,
          action ? h('div', { class: 'nev-action' }, h('span', { class: 'nev-label' }, t('jobs.nev.action')), action) : null,
          job ? h('div', { class: 'nev-job' }, h('span', { class: 'nev-label' }, t('jobs.nev.job')),
            h('a', { class: 'job-link', href: jobsHash(range.key, String(job.id)) }, String(job.name ?? ''))) : null));
    }));
  }
}

registerPage({
  id: 'jobs',
  hash: 'jobs',
  label: 'nav.jobs',
  strings,
  rangePicker: false, // a job's charts span its life, not the picked range
  create: (shell) => new JobsPage(shell.range, shell.ranges),
});
