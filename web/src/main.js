// Vigil's page: the shell around the pages (registry.js; the list is
// pages/index.js). It builds the header (the node's name, one tab per page,
// the time range picker, the language button), the status line (from
// /api/v1/status: what was detected, live or not, when updated) and the
// footer; routes the URL hash to a page (#range=1h, #jobs&range=1h&id=...,
// #logs&range=1h&job=..., #alerts&range=1h: tabs are links, so the back
// button and a copied link both work, and the range carries over between the
// pages); puts a page's badge in its tab (the Alerts tab's count); and
// refreshes the status line, with the data of a page that rides along (the
// overview), while the browser tab is shown.

import 'uplot/dist/uPlot.min.css';
import './style.css';
import * as api from './api.js';
import { h, retranslate, setClass, setPressed, setText, translated } from './dom.js';
import { clockSeconds, duration } from './format.js';
import { detectLang, lang, saveLang, setLang, t } from './i18n.js';
import './pages/index.js';
import { pageForHash, pageHash, pages } from './registry.js';

const RANGES = [
  ['5m', 300], ['15m', 900], ['1h', 3600], ['6h', 21600], ['24h', 86400], ['7d', 604800],
];
const DEFAULT_RANGE = '15m';
// The status line's refresh on a page that does not set its own (refreshMs).
const STATUS_REFRESH_MS = 10000;

const state = {
  page: null, // the shown page: an entry of `entries`
  range: rangeFromHash(),
  status: null,
  statusError: null,
  lastUpdate: 0,
  inflight: null,
};

// What the pages get from the shell (registry.js).
const shell = {
  ranges: RANGES,
  range: () => ({ key: state.range, seconds: rangeSeconds() }),
  status: () => ({ status: state.status, error: state.statusError }),
};

// One per registered page, in tab order: {def, tab, view}.
const entries = pages().map((def) => ({ def, tab: null, view: null }));

function rangeFromHash() {
  const m = /range=([0-9a-z]+)/.exec(location.hash);
  return m && RANGES.some(([k]) => k === m[1]) ? m[1] : DEFAULT_RANGE;
}
function rangeSeconds() { return RANGES.find(([k]) => k === state.range)[1]; }
function entryForHash(hash) {
  const def = pageForHash(hash);
  return entries.find((e) => e.def === def);
}

// ---------------------------------------------------------------------------
// Layout

const ui = {};
const i18nEls = []; // the shell's static strings, retranslated on a language switch
const T = (key, tag = 'span', cls = null) => translated(i18nEls, t, key, tag, cls);

function buildPage() {
  ui.rangeButtons = RANGES.map(([key]) => {
    const b = h('button', { type: 'button', class: 'seg', 'data-range': key,
      onclick: () => selectRange(key) });
    i18nEls.push([b, `range.${key}`]);
    return b;
  });
  ui.langButton = h('button', { type: 'button', class: 'lang', onclick: toggleLang });
  for (const e of entries) {
    e.tab = h('a', { class: 'tab', 'data-page': e.def.id, href: `#${e.def.hash}` }, T(e.def.label));
  }
  ui.node = h('span', { class: 'node' });
  ui.statusDot = h('i', { class: 'dot' });
  ui.statusText = h('span', { class: 'status-text' });
  ui.live = h('span', { class: 'live' });
  ui.updated = h('span', { class: 'updated' });

  const header = h('header', { class: 'top' },
    h('div', { class: 'brand' },
      h('span', { class: 'logo', 'aria-hidden': 'true' }),
      h('span', { class: 'name' }, 'Vigil'),
      ui.node),
    h('nav', { class: 'tabs' }, entries.map((e) => e.tab)),
    h('div', { class: 'controls' },
      ui.rangeGroup = h('div', { class: 'segmented', role: 'group' }, ui.rangeButtons),
      ui.langButton));
  const statusBar = h('div', { class: 'statusbar' },
    h('div', { class: 'status', 'data-testid': 'status' }, ui.statusDot, ui.statusText),
    h('div', { class: 'freshness' }, ui.live, ui.updated));
  ui.footer = h('footer', null);

  // Every page is made once; each keeps its root hidden until shown. A
  // page's badge (the Alerts tab's count) goes in its tab, on every page.
  for (const e of entries) {
    e.view = e.def.create(shell);
    if (e.view.badge) e.tab.append(e.view.badge);
  }
  document.body.replaceChildren(
    h('div', { class: 'page' }, header, statusBar, entries.map((e) => e.view.el), ui.footer));
}

