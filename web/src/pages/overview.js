// The overview page (#range=1h, the default): every GPU as a card (its
// utilization, memory, temperature, power and PCIe, with charts) under a
// summary, and the system (CPU, memory, disk, network) below, live
// (#range=1h&gpu=3 brings GPU 3's card into view, outlined). Its data
// (the Prometheus-compatible /api/v1/query_range and /api/v1/query) is
// fetched with the shell's status refresh; overview.model.js shapes it.
//
// Model names come from the machine: they reach the page as text only.

import * as api from '../api.js';
import { Chart } from '../charts.js';
import { h, retranslate, setBar, setClass, setText, translated } from '../dom.js';
import * as fmt from '../format.js';
import { t } from '../i18n.js';
import { registerPage } from '../registry.js';
import {
  CPU_MODES, INSTANT_QUERIES, computeView, gpuFlag, gpuFromHash, rangeQueries, refreshMs, settledResults, summarize,
} from './overview.model.js';
import strings from './overview.i18n.js';

const PALETTE = ['--c1', '--c2', '--c3', '--c4', '--c5', '--c6', '--c7'];

class OverviewPage {
  // shell: the shell's status (the GPU list, and whether the server answers).
  constructor(shell) {
    this.shell = shell;
    this.i18n = [];
    this.cards = new Map(); // gpu index (string) -> card
    this.view = null; // the latest view, rendered again on a language switch
    this.queryError = null;
    this.sys = null; // the system panels, made when first shown
    this.focus = ''; // the GPU of the URL (#range=1h&gpu=3), outlined
    this.scrollTo = ''; // ... and brought into view once its card exists
    this.build();
  }

  T(key, tag = 'span', cls = null) {
    return translated(this.i18n, t, key, tag, cls);
  }

  // -------------------------------------------------------------------------
  // Layout

  build() {
    this.queryNote = h('div', { class: 'note', hidden: true });
    this.summary = h('section', { class: 'summary' });
    this.kpi = {
      util: this.kpiBox('sum.util'), mem: this.kpiBox('sum.mem'), hot: this.kpiBox('sum.hot'),
      power: this.kpiBox('sum.power'), idle: this.kpiBox('sum.idle'),
    };
    for (const k of Object.values(this.kpi)) this.summary.append(k.el);

    this.gpuGrid = h('div', { class: 'gpu-grid' });
    this.noGpus = this.T('noGpus', 'p', 'empty');
    this.gpuCount = h('span', { class: 'count' });
    const gpuSection = h('section', { class: 'gpus' },
      h('h2', null, this.T('gpus'), this.gpuCount), this.noGpus, this.gpuGrid);

    this.sysGrid = h('div', { class: 'sys-grid' });
    const sysSection = h('section', { class: 'system' }, h('h2', null, this.T('system')), this.sysGrid);
    this.el = h('div', { class: 'overview', hidden: true }, this.queryNote, this.summary, gpuSection, sysSection);
  }

  kpiBox(key) {
    const value = h('div', { class: 'kpi-value' }, '–');
    const sub = h('div', { class: 'kpi-sub' });
    const bar = h('span');
    const el = h('div', { class: 'kpi' }, this.T(key, 'div', 'kpi-label'), value,
      h('div', { class: 'bar' }, bar), sub);
    return { el, value, sub, bar };
  }

  stat(labelKey) {
    const value = h('span', { class: 'stat-value' }, '–');
    const sub = h('span', { class: 'stat-sub' });
    const bar = h('span');
    const el = h('div', { class: 'stat' }, this.T(labelKey, 'span', 'stat-label'), value,
      h('div', { class: 'bar' }, bar), sub);
    return { el, value, sub, bar };
  }

