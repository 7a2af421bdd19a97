// The log explorer (#logs&range=1h&job=...&level=...&q=...&re=1): filters
// (node, job, container, level, text or regex) built into LogQL, the newest
// 500 lines of the time range (oldest first, "load older" for more), a live
// tail over server-sent events appended at the bottom, a context panel around
// any line, lines per level over time (logs.histogram.js), and what volume
// control dropped per source (logs.volume.js). API: docs/log-api.md; LogQL
// and the URL's state: logs.model.js.
//
// Log text is untrusted: it only ever reaches the page as text nodes (and
// <mark> elements holding text nodes for highlights), never as HTML.

import * as api from '../api.js';
import { h, retranslate, setClass, setPressed, setText, translated } from '../dom.js';
import { lineTime } from '../format.js';
import { t } from '../i18n.js';
import { registerPage } from '../registry.js';
import { Histogram } from './logs.histogram.js';
import strings from './logs.i18n.js';
import {
  FLAGS, LEVELS, PAGE, buildQuery, compareEntries, histogramStep, logsHash, makeMatcher,
  nsToMs, olderPage, parseLogsHash, shapeHistogram, splitHighlights,
} from './logs.model.js';
import { VolumePanel } from './logs.volume.js';

const MAX_ROWS = 5000; // live tail keeps at most this many lines in the page
const CONTEXT_SIZES = [10, 25, 50, 100];
const SIDE_REFRESH_MS = 10000; // histogram and volume counters while live

// Text with highlights: text nodes, and <mark> around matches.
export function highlighted(text, matcher) {
  const frag = document.createDocumentFragment();
  for (const seg of splitHighlights(text, matcher)) {
    frag.append(seg.hit ? h('mark', null, seg.text) : document.createTextNode(seg.text));
  }
  return frag;
}

class LogsPage {
  // getRange(): {key, seconds}; the header's picker owns the range.
  constructor(getRange) {
    this.getRange = getRange;
    this.filters = { node: '', job: '', container: '', levels: [], search: '', regex: false };
    this.visible = false;
    this.live = true;
    this.rows = []; // {entry, labels, el} sorted by compareEntries
    this.seen = new Set(); // seq of shown entries
    this.streams = new Map(); // stream id -> labels
    this.hasOlder = false;
    this.tailCount = 0;
    this.gen = 0;
    this.ctrl = null;
    this.es = null;
    this.queue = [];
    this.flushPending = false;
    this.sideTimer = null;
    this.matcher = null;
    this.nodes = [];
    this.known = {}; // label name -> values in the range, for the drop-downs
    this.i18n = [];
    this.ctx = null; // {entry, size, entries, labels}
    this.build();
  }

  T(key, tag = 'span', cls = null) {
    return translated(this.i18n, t, key, tag, cls);
  }

  // -------------------------------------------------------------------------
  // Layout

