// The Actions tab (#actions, #actions&id=N: the link each action's
// notification carries): the optional actions' log (/api/v1/actions),
// newest first, each with its state, what triggered it (the run or the idle
// node), the command, when it runs (a countdown while scheduled) or ran, its
// exit status and output; a scheduled one has a Cancel button, signed with
// the name given in "Your name" (remembered in this browser). The entry a
// link names is highlighted and scrolled to. Refreshed every 5 s while
// shown; countdowns tick every second. The data shaping is actions.model.js'.
//
// Commands, output, labels and names are the server's (untrusted): they
// reach the page only as text nodes (dom.js h / setText).

import * as api from '../api.js';
import { h, retranslate, setText, translated } from '../dom.js';
import { dateTime } from '../format.js';
import { t } from '../i18n.js';
import { registerPage } from '../registry.js';
import {
  canCancel, clockOffset, commandText, configuredFrom, countdown, entriesFrom, highlightId, signature, stateBadge,
  whereText,
} from './actions.model.js';
import strings from './actions.i18n.js';

const ACTIONS = '/api/v1/actions';
const REFRESH_MS = 5000;
const NAME_KEY = 'vigil.actions.by';

function load(key) {
  try { return localStorage.getItem(key) ?? ''; } catch { return ''; }
}
function save(key, v) {
  try { localStorage.setItem(key, v); } catch { /* storage disabled */ }
}

function badge(b, cls = '') {
  return h('span', { class: `badge ${b.tone}${cls}` }, b.key ? t(b.key) : b.text);
}

class ActionsPage {
  constructor() {
    this.visible = false;
    this.entries = [];
    this.configured = [];
    this.offset = 0; // the server's clock minus this browser's
    this.highlight = 0;
    this.scrolledTo = 0;
    this.loaded = false;
    this.apiMissing = false;
    this.error = null;
    this.timer = null;
    this.ticker = null;
    this.gen = 0;
    this.i18n = [];
    this.build();
  }

  T(key, tag = 'span', cls = null) {
    return translated(this.i18n, t, key, tag, cls);
  }

  build() {
    const T = this.T.bind(this);
    this.note = h('div', { class: 'note', hidden: true, role: 'alert', 'data-testid': 'actions-note' });
    this.by = h('input', { class: 'input', name: 'by', value: load(NAME_KEY), 'data-testid': 'actions-by',
      autocomplete: 'name', onchange: () => save(NAME_KEY, signature(this.by.value)) });
    this.configLine = h('div', { class: 'hint', 'data-testid': 'actions-configured' });
    this.list = h('ol', { class: 'inbox-list', 'data-testid': 'actions-list' });
    this.empty = h('div', { class: 'jobs-empty', hidden: true, 'data-testid': 'actions-empty' });
    this.el = h('div', { class: 'jobs-page actions-page', hidden: true }, this.note,
      h('section', { class: 'card jobs-list' },
        h('div', { class: 'jobs-head' }, h('h3', null, T('actions.title')), T('actions.hint', 'span', 'hint')),
        h('div', { class: 'filter-row' },
          h('label', { class: 'field' }, T('actions.by', 'span', 'field-label'), this.by), T('actions.byHint', 'span', 'hint')),
        this.configLine, this.empty, this.list));
  }

  // Page hooks (registry.js) -------------------------------------------------

  show(hash) {
    this.el.hidden = false;
    this.visible = true;
    const id = highlightId(hash);
    if (id !== this.highlight) this.scrolledTo = 0;
    this.highlight = id;
    this.render();
    this.schedule(0);
    clearInterval(this.ticker);
    this.ticker = setInterval(() => this.tickCountdowns(), 1000);
  }

  hide() {
    this.visible = false;
    this.el.hidden = true;
    clearTimeout(this.timer);
    clearInterval(this.ticker);
  }

  relabel() {
    retranslate(this.i18n, t);
    this.render();
  }

  onVisibility(hidden) {
    if (hidden) clearTimeout(this.timer);
    else if (this.visible) this.schedule(0);
  }

  // Data ---------------------------------------------------------------------