  ensureCard(gpu) {
    let card = this.cards.get(gpu);
    if (card) return card;
    const title = h('span', { class: 'gpu-index' });
    const model = h('span', { class: 'gpu-model' });
    const flag = h('span', { class: 'flag', hidden: true });
    const stats = { util: this.stat('util'), mem: this.stat('mem'), temp: this.stat('temp'), power: this.stat('power') };
    const pcieTx = h('span', { class: 'pcie-v' });
    const pcieRx = h('span', { class: 'pcie-v' });
    const charts = h('div', { class: 'charts' });
    const el = h('article', { class: 'gpu card', 'data-gpu': gpu },
      h('div', { class: 'card-head' }, title, model, flag),
      h('div', { class: 'stats' }, Object.values(stats).map((s) => s.el)),
      charts,
      h('div', { class: 'pcie' }, this.T('pcie', 'span', 'pcie-label'),
        this.T('tx', 'span', 'pcie-k'), pcieTx, this.T('rx', 'span', 'pcie-k'), pcieRx));
    card = { gpu, el, title, model, flag, stats, pcieTx, pcieRx };
    this.cards.set(gpu, card);
    this.gpuGrid.append(el);
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

  panel(titleKey, chartOpts) {
    const value = h('div', { class: 'panel-value' }, '–');
    const sub = h('div', { class: 'panel-sub' });
    const body = h('div', { class: 'panel-chart' });
    const el = h('article', { class: 'card panel' },
      h('div', { class: 'panel-head' }, this.T(titleKey, 'h3'), value), sub, body);
    this.sysGrid.append(el);
    const chart = new Chart(body, { height: 120, ...chartOpts });
    return { el, value, sub, chart };
  }

  // The system panels' charts measure their parent: made once the page shows.
  ensureSystem() {
    if (this.sys) return;
    this.sys = {
      cpu: this.panel('cpu', {
        title: 'chart.cpu',
        yMax: 100,
        series: CPU_MODES.map((m, i) => ({ key: `mode.${m}`, color: PALETTE[i], fill: i === 0,
          fmt: (v) => `${v.toFixed(v < 10 ? 1 : 0)}%` })),
      }),
      mem: this.panel('memory', {
        title: 'chart.memory',
        series: [{ key: 'memUsedGiB', color: '--c-mem', fill: true, fmt: (v) => `${v.toFixed(1)} GiB` }],
      }),
      disk: this.panel('disk', {
        fmtAxis: fmt.compact,
        series: [{ key: 'read', color: '--c1', fmt: fmt.rate }, { key: 'write', color: '--c2', fmt: fmt.rate }],
      }),
      net: this.panel('net', {
        fmtAxis: fmt.compact,
        series: [{ key: 'recv', color: '--c3', fmt: fmt.rate }, { key: 'send', color: '--c4', fmt: fmt.rate }],
      }),
    };
  }

  // -------------------------------------------------------------------------
  // Page hooks (registry.js)

  show(hash) {
    this.el.hidden = false;
    this.ensureSystem();
    const gpu = gpuFromHash(hash);
    if (gpu !== this.focus) this.scrollTo = gpu;
    this.focus = gpu;
    this.applyFocus();
  }

  // The GPU the URL names: its card outlined, and scrolled to once.
  applyFocus() {
    for (const c of this.cards.values()) setClass(c.el, 'focus', c.gpu === this.focus);
    const card = this.scrollTo ? this.cards.get(this.scrollTo) : null;
    if (card && !this.el.hidden) {
      this.scrollTo = '';
      card.el.scrollIntoView({ block: 'center' });
    }
  }

  hide() {
    this.el.hidden = true;
    // The outline goes with the link; shown again from a link to the same
    // GPU, it scrolls to it again.
    this.focus = '';
    this.scrollTo = '';
    this.applyFocus();
  }

  relabel() {
    retranslate(this.i18n, t);
    for (const c of this.cards.values()) {
      for (const ch of [c.utilChart, c.tempChart, c.powerChart]) ch.relabel();
    }
    for (const p of Object.values(this.sys ?? {})) p.chart.relabel();
    this.render();
  }

  refreshMs(seconds) { return refreshMs(seconds); }

  // The queries of one refresh (with the shell's status): each failure
  // leaves its chart empty and the first one is said in a note.
  async load({ seconds, signal }) {
    const win = api.windowFor(seconds);
    const rq = rangeQueries(win.step);
    const rangeKeys = Object.keys(rq);
    const instKeys = Object.keys(INSTANT_QUERIES);
    const settled = await Promise.allSettled([
      ...rangeKeys.map((k) => api.queryRange(rq[k], win, signal)),
      ...instKeys.map((k) => api.queryInstant(INSTANT_QUERIES[k], signal)),
    ]);
    const range = settledResults(rangeKeys, settled.slice(0, rangeKeys.length));
    const inst = settledResults(instKeys, settled.slice(rangeKeys.length));
    return { win, range: range.results, inst: inst.results, error: range.error ?? inst.error };
  }

  update({ win, range, inst, error }) {
    this.queryError = error;
    this.view = computeView(win, range, inst, this.shell.status().status);
    this.render();
  }

  // -------------------------------------------------------------------------
  // Rendering (idempotent: runs after each refresh and on a language switch)

  render() {
    this.renderNote();
    if (!this.view) return;
    this.renderGpus(this.view);
    this.renderSummary(this.view);
    if (this.sys) this.renderSystem(this.view);
  }

  // When the server is away every query fails too; the status line says so.
  renderNote() {
    const e = this.shell.status().error ? null : this.queryError;
    const note = e ? (e.status === 404 ? t('queryMissing') : t('queryFailed', { err: e.message })) : '';
    setText(this.queryNote, note);
    this.queryNote.hidden = !note;
  }

  renderSummary(v) {
    const g = v.gpus;
    const k = this.kpi;
    this.summary.hidden = g.length === 0;
    if (g.length === 0) return;
    const s = summarize(g);
    setText(k.util.value, fmt.percent(s.avgUtil));
    setText(k.util.sub, t('sum.utilSub', { n: g.length }));
    setBar(k.util.bar, s.avgUtil / 100);

    setText(k.mem.value, fmt.bytes(s.memUsed, 0));
    setText(k.mem.sub, Number.isFinite(s.memTotal) ? t('sum.of', { total: fmt.bytes(s.memTotal, 0) }) : '');
    setBar(k.mem.bar, s.memTotal > 0 ? s.memUsed / s.memTotal : 0);

    const hot = s.hottest;
    setText(k.hot.value, hot ? `${fmt.fixed(hot.tempNow)} °C` : '–');
    setText(k.hot.sub, hot ? t('sum.hotSub', { gpu: hot.gpu,
      limit: Number.isFinite(hot.slowdown) ? `${hot.slowdown} °C` : '?' }) : '');
    setBar(k.hot.bar, hot && hot.slowdown ? hot.tempNow / hot.slowdown : 0);
    setClass(k.hot.el, 'warn', s.hottestFlag === 'hot');
    setClass(k.hot.el, 'crit', s.hottestFlag === 'throttle');

    const kw = (w) => (!Number.isFinite(w) ? '–' : w >= 1000 ? `${(w / 1000).toFixed(1)} kW` : `${Math.round(w)} W`);
    setText(k.power.value, kw(s.power));
    setText(k.power.sub, s.powerLimit > 0 ? t('sum.of', { total: kw(s.powerLimit) }) : '');
    setBar(k.power.bar, s.powerLimit > 0 ? s.power / s.powerLimit : 0);

    setText(k.idle.value, s.utilKnown ? String(s.idle) : '–');
    setText(k.idle.sub, t('sum.idleSub'));
    setBar(k.idle.bar, s.idle / g.length);
    setClass(k.idle.el, 'warn', s.idle > 0);
  }

  renderGpus(v) {
    const seen = new Set();
    for (const gv of v.gpus) {
      const c = this.ensureCard(gv.gpu);
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
    for (const [gpu, c] of this.cards) {
      if (!seen.has(gpu)) { c.el.remove(); this.cards.delete(gpu); }
    }
    // Keep cards in GPU order even when one appears late.
    const order = v.gpus.map((g) => this.cards.get(g.gpu).el);
    if (order.some((el, i) => this.gpuGrid.children[i] !== el)) this.gpuGrid.append(...order);
    this.noGpus.hidden = v.gpus.length > 0;
    setText(this.gpuCount, v.gpus.length ? String(v.gpus.length) : '');
    this.applyFocus();
  }

  renderSystem(v) {
    const { cpu, mem, disk, net } = v;
    const p = this.sys;
    setText(p.cpu.value, fmt.percent(cpu.busyPct));
    setText(p.cpu.sub, Number.isFinite(cpu.cores) && Number.isFinite(cpu.busyPct)
      ? t('cpuSub', { busy: fmt.fixed((cpu.busyPct / 100) * cpu.cores, 1), cores: cpu.cores }) : '');
    p.cpu.chart.set(v.win, [v.xs, ...cpu.series]);

    const used = api.lastValue(mem.used);
    setText(p.mem.value, fmt.bytes(used));
    setText(p.mem.sub, Number.isFinite(mem.total) ? t('memSub', { used: fmt.bytes(used), total: fmt.bytes(mem.total) }) : '');
    const gib = (b) => (b == null ? null : b / 1073741824);
    p.mem.chart.set(v.win, [v.xs, mem.used.map(gib)], Number.isFinite(mem.total) ? gib(mem.total) : null);

    const r = api.lastValue(disk.read), w = api.lastValue(disk.write);
    const total = (a, b) => (Number.isFinite(a) || Number.isFinite(b) ? (a || 0) + (b || 0) : NaN);
    setText(p.disk.value, fmt.rate(total(r, w)));
    setText(p.disk.sub, t('diskSub', { r: fmt.rate(r), w: fmt.rate(w) }));
    p.disk.chart.set(v.win, [v.xs, disk.read, disk.write]);

    const rx = api.lastValue(net.rx), tx = api.lastValue(net.tx);
    setText(p.net.value, fmt.rate(total(rx, tx)));
    setText(p.net.sub, t('netSub', { rx: fmt.rate(rx), tx: fmt.rate(tx) }));
    p.net.chart.set(v.win, [v.xs, net.rx, net.tx]);
  }
}

registerPage({
  id: 'overview',
  hash: '', // any hash no other page claims: #range=1h
  label: 'nav.overview',
  strings,
  create: (shell) => new OverviewPage(shell),
});