  build() {
    const sel = (name) => {
      const s = h('select', { class: 'input', name, 'data-filter': name,
        onchange: () => { this.filters[name] = s.value; this.run(); } });
      return s;
    };
    this.selects = { node: sel('node'), job: sel('job'), container: sel('container') };
    const field = (key, control) => h('label', { class: 'field' }, this.T(key, 'span', 'field-label'), control);

    this.levelButtons = LEVELS.map((l) => h('button', { type: 'button', class: `chip lv-${l}`,
      'data-level': l, 'aria-pressed': 'false', onclick: () => this.toggleLevel(l) }));
    this.searchInput = h('input', { class: 'input search', type: 'search', name: 'search',
      spellcheck: 'false', autocomplete: 'off',
      onkeydown: (e) => { if (e.key === 'Enter') this.applySearch(); } });
    this.modeSelect = h('select', { class: 'input', name: 'mode', onchange: () => this.applySearch() },
      h('option', { value: 'text' }), h('option', { value: 'regex' }));
    this.searchButton = h('button', { type: 'button', class: 'btn primary', onclick: () => this.applySearch() });
    this.liveButton = h('button', { type: 'button', class: 'btn live-btn', 'data-testid': 'live-toggle',
      onclick: () => this.setLive(!this.live) });
    this.queryCode = h('code', { class: 'logql', 'data-testid': 'logql' });
    this.note = h('div', { class: 'note', hidden: true, role: 'alert' });

    const filters = h('section', { class: 'card log-filters' },
      h('div', { class: 'filter-row' },
        field('logs.node', this.selects.node), field('logs.job', this.selects.job),
        field('logs.container', this.selects.container),
        h('div', { class: 'field' }, this.T('logs.level', 'span', 'field-label'),
          h('div', { class: 'chips', role: 'group' }, this.levelButtons))),
      h('div', { class: 'filter-row' },
        h('label', { class: 'field grow' }, this.T('logs.search', 'span', 'field-label'),
          h('div', { class: 'search-row' }, this.searchInput, this.modeSelect, this.searchButton)),
        h('div', { class: 'field' }, h('span', { class: 'field-label' }, '\u00a0'), this.liveButton)),
      h('div', { class: 'query-row' }, this.T('logs.query', 'span', 'field-label'), this.queryCode));

    // Volume control: never silent.
    this.volume = new VolumePanel();

    const histCard = h('section', { class: 'card panel log-hist' },
      h('div', { class: 'panel-head' }, this.T('logs.histogram', 'h3')));
    this.hist = null;
    this.histParent = histCard;

    this.countText = h('span', { class: 'count' });
    this.olderButton = h('button', { type: 'button', class: 'btn older', 'data-testid': 'load-older',
      onclick: () => this.loadOlder() });
    this.olderNote = h('div', { class: 'older-note' });
    this.emptyText = h('div', { class: 'log-empty', hidden: true });
    this.list = h('div', { class: 'log-list', 'data-testid': 'log-list', role: 'log',
      onclick: (e) => this.onListClick(e), onkeydown: (e) => this.onListKey(e) });
    this.listTop = h('div', { class: 'list-top' }, this.olderButton, this.olderNote);
    const results = h('section', { class: 'card log-results' },
      h('div', { class: 'results-head' }, h('h3', null, this.T('logs.lines'), this.countText),
        this.T('logs.clickHint', 'span', 'hint')),
      this.listTop, this.emptyText, this.list);

    // Context panel (an overlay on the right).
    this.ctxTitle = h('h3', { class: 'ctx-title' });
    this.ctxLabels = h('div', { class: 'ctx-labels' });
    this.ctxSizes = CONTEXT_SIZES.map((n) => h('button', { type: 'button', class: 'seg', 'data-size': n,
      onclick: () => this.openContext(this.ctx?.entry, n) }));
    this.ctxList = h('div', { class: 'log-list ctx-list', 'data-testid': 'context-list' });
    this.ctxClose = h('button', { type: 'button', class: 'btn', onclick: () => this.closeContext() });
    this.ctxPanel = h('aside', { class: 'ctx-panel card', hidden: true, 'data-testid': 'context-panel',
      role: 'dialog', 'aria-modal': 'false' },
      h('div', { class: 'ctx-head' }, this.ctxTitle,
        h('div', { class: 'segmented' }, this.ctxSizes), this.ctxClose),
      this.ctxLabels, this.ctxList);
    document.addEventListener('keydown', (e) => { if (e.key === 'Escape' && !this.ctxPanel.hidden) this.closeContext(); });

    this.el = h('div', { class: 'logs-page', hidden: true },
      filters, this.note, h('div', { class: 'log-side' }, histCard, this.volume.el), results, this.ctxPanel);
  }

  // -------------------------------------------------------------------------
  // Page hooks (registry.js): visibility, URL state, language

  show(hash) {
    this.visible = true;
    this.el.hidden = false;
    // The canvas measures its parent, so it is made once the page shows.
    if (!this.hist) this.hist = new Histogram(this.histParent);
    this.fromHash(hash);
  }

  hide() {
    this.visible = false;
    this.el.hidden = true;
    this.stopTail();
    clearTimeout(this.sideTimer);
    this.ctrl?.abort();
  }

  fromHash(hash) {
    this.filters = parseLogsHash(hash);
    this.syncControls();
    this.run();
  }

  syncControls() {
    const f = this.filters;
    for (const k of Object.keys(this.selects)) this.fillSelect(k, null);
    for (const b of this.levelButtons) setPressed(b, f.levels.includes(b.dataset.level));
    if (this.searchInput.value !== f.search) this.searchInput.value = f.search;
    this.modeSelect.value = f.regex ? 'regex' : 'text';
  }

  // The header's picker changed: the same filters over the new range (the
  // URL follows).
  onRange() {
    this.run();
  }