  schedule(ms) {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.tick(), ms);
  }

  async tick() {
    if (document.hidden || this.apiMissing || !this.visible) return;
    const gen = ++this.gen;
    await this.refresh(gen).catch(() => {});
    if (gen === this.gen && !this.apiMissing && this.visible) this.schedule(REFRESH_MS);
  }

  async refresh(gen) {
    let answer;
    try {
      answer = await api.getJson(ACTIONS, { limit: '200' });
    } catch (e) {
      if (gen !== this.gen) return;
      this.apiMissing = e.status === 404;
      this.error = this.apiMissing ? t('actions.apiMissing') : t('actions.loadFailed', { err: e.message });
      this.render();
      return;
    }
    if (gen !== this.gen) return;
    this.error = null;
    this.loaded = true;
    this.offset = clockOffset(answer, Date.now());
    this.entries = entriesFrom(answer);
    this.configured = configuredFrom(answer);
    this.render();
  }

  async cancel(entry) {
    const by = signature(this.by.value);
    save(NAME_KEY, by);
    try {
      await api.sendJson('POST', `${ACTIONS}/${entry.id}/cancel`, by ? { by } : {});
      this.error = null;
    } catch (e) {
      this.error = t('actions.cancelFailed', { err: e.message });
    }
    this.schedule(0);
    this.render();
  }

  // Rendering ----------------------------------------------------------------

  render() {
    this.note.hidden = !this.error;
    setText(this.note, this.error ?? '');
    if (!this.visible) return;
    setText(this.configLine, !this.loaded ? '' : this.configured.length
      ? t('actions.configured', { list: this.configured.map((a) => `${a.name} (${t(`actions.on.${a.on === 'gpus_idle' ? 'gpus_idle' : 'job_finished'}`)}${a.dryRun ? `, ${t('actions.dryRun')}` : ''})`).join(', ') })
      : t('actions.none'));
    const missing = this.highlight && this.loaded && !this.entries.some((e) => e.id === this.highlight);
    this.empty.hidden = this.entries.length > 0 && !missing;
    setText(this.empty, missing ? t('actions.notFound', { id: this.highlight }) : t('actions.empty'));
    this.list.replaceChildren(...this.entries.map((e) => this.entryView(e)));
    const target = this.list.querySelector('.highlight');
    if (target && this.scrolledTo !== this.highlight) {
      this.scrolledTo = this.highlight;
      target.scrollIntoView?.({ block: 'center' });
    }
  }

  tickCountdowns() {
    const now = Date.now() + this.offset;
    for (const el of this.list.querySelectorAll('[data-countdown]')) {
      const e = this.entries.find((x) => x.id === Number(el.dataset.countdown));
      const left = e ? countdown(e, now) : null;
      if (left === null) continue;
      setText(el, t(e.dryRun ? 'actions.recordsIn' : 'actions.runsIn', { left, at: dateTime(e.runAtMs) }));
      if (left === '0s') this.schedule(1000); // due: the next answer says how it went
    }
  }

  entryView(e) {
    const now = Date.now() + this.offset;
    const left = countdown(e, now);
    const where = whereText(e);
    const lines = [];
    if (left !== null) {
      lines.push(h('div', { class: 'inbox-summary', 'data-countdown': String(e.id), 'data-testid': 'actions-countdown' },
        t(e.dryRun ? 'actions.recordsIn' : 'actions.runsIn', { left, at: dateTime(e.runAtMs) })));
    }
    if (e.state === 'cancelled') {
      lines.push(h('div', { class: 'inbox-summary' }, t('actions.cancelledBy', { who: e.cancelledBy, at: dateTime(e.finishedMs) })));
    } else if (e.finishedMs) {
      lines.push(h('div', { class: 'inbox-summary' }, t('actions.finished', { at: dateTime(e.finishedMs) }),
        e.exitCode !== null ? ` · ${t('actions.exit', { code: e.exitCode })}` : ''));
    }
    if (e.error) lines.push(h('div', { class: 'inbox-note', 'data-testid': 'actions-error' }, e.error));
    const cancel = canCancel(e)
      ? h('button', { type: 'button', class: 'btn small', 'data-testid': 'actions-cancel', onclick: () => this.cancel(e) }, t('actions.cancel'))
      : null;
    const on = e.on === 'gpus_idle' ? 'gpus_idle' : 'job_finished';
    return h('li', { class: `inbox-item${e.id === this.highlight ? ' highlight' : ''}`, 'data-id': String(e.id), 'data-state': e.state },
      h('div', { class: 'inbox-line' }, badge(stateBadge(e.state)), ' ', h('strong', null, e.action),
        h('span', { class: 'hint' }, ` ${t(`actions.on.${on}`)}${where ? ` · ${where}` : ''}${e.owner ? ` · ${t('actions.owner', { who: e.owner })}` : ''}`),
        h('span', { class: 'inbox-time', title: dateTime(e.createdMs) }, `#${e.id} · ${dateTime(e.createdMs)}`), cancel),
      ...lines,
      h('div', { class: 'inbox-meta' }, h('span', { class: 'hint' }, t('actions.command')),
        h('code', { 'data-testid': 'actions-command' }, commandText(e.command))),
      e.output ? h('pre', { class: 'inbox-description', 'data-testid': 'actions-output' },
        e.output + (e.outputTruncated ? `\n${t('actions.truncated')}` : '')) : null);
  }
}

registerPage({
  id: 'actions',
  hash: 'actions',
  label: 'nav.actions',
  strings,
  rangePicker: false,
  create: () => new ActionsPage(),
});