// ---------------------------------------------------------------------------
// Data: the status line, and the page's data when it comes with it

async function refresh() {
  if (state.inflight) return;
  const ctrl = new AbortController();
  state.inflight = ctrl;
  const { view } = state.page;
  try {
    const [st, data] = await Promise.allSettled([
      api.getJson('/api/v1/status', null, ctrl.signal),
      view.load ? view.load({ seconds: rangeSeconds(), signal: ctrl.signal }) : null,
    ]);
    if (ctrl.signal.aborted) return;
    if (st.status === 'fulfilled') {
      state.status = st.value;
      state.statusError = null;
      state.lastUpdate = Date.now();
    } else {
      state.statusError = st.reason;
    }
    renderStatus();
    if (view.load && data.status === 'fulfilled') view.update(data.value);
  } finally {
    if (state.inflight === ctrl) state.inflight = null;
  }
}

// A refresh for the old window (or page) must not overwrite the new one.
function refreshNow() {
  state.inflight?.abort();
  state.inflight = null;
  schedule(0);
}

// Live refresh, paused while the browser tab is hidden: at the page's
// cadence (the overview: 2-30 s by range), else every 10 s.
let timer = null;
function schedule(delay) {
  clearTimeout(timer);
  timer = setTimeout(async () => {
    if (!document.hidden) await refresh().catch(() => {});
    schedule(state.page.view.refreshMs?.(rangeSeconds()) ?? STATUS_REFRESH_MS);
  }, delay);
}

// ---------------------------------------------------------------------------
// Rendering

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
    ? t('updated', { t: clockSeconds(state.lastUpdate / 1000) }) : '');
  setText(ui.footer, s ? t('footer', { version: s.version ?? '', home: s.home ?? '' }) + ' · '
    + t('uptime', { d: duration(s.uptime_seconds ?? 0) }) : '');
}

function applyLang() {
  retranslate(i18nEls, t);
  setText(ui.langButton, t('switchTo'));
  ui.langButton.setAttribute('aria-label', t('language'));
  for (const e of entries) e.view.relabel?.();
  renderStatus();
}

function toggleLang() {
  const next = lang() === 'zh' ? 'en' : 'zh';
  setLang(next);
  saveLang(next);
  applyLang();
}

// ---------------------------------------------------------------------------
// Range and routing

function markRange() {
  for (const e of entries) e.tab.href = pageHash(e.def, state.range);
  for (const b of ui.rangeButtons) setPressed(b, b.dataset.range === state.range);
}

function selectRange(key) {
  if (key === state.range) return;
  state.range = key;
  markRange();
  const { def, view } = state.page;
  if (view.onRange) view.onRange(key); // the page writes the URL
  else history.replaceState(null, '', pageHash(def, key));
  // A page whose data comes with the refresh wants the new window now.
  if (view.load) refreshNow();
}

function route() {
  const next = entryForHash(location.hash);
  const range = rangeFromHash();
  const prev = state.page;
  const changed = next !== prev || range !== state.range;
  state.page = next;
  state.range = range;
  markRange();
  for (const e of entries) {
    const on = e === next;
    setClass(e.tab, 'active', on);
    if (on) e.tab.setAttribute('aria-current', 'page'); else e.tab.removeAttribute('aria-current');
  }
  ui.rangeGroup.hidden = !next.def.rangePicker;
  if (prev && prev !== next) prev.view.hide();
  next.view.show(location.hash);
  if (changed) refreshNow();
}

function main() {
  setLang(detectLang());
  buildPage();
  markRange();
  applyLang();
  document.addEventListener('visibilitychange', () => {
    for (const e of entries) e.view.onVisibility?.(document.hidden);
    if (!document.hidden) schedule(0);
  });
  window.addEventListener('hashchange', route);
  route();
  schedule(0);
}

main();