  writeHash() {
    const hash = logsHash(this.getRange().key, this.filters);
    if (location.hash !== hash) history.replaceState(null, '', hash);
  }

  relabel() {
    retranslate(this.i18n, t);
    setText(this.searchButton, t('logs.run'));
    this.modeSelect.options[0].textContent = t('logs.mode.text');
    this.modeSelect.options[1].textContent = t('logs.mode.regex');
    this.searchInput.placeholder = t(this.filters.regex ? 'logs.placeholderRe' : 'logs.placeholder');
    for (const b of this.levelButtons) setText(b, t(`level.${b.dataset.level}`));
    for (const k of Object.keys(this.selects)) {
      const o = this.selects[k].options[0];
      if (o) o.textContent = t('logs.any');
    }
    setText(this.ctxClose, t('logs.close'));
    for (const b of this.ctxSizes) setText(b, t('logs.contextN', { n: b.dataset.size }));
    this.renderLive();
    this.renderCount();
    this.volume.relabel();
    this.hist?.relabel();
    for (const r of this.rows) this.relabelRow(r.el);
    for (const el of this.ctxList.children) if (el.entry) this.relabelRow(el);
    if (this.ctx) this.renderContextHead();
  }

  // -------------------------------------------------------------------------
  // Filters

  toggleLevel(l) {
    const f = this.filters;
    f.levels = f.levels.includes(l) ? f.levels.filter((x) => x !== l) : [...f.levels, l];
    this.syncControls();
    this.run();
  }

  applySearch() {
    this.filters.search = this.searchInput.value;
    this.filters.regex = this.modeSelect.value === 'regex';
    this.searchInput.placeholder = t(this.filters.regex ? 'logs.placeholderRe' : 'logs.placeholder');
    this.run();
  }

  setLive(on) {
    this.live = on;
    this.renderLive();
    if (on) this.run(); // catch up on what came while paused, then follow
    else this.stopTail();
  }

  renderLive() {
    setText(this.liveButton, this.live ? t('logs.pause') : t('logs.resume'));
    setClass(this.liveButton, 'on', this.live);
    this.liveButton.setAttribute('aria-pressed', String(this.live));
    this.liveButton.title = t('logs.live');
  }

  fillSelect(name, values) {
    const s = this.selects[name];
    if (values) this.known[name] = values;
    const known = this.known[name] ?? [];
    const want = this.filters[name];
    const all = want && !known.includes(want) ? [...known, want] : known;
    const opts = [h('option', { value: '' }, t('logs.any')), ...all.map((v) => h('option', { value: v }, v))];
    const same = s.options.length === opts.length && opts.every((o, i) => s.options[i].value === o.value);
    if (!same) s.replaceChildren(...opts);
    s.value = want;
    if (name === 'node') this.nodes = known;
  }

  // -------------------------------------------------------------------------
  // Data

  window() {
    const sec = this.getRange().seconds;
    const now = Date.now() / 1000;
    return { start: now - sec, end: now, seconds: sec };
  }

  async run() {
    if (!this.visible) return;
    const gen = ++this.gen;
    this.ctrl?.abort();
    const ctrl = new AbortController();
    this.ctrl = ctrl;
    this.stopTail();
    this.writeHash();
    const q = buildQuery(this.filters);
    this.query = q;
    setText(this.queryCode, q);
    this.matcher = makeMatcher(this.filters.search, this.filters.regex);
    const win = this.window();
    this.win = win;
    this.setNote('');
    this.queryFailed = false;
    this.list.classList.add('loading');
    this.renderCount();
    // The tail's cursor is taken before the query so no line falls between
    // the two; what the tail brings is held until the page is in, and what
    // both return is shown once (by seq).
    this.holdTail = true;
    if (this.live) this.startTail(q);
    this.refreshSide(ctrl.signal, gen);
    this.refreshLabels(win, ctrl.signal);
    try {
      const body = await api.getJson('/api/v1/logs/query', { query: q, limit: PAGE,
        start: win.start.toFixed(3), end: win.end.toFixed(3), direction: 'backward' }, ctrl.signal);
      if (gen !== this.gen) return;
      this.clearRows();
      this.addEntries(body.data, true);
      this.hasOlder = !!body.data?.truncated;
      this.renderCount();
      this.list.scrollTop = this.list.scrollHeight;
      this.holdTail = false;
      if (this.queue.length) this.scheduleFlush();
    } catch (e) {
      if (e.name === 'AbortError' || gen !== this.gen) return;
      this.clearRows();
      this.queryFailed = true; // a bad query: the tail would fail the same way
      this.holdTail = false;
      this.stopTail();
      this.setNote(t('logs.error', { err: e.message }));
      this.renderCount();
    } finally {
      if (gen === this.gen) { this.list.classList.remove('loading'); this.renderCount(); }
    }
  }

  async loadOlder() {
    const req = olderPage(this.rows.map((r) => r.entry));
    if (!req || !this.win) return;
    const gen = this.gen;
    this.olderButton.disabled = true;
    const params = { query: this.query, start: this.win.start.toFixed(3), direction: 'backward' };
    try {
      let body = await api.getJson('/api/v1/logs/query', { ...params, end: req.end, limit: req.limit });
      if (gen !== this.gen) return;
      const before = this.list.scrollHeight;
      let added = this.addEntries(body.data, false);
      if (added === 0 && body.data?.truncated) {
        // More lines at the oldest timestamp than one request holds: step past it.
        body = await api.getJson('/api/v1/logs/query', { ...params, end: req.strictEnd, limit: PAGE });
        if (gen !== this.gen) return;
        added = this.addEntries(body.data, false);
      }
      this.hasOlder = !!body.data?.truncated && added > 0;
      // Keep the lines the user was reading where they were.
      this.list.scrollTop += this.list.scrollHeight - before;
      this.renderCount();
    } catch (e) {
      if (gen === this.gen) this.setNote(t('logs.error', { err: e.message }));
    } finally {
      this.olderButton.disabled = false;
    }
  }

  async refreshLabels(win, signal) {
    const range = { start: win.start.toFixed(3), end: win.end.toFixed(3) };
    await Promise.all(Object.keys(this.selects).map(async (name) => {
      try {
        const body = await api.getJson(`/api/v1/logs/label/${name}/values`, range, signal);
        this.fillSelect(name, (body.data ?? []).map(String));
      } catch { /* the select keeps its values */ }
    }));
  }

  // The histogram and the volume counters; repeated while live.
  async refreshSide(signal, gen) {
    clearTimeout(this.sideTimer);
    if (gen !== this.gen || document.hidden) return;
    const sec = this.getRange().seconds;
    const step = histogramStep(sec);
    const now = Date.now() / 1000;
    const end = Math.ceil(now / step) * step;
    const hwin = { start: end - Math.ceil(sec / step) * step, end };
    const [hist, src] = await Promise.allSettled([
      api.getJson('/api/v1/logs/histogram', { query: this.query, start: hwin.start, end: hwin.end, step: `${step}s` }, signal),
      api.getJson('/api/v1/logs/sources', null, signal),
    ]);
    if (gen !== this.gen) return;
    // A failed histogram shows empty rather than the last query's bars.
    this.hist?.set(shapeHistogram(hist.status === 'fulfilled' ? hist.value.data : null), hwin);
    if (src.status === 'fulfilled') this.volume.set(src.value.data ?? [], this.filters);
    if (this.live && this.visible) {
      this.sideTimer = setTimeout(() => this.refreshSide(this.ctrl?.signal, gen), SIDE_REFRESH_MS);
    }
  }

  // A hidden tab stops asking the server for anything; showing it again
  // catches up (the newest page again, then the tail).
  onVisibility(hidden) {
    if (!this.visible) return;
    if (hidden) { this.stopTail(); clearTimeout(this.sideTimer); }
    else if (this.live) this.run();
  }

  // -------------------------------------------------------------------------
  // Live tail: EventSource reconnects with Last-Event-ID after each response.

  startTail(q) {
    this.stopTail();
    const es = new EventSource(`/api/v1/logs/tail?${new URLSearchParams({ query: q })}`);
    this.es = es;
    es.addEventListener('entry', (ev) => {
      if (this.es !== es) return;
      try { this.queue.push(JSON.parse(ev.data)); } catch { return; }
      this.scheduleFlush();
    });
    es.addEventListener('open', () => { if (this.es === es && this.noteKey === 'logs.tailError') this.setNote(''); });
    es.addEventListener('error', () => {
      if (this.es !== es) return;
      // A response that ends is the normal case (CONNECTING: it comes back);
      // CLOSED means the server refused, so start over in a while.
      if (es.readyState === EventSource.CLOSED) {
        es.close();
        this.es = null;
        if (this.queryFailed) return;
        this.setNote(t('logs.tailError'), 'logs.tailError');
        setTimeout(() => {
          if (this.live && this.visible && !this.es && !this.queryFailed && this.query === q) this.startTail(q);
        }, 5000);
      }
    });
  }

  stopTail() {
    if (this.es) { this.es.close(); this.es = null; }
    this.queue = [];
  }

  scheduleFlush() {
    if (this.flushPending || this.holdTail) return;
    this.flushPending = true;
    requestAnimationFrame(() => {
      this.flushPending = false;
      if (this.holdTail) return; // a new query started: its page comes first
      const items = this.queue;
      this.queue = [];
      if (!items.length) return;
      const atBottom = this.list.scrollTop + this.list.clientHeight >= this.list.scrollHeight - 40;
      let added = 0;
      for (const it of items) {
        const e = it.entry;
        if (!e || this.seen.has(e.seq)) continue;
        if (it.labels && e.stream != null) this.streams.set(e.stream, it.labels);
        this.insertRow(e);
        added++;
      }
      this.tailCount += added;
      this.trim();
      this.renderCount();
      if (atBottom) this.list.scrollTop = this.list.scrollHeight;
    });
  }

  // -------------------------------------------------------------------------
  // Rows

  clearRows() {
    this.rows = [];
    this.seen.clear();
    this.tailCount = 0;
    this.hasOlder = false;
    this.list.replaceChildren();
  }

  // Adds a query result's entries; returns how many were new.
  addEntries(data, initial) {
    for (const [id, labels] of Object.entries(data?.streams ?? {})) this.streams.set(id, labels);
    const fresh = (data?.entries ?? []).filter((e) => !this.seen.has(e.seq));
    fresh.sort(compareEntries);
    if (initial && this.rows.length === 0) {
      // The common case in one go: a fragment, one layout.
      const frag = document.createDocumentFragment();
      for (const e of fresh) {
        const el = this.renderRow(e);
        this.rows.push({ entry: e, el });
        this.seen.add(e.seq);
        frag.append(el);
      }
      this.list.append(frag);
    } else {
      for (const e of fresh) this.insertRow(e);
    }
    return fresh.length;
  }

  insertRow(e) {
    const el = this.renderRow(e);
    const rows = this.rows;
    // Usually the newest (tail) or the oldest (load older): check the ends first.
    let i;
    if (!rows.length || compareEntries(rows[rows.length - 1].entry, e) <= 0) i = rows.length;
    else if (compareEntries(e, rows[0].entry) < 0) i = 0;
    else {
      let lo = 0, hi = rows.length;
      while (lo < hi) { const mid = (lo + hi) >> 1; if (compareEntries(rows[mid].entry, e) <= 0) lo = mid + 1; else hi = mid; }
      i = lo;
    }
    this.list.insertBefore(el, rows[i]?.el ?? null);
    rows.splice(i, 0, { entry: e, el });
    this.seen.add(e.seq);
  }

  trim() {
    const extra = this.rows.length - MAX_ROWS;
    if (extra <= 0) return;
    for (const r of this.rows.splice(0, extra)) { r.el.remove(); this.seen.delete(r.entry.seq); }
    this.hasOlder = true;
  }

  sourceName(labels) {
    if (!labels) return '';
    const name = labels.job || labels.container || labels.container_id
      || (labels.source ? labels.source.split('/').pop() : '');
    return !this.filters.node && this.nodes.length > 1 && labels.node ? `${labels.node} · ${name}` : name;
  }

  renderRow(e, focus = false) {
    const labels = this.streams.get(e.stream);
    const level = LEVELS.includes(e.level) ? e.level : 'unknown';
    const withDate = (this.win?.seconds ?? 0) > 86400;
    const flags = FLAGS.filter((f) => e[f] === true).map((f) => h('span', { class: 'log-flag', 'data-flag': f }));
    const src = this.sourceName(labels);
    const el = h('div', { class: `log-row lv-${level}${focus ? ' focus' : ''}`, tabindex: '0',
      'data-seq': e.seq, 'data-level': level },
    h('span', { class: 'log-time' }, lineTime(nsToMs(e.ts), withDate)),
    h('span', { class: 'log-level' }),
    h('span', { class: 'log-src', title: labels ? Object.entries(labels).map(([k, v]) => `${k}=${v}`).join('\n') : null }, src),
    h('span', { class: 'log-msg' }, flags, h('span', { class: 'log-text' }, highlighted(e.text ?? '', this.matcher))));
    el.entry = e;
    this.relabelRow(el);
    return el;
  }

  relabelRow(el) {
    const lv = el.children[1];
    setText(lv, t(`level.${el.dataset.level}`));
    for (const f of el.querySelectorAll('.log-flag')) {
      setText(f, t(`logflag.${f.dataset.flag}`));
      f.title = t(`logflag.${f.dataset.flag}.title`);
    }
  }

  renderCount() {
    const n = this.rows.length;
    setText(this.countText, n ? (this.tailCount ? t('logs.countLive', { n, m: this.tailCount }) : t('logs.count', { n })) : '');
    // A big range on a busy store takes seconds: say so rather than "no lines".
    const loading = this.list.classList.contains('loading');
    this.emptyText.hidden = n > 0 || (!loading && !!this.noteKey);
    setText(this.emptyText, loading ? t('loading') : t('logs.empty'));
    this.olderButton.hidden = !this.hasOlder;
    setText(this.olderButton, t('logs.loadOlder'));
    this.olderNote.hidden = this.hasOlder || n === 0;
    setText(this.olderNote, t('logs.noOlder'));
  }

  setNote(text, key = null) {
    this.noteKey = text ? key ?? 'error' : null;
    setText(this.note, text);
    this.note.hidden = !text;
  }

  // -------------------------------------------------------------------------
  // Context

  onListClick(e) {
    const row = e.target.closest?.('.log-row');
    if (!row || !row.entry) return;
    // Selecting text to copy is not a click on the line.
    if (String(window.getSelection?.() ?? '') !== '') return;
    this.openContext(row.entry, this.ctx?.size ?? CONTEXT_SIZES[0]);
  }

  onListKey(e) {
    if (e.key !== 'Enter') return;
    const row = e.target.closest?.('.log-row');
    if (row?.entry) this.openContext(row.entry, this.ctx?.size ?? CONTEXT_SIZES[0]);
  }

  async openContext(entry, size) {
    if (!entry) return;
    const token = {};
    this.ctxToken = token;
    this.ctx = { entry, size, labels: this.streams.get(entry.stream) };
    this.ctxPanel.hidden = false;
    for (const b of this.ctxSizes) setPressed(b, Number(b.dataset.size) === size);
    this.renderContextHead();
    if (!this.ctxPanel.contains(document.activeElement)) this.ctxClose.focus({ preventScroll: true });
    this.ctxList.classList.add('loading');
    try {
      const body = await api.getJson('/api/v1/logs/context',
        { stream: entry.stream, line: entry.line, before: size, after: size });
      if (this.ctxToken !== token) return;
      for (const [id, labels] of Object.entries(body.data?.streams ?? {})) this.streams.set(id, labels);
      let focusEl = null;
      const frag = document.createDocumentFragment();
      for (const e of body.data?.entries ?? []) {
        const focus = e.seq === entry.seq || (e.stream === entry.stream && e.line === entry.line);
        const el = this.renderRow(e, focus);
        if (focus) { focusEl = el; el.setAttribute('aria-current', 'true'); }
        frag.append(el);
      }
      this.ctxList.replaceChildren(frag);
      focusEl?.scrollIntoView({ block: 'center' });
    } catch (e) {
      if (this.ctxToken === token) this.ctxList.replaceChildren(h('div', { class: 'log-empty' }, t('logs.error', { err: e.message })));
    } finally {
      if (this.ctxToken === token) this.ctxList.classList.remove('loading');
    }
  }

  renderContextHead() {
    const { entry, labels } = this.ctx;
    setText(this.ctxTitle, t('logs.contextOf', { t: lineTime(nsToMs(entry.ts), true) }));
    const parts = labels ? Object.entries(labels).map(([k, v]) => `${k}=${v}`) : [];
    setText(this.ctxLabels, parts.join('  '));
  }

  closeContext() {
    this.ctxPanel.hidden = true;
    this.ctxToken = null;
    this.ctx = null;
    this.ctxList.replaceChildren();
  }
}

registerPage({
  id: 'logs',
  hash: 'logs',
  label: 'nav.logs',
  strings,
  create: (shell) => new LogsPage(shell.range),
});
