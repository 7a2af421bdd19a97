// The Alerts tab (#alerts&range=15m): the alerts firing, those pending and
// the resolved history (/api/v1/alerts/records?all=1), each with its
// severity, rule, where (node, GPU, job), summary in the page's language,
// value against threshold, since when, whether another alert mutes it, and
// links to the GPU's charts, the job and its logs; the silences
// (/api/v1/silences: each one's state, matchers, times, author and
// comment, with Expire on those in effect), a form to add one (from an
// alert's row, its matchers filled in, or New silence: matchers typed as
// `vigil silence add` takes them); under them, folded, every rule level of
// /api/v1/rules with its condition, threshold and health.
// Refreshed every 2 s while shown. On every page, the tab carries the count
// of firing alerts no other alert mutes (red with a critical one), polled
// every 5 s (with the page's refresh while it is shown). The data shaping
// is alerts.model.js'; this is the DOM.
//
// Labels, summaries, queries, matchers, comments, authors and errors are
// the server's or a person's (untrusted): they reach the page only as text
// nodes (dom.js h / setText) or input values, never as HTML.

import * as api from '../api.js';
import { h, retranslate, setText, translated } from '../dom.js';
import { dateTime, duration } from '../format.js';
import { lang, t } from '../i18n.js';
import { registerPage } from '../registry.js';
import { DataTable, columns } from '../table.js';
import {
  ACTIVE_COLUMNS, HISTORY_COLUMNS, RULE_COLUMNS, SILENCE_COLUMNS, SILENCE_DURATIONS, alertLinks, alertMatchers,
  alertResolvedMs, alertSections, alertStartMs, badgeTone, conditionText, firingCount, healthBadge, labelsText,
  matchersText, parseMatchers, relativeTime, ruleLevelFor, ruleStateBadge, ruleTitle, ruleTitleKey, overrideLines,
  perGpuLines, rulesFrom, severityBadge, silenceBody, silenceDurationMs, silenceExpirable, silenceStateBadge,
  diagnosisOf, logExcerpt, orderedTemplates, silencesFrom, summaryText, templateLine, templateMarks, thresholdText,
  valueText, whereParts,
} from './alerts.model.js';
import strings from './alerts.i18n.js';

const PAGE_REFRESH_MS = 2000;
const BADGE_REFRESH_MS = 5000;
const RECORDS = '/api/v1/alerts/records';
const SILENCES = '/api/v1/silences';
// The last "Created by" of the silence form, for the next one.
const AUTHOR_KEY = 'vigil.silence.createdBy';

function savedAuthor() {
  try { return localStorage.getItem(AUTHOR_KEY) ?? ''; } catch { return ''; }
}
function saveAuthor(v) {
  try { localStorage.setItem(AUTHOR_KEY, v); } catch { /* storage disabled */ }
}

function badge(b, extra = {}) {
  return h('span', { class: `badge ${b.tone}`, ...extra }, b.key ? t(b.key) : b.text);
}

// Seconds from `ms` to now as "5m ago".
function ago(ms, now) {
  return Number.isFinite(ms) ? t('alerts.ago', { d: duration((now - ms) / 1000) }) : '–';
}

class AlertsPage {
  // ranges: the picker's [[key, seconds], ...] (the links' ranges).
  constructor(ranges) {
    this.ranges = ranges;
    this.visible = false;
    this.records = null; // the latest ?all=1 answer, null before the first
    this.error = null;
    this.rules = null; // rulesFrom(/api/v1/rules), null before the first
    this.rulesError = null;
    this.api = null; // false once /api/v1/alerts/records answered 404: no more asking
    this.rulesApi = null;
    this.silences = null; // silencesFrom(/api/v1/silences), null before the first
    this.silencesError = null;
    this.silencesApi = null; // false once /api/v1/silences answered 404
    this.confirming = null; // the id of the silence whose Expire asks "sure?"
    this.expiring = null; // the id of the silence a DELETE is on its way for
    this.formAlert = null; // the row the form silences (null: New silence)
    this.active = null; // the badge's records (the active ones)
    this.timer = null;
    this.ctrl = null;
    this.gen = 0;
    this.i18n = [];
    this.build();
    this.schedule(0);
  }

  T(key, tag = 'span', cls = null) {
    return translated(this.i18n, t, key, tag, cls);
  }

  // -------------------------------------------------------------------------
  // Layout

  build() {
    const T = this.T.bind(this);
    this.note = h('div', { class: 'note', hidden: true, role: 'alert' });
    // The header's count, shown in the tab on every page (main.js puts it there).
    this.badge = h('span', { class: 'tab-badge', hidden: true, 'data-testid': 'alerts-badge' });

    const section = (name, titleKey, emptyKey, cols, hintKey = null) => {
      const count = h('span', { class: 'count' });
      const empty = h('div', { class: 'jobs-empty', 'data-testid': `alerts-${name}-empty` });
      const table = new DataTable({ T, tableClass: 'jobs-table alerts-table', testid: `alerts-${name}`, hidden: true,
        columns: columns('alerts.col.', cols) });
      const el = h('section', { class: `card jobs-list alerts-section alerts-${name}`, 'data-section': name },
        h('div', { class: 'jobs-head' }, h('h3', null, T(titleKey), count), hintKey ? T(hintKey, 'span', 'hint') : null),
        empty, table.el);
      return { el, count, empty, emptyKey, table };
    };
    this.firing = section('firing', 'alerts.firing', 'alerts.noFiring', ACTIVE_COLUMNS);
    this.pending = section('pending', 'alerts.pending', 'alerts.noPending', ACTIVE_COLUMNS, 'alerts.pendingHint');
    this.history = section('history', 'alerts.history', 'alerts.noHistory', HISTORY_COLUMNS, 'alerts.historyHint');

    this.rulesCount = h('span', { class: 'count' });
    this.rulesEmpty = h('div', { class: 'jobs-empty', hidden: true, 'data-testid': 'alerts-rules-empty' });
    this.rulesTable = new DataTable({ T, tableClass: 'jobs-table rules-table', testid: 'alerts-rules-table', hidden: true,
      columns: columns('alerts.rcol.', RULE_COLUMNS) });
    this.rulesView = h('details', { class: 'card jobs-list alerts-rules', 'data-testid': 'alerts-rules' },
      h('summary', { class: 'jobs-head' }, h('h3', null, T('alerts.rules'), this.rulesCount), T('alerts.rulesHint', 'span', 'hint')),
      this.rulesEmpty, this.rulesTable.el);

    this.buildSilences();
    this.buildForm();

    this.el = h('div', { class: 'jobs-page alerts-page', hidden: true }, this.note,
      this.firing.el, this.pending.el, this.silView, this.history.el, this.rulesView, this.dialog);
  }

  // The silences: a table, New silence, and a line saying what the last
  // add or expire did.
  buildSilences() {
    const T = this.T.bind(this);
    this.silCount = h('span', { class: 'count' });
    this.silResult = h('div', { class: 'sil-result', role: 'status', hidden: true, 'data-testid': 'silence-result' });
    this.silEmpty = h('div', { class: 'jobs-empty', 'data-testid': 'alerts-silences-empty' });
    this.silTable = new DataTable({ T, tableClass: 'jobs-table silences-table', testid: 'alerts-silences', hidden: true,
      columns: columns('alerts.scol.', SILENCE_COLUMNS) });
    const add = h('button', { type: 'button', class: 'btn', 'data-testid': 'new-silence', onclick: () => this.openForm(null) },
      T('alerts.newSilence'));
    this.silView = h('section', { class: 'card jobs-list alerts-section alerts-silences', 'data-section': 'silences' },
      h('div', { class: 'jobs-head' }, h('h3', null, T('alerts.silences'), this.silCount),
        T('alerts.silencesHint', 'span', 'hint'), add),
      this.silResult, this.silEmpty, this.silTable.el);
  }

  // The form of a new silence, in a modal <dialog> (Escape closes it).
  buildForm() {
    const T = this.T.bind(this);
    const field = (labelKey, control, cls = 'field') => h('label', { class: cls }, T(labelKey, 'span', 'field-label'), control);
    const f = {};
    f.title = h('h3', { class: 'sil-title' });
    f.alert = h('span', { class: 'sil-alert', 'data-testid': 'silence-form-alert' });
    f.alertRow = h('div', { class: 'sil-for', hidden: true }, T('alerts.form.alert', 'span', 'field-label'), ' ', f.alert);
    f.matchers = h('input', { class: 'input sil-matchers', name: 'matchers', type: 'text', spellcheck: 'false',
      autocomplete: 'off', 'aria-describedby': 'sil-matchers-hint', oninput: () => this.formError(f.matchersError, '') });
    f.matchersHint = T('alerts.form.matchersHint', 'div', 'sil-hint');
    f.matchersHint.id = 'sil-matchers-hint';
    f.matchersError = h('div', { class: 'sil-error', role: 'alert', hidden: true, 'data-testid': 'matchers-error' });
    f.duration = h('select', { class: 'input', name: 'duration', onchange: () => this.formDuration() });
    for (const [choice] of SILENCE_DURATIONS) {
      const o = T(`alerts.dur.${choice}`, 'option');
      o.value = choice;
      f.duration.append(o);
    }
    const other = T('alerts.dur.custom', 'option');
    other.value = 'custom';
    f.duration.append(other);
    f.custom = h('input', { class: 'input sil-custom', name: 'custom', type: 'text', placeholder: '90m', spellcheck: 'false',
      autocomplete: 'off', oninput: () => this.formDuration() });
    f.customField = h('label', { class: 'field', hidden: true }, T('alerts.form.custom', 'span', 'field-label'), f.custom,
      T('alerts.form.customHint', 'span', 'sil-hint'));
    f.ends = h('div', { class: 'sil-ends', 'data-testid': 'silence-ends' });
    f.comment = h('input', { class: 'input', name: 'comment', type: 'text', autocomplete: 'off' });
    f.createdBy = h('input', { class: 'input', name: 'createdBy', type: 'text', autocomplete: 'off' });
    f.refusedText = h('span', { class: 'sil-server-error', 'data-testid': 'silence-server-error' });
    f.refused = h('div', { class: 'sil-error', role: 'alert', hidden: true, 'data-testid': 'silence-error' },
      T('alerts.form.refused'), ' ', f.refusedText);
    f.submit = h('button', { type: 'submit', class: 'btn primary', 'data-testid': 'silence-submit' });
    f.cancel = h('button', { type: 'button', class: 'btn', onclick: () => this.dialog.close() }, T('alerts.cancel'));
    f.form = h('form', { class: 'sil-form', novalidate: true, onsubmit: (e) => { e.preventDefault(); this.submitForm(); } },
      f.title, f.alertRow,
      field('alerts.form.matchers', f.matchers, 'field grow'), f.matchersHint, f.matchersError,
      h('div', { class: 'filter-row' }, field('alerts.form.duration', f.duration), f.customField),
      f.ends,
      h('div', { class: 'filter-row' }, field('alerts.form.comment', f.comment, 'field grow'),
        field('alerts.form.createdBy', f.createdBy)),
      f.refused,
      h('div', { class: 'sil-buttons' }, f.cancel, f.submit));
    this.f = f;
    this.dialog = h('dialog', { class: 'card sil-dialog', 'data-testid': 'silence-form', 'aria-labelledby': 'sil-title' }, f.form);
    f.title.id = 'sil-title';
    this.sending = false;
    this.labelForm();
  }

  // -------------------------------------------------------------------------
  // Page hooks (registry.js)

  show() {
    this.el.hidden = false;
    if (this.visible) { this.render(); return; }
    this.visible = true;
    this.render();
    this.schedule(0);
  }

  hide() {
    this.visible = false;
    if (this.dialog.open) this.dialog.close();
    this.el.hidden = true;
    this.gen++;
    this.ctrl?.abort();
    this.schedule(BADGE_REFRESH_MS);
  }

  relabel() {
    retranslate(this.i18n, t);
    this.labelForm();
    this.renderBadge();
    if (this.visible) this.render();
  }

  // The browser tab hidden: no polling (the badge's neither); shown: at once.
  onVisibility(hidden) {
    if (hidden) {
      clearTimeout(this.timer);
      this.gen++;
      this.ctrl?.abort();
    } else {
      this.schedule(0);
    }
  }

  // -------------------------------------------------------------------------
  // Data: the page's records and rules every 2 s while shown, else the
  // badge's every 5 s; nothing while the browser tab is hidden, nothing more
  // once the server says it has no alerts API.

  schedule(ms) {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.tick(), ms);
  }

  async tick() {
    clearTimeout(this.timer);
    this.timer = null;
    if (document.hidden || this.api === false) return;
    const gen = ++this.gen;
    await (this.visible ? this.refresh() : this.refreshBadge()).catch(() => {});
    if (gen !== this.gen || document.hidden || this.api === false) return;
    this.schedule(this.visible ? PAGE_REFRESH_MS : BADGE_REFRESH_MS);
  }

  fresh() {
    this.ctrl?.abort();
    this.ctrl = new AbortController();
    return this.ctrl;
  }

  async refreshBadge() {
    const ctrl = this.fresh();
    try {
      const recs = await api.getJson(RECORDS, null, ctrl.signal);
      if (ctrl.signal.aborted) return;
      this.active = Array.isArray(recs) ? recs : [];
      this.api = true;
    } catch (e) {
      if (e.name === 'AbortError') return;
      if (e.status === 404) this.api = false;
    }
    this.renderBadge();
  }

  async refresh() {
    const ctrl = this.fresh();
    const [recs, rules, silences] = await Promise.allSettled([
      api.getJson(RECORDS, { all: '1' }, ctrl.signal),
      this.rulesApi === false ? Promise.resolve(null) : api.getJson('/api/v1/rules', null, ctrl.signal),
      this.silencesApi === false ? Promise.resolve(null) : api.getJson(SILENCES, null, ctrl.signal),
    ]);
    if (ctrl.signal.aborted || !this.visible) return;
    if (recs.status === 'fulfilled') {
      this.records = Array.isArray(recs.value) ? recs.value : [];
      this.active = this.records.filter((r) => r?.state !== 'resolved');
      this.error = null;
      this.api = true;
    } else {
      this.error = recs.reason;
      if (recs.reason?.status === 404) this.api = false;
    }
    if (rules.status === 'fulfilled') {
      if (rules.value) this.rules = rulesFrom(rules.value);
      this.rulesError = null;
    } else {
      this.rulesError = rules.reason;
      if (rules.reason?.status === 404) this.rulesApi = false;
    }
    if (silences.status === 'fulfilled') {
      if (silences.value) this.silences = silencesFrom(silences.value);
      this.silencesError = null;
    } else {
      this.silencesError = silences.reason;
      if (silences.reason?.status === 404) this.silencesApi = false;
    }
    this.render();
    this.renderBadge();
  }

  // -------------------------------------------------------------------------
  // Rendering

  renderBadge() {
    const { count, critical, worst } = firingCount(this.api === false ? [] : this.active);
    this.badge.hidden = count === 0;
    setText(this.badge, count ? String(count) : '');
    this.badge.className = `tab-badge ${badgeTone(worst)}`;
    this.badge.dataset.severity = worst;
    // Not colour alone: the count, and on hover (and to a screen reader) what it counts.
    const label = count === 0 ? '' : critical ? t('alerts.badgeCritical', { n: count, c: critical })
      : count === 1 ? t('alerts.badgeOne') : t('alerts.badge', { n: count });
    if (label) {
      this.badge.title = label;
      this.badge.setAttribute('aria-label', label);
    } else {
      this.badge.removeAttribute('title');
      this.badge.removeAttribute('aria-label');
    }
  }

  render() {
    if (!this.visible) return;
    const missing = this.api === false;
    const e = this.error;
    const text = missing ? t('alerts.apiMissing') : e ? t('alerts.loadFailed', { err: e.message }) : '';
    setText(this.note, text);
    this.note.hidden = !text;
    const s = alertSections(this.records ?? []);
    const now = Date.now();
    this.renderSection(this.firing, s.firing, now, false);
    this.renderSection(this.pending, s.pending, now, false);
    this.renderSection(this.history, s.history, now, true);
    this.renderSilences(now);
    this.renderRules();
  }

  renderSection(sec, recs, now, history) {
    setText(sec.count, recs.length ? String(recs.length) : '');
    // Before the first answer: loading (or nothing, when the note says why).
    const unknown = this.records === null;
    const quiet = unknown && (this.error || this.api === false);
    setText(sec.empty, unknown ? (quiet ? '' : t('loading')) : t(sec.emptyKey));
    sec.empty.hidden = unknown ? !!quiet : recs.length > 0;
    sec.table.el.hidden = recs.length === 0;
    const language = lang();
    const rows = recs.map((r) => {
      const level = ruleLevelFor(this.rules, r);
      return {
        id: String(r.id ?? ''), rule: String(r.rule ?? ''), severity: String(r.severity ?? ''), state: String(r.state ?? ''),
        known: !!ruleTitleKey(r.rule), title: ruleTitle(r.rule), inhibited: !!r.inhibited, silenced: !!r.silenced,
        matchers: history || this.silencesApi === false ? null : alertMatchers(r),
        where: whereParts(r), summary: summaryText(r, language), log: logExcerpt(r),
        diagnosis: diagnosisOf(r, language), value: valueText(r, level),
        start: alertStartMs(r), resolved: alertResolvedMs(r), labels: labelsText(r),
        links: alertLinks(r, now, this.ranges),
      };
    });
    // Rebuilt only when something shown changed (the times since and the
    // links' ranges move with the clock: updated in place below): a row
    // replaced every 2 s under the pointer can swallow a click, and a
    // selection in it (to copy a summary) would be lost.
    const shown = rows.map((r) => ({ ...r, links: Object.keys(r.links).filter((k) => r.links[k]) }));
    sec.table.update(JSON.stringify([language, shown]), () => rows.map((r) => this.alertRow(r, history)));
    [...sec.table.body.children].forEach((tr, i) => {
      const r = rows[i];
      if (!r) return;
      const since = tr.querySelector('.alert-since');
      if (since) setText(since, ago(r.start, now));
      for (const a of tr.querySelectorAll('a[data-link]')) {
        const href = r.links[a.dataset.link];
        if (href && a.getAttribute('href') !== href) a.setAttribute('href', href);
      }
    });
  }

  // The probable cause on a line of its own, the rest folded: every cause
  // with its evidence, the suggestion with the job's values, the log templates.
  diagnosisBlock(d) {
    if (!d) return null;
    const s = d.suggestion;
    const values = s && (s.current !== null || s.suggested !== null)
      ? t('alerts.diag.values', { p: s.parameter || '?', c: s.current ?? '?', s: s.suggested ?? '?' }) : '';
    return h('details', { class: 'alert-diagnosis', 'data-testid': 'alert-diagnosis' },
      h('summary', null, d.summary || t('alerts.diag.title')),
      d.causes.length ? h('ol', { class: 'alert-causes' }, d.causes.map((c) => h('li', { 'data-cause': c.id },
        c.confidence === null ? c.title : `${c.title} (${c.confidence}%)`,
        c.evidence.length ? h('ul', null, c.evidence.map((e) => h('li', null, e))) : null,
        c.source ? h('a', { href: c.source, target: '_blank', rel: 'noopener noreferrer' }, t('alerts.diag.source')) : null))) : null,
      s && s.text ? h('div', { class: 'alert-suggestion', 'data-testid': 'alert-suggestion' },
        h('b', null, t('alerts.diag.suggestion')), ' ', s.text, values ? h('div', { class: 'job-sub' }, values) : null) : null,
      d.templates.length ? h('pre', { class: 'alert-templates' },
        orderedTemplates(d.templates).map((x) => templateLine(x.count,
          templateMarks(x).map((m) => t(`alerts.diag.${m}`)), x.text)).join('\n')) : null);
  }

  alertRow(r, history) {
    const sev = severityBadge(r.severity);
    const link = (kind, key) => (r.links[kind]
      ? h('a', { class: 'alert-link', href: r.links[kind], 'data-link': kind }, t(key)) : null);
    const lasted = Number.isFinite(r.start) && Number.isFinite(r.resolved)
      ? t('alerts.lasted', { d: duration((r.resolved - r.start) / 1000) }) : '';
    return h('tr', { class: `alert-row ${sev.tone}`, 'data-id': r.id, 'data-rule': r.rule, 'data-severity': r.severity,
      'data-state': r.state, 'data-inhibited': r.inhibited ? 'true' : null, 'data-silenced': r.silenced ? 'true' : null,
      title: r.labels || null },
    h('td', { class: 'nowrap' }, badge(sev, { 'data-severity': r.severity })),
    h('td', { class: 'alert-cell-name' },
      h('div', { class: 'alert-title' }, r.title,
        r.inhibited ? h('span', { class: 'badge grey alert-muted', title: t('alerts.mutedTitle'), 'data-testid': 'alert-muted' },
          t('alerts.muted')) : null,
        r.silenced ? h('span', { class: 'badge grey alert-muted', title: t('alerts.silencedTitle'), 'data-testid': 'alert-silenced' },
          t('alerts.silenced')) : null),
      r.known ? h('div', { class: 'job-sub alert-rule' }, r.rule) : null),
    h('td', { class: 'alert-where' }, r.where.map(([k, v], i) => [i ? ' · ' : null,
      h('span', { class: `alert-where-${k}`, title: k }, v)])),
    h('td', { class: 'alert-summary' }, r.summary, this.diagnosisBlock(r.diagnosis), r.log.length
      ? h('details', { class: 'alert-log', 'data-testid': 'alert-log' },
        h('summary', null, t('alerts.log', { n: r.log.length })), h('pre', null, r.log.join('\n')))
      : null),
    h('td', { class: 'nowrap alert-value' }, r.value),
    history
      ? h('td', { class: 'nowrap alert-started' }, dateTime(r.start))
      : h('td', { class: 'nowrap alert-since', title: dateTime(r.start) }, ''),
    history ? h('td', { class: 'nowrap alert-resolved' }, dateTime(r.resolved),
      lasted ? h('div', { class: 'job-sub' }, lasted) : null) : null,
    h('td', { class: 'alert-links' }, link('gpu', 'alerts.link.gpu'), link('job', 'alerts.link.job'),
      link('logs', 'alerts.link.logs')),
    // (No Silence where the server has no silences API.)
    history ? null : h('td', { class: 'nowrap alert-actions' }, r.matchers
      ? h('button', { type: 'button', class: 'btn small', 'data-testid': 'silence-alert', title: t('alerts.silenceTitle'),
        onclick: () => this.openForm(r) }, t('alerts.silence')) : null));
  }

  // -------------------------------------------------------------------------
  // Silences

  renderSilences(now) {
    const list = this.silences ?? [];
    this.silView.hidden = this.silencesApi === false || this.api === false;
    setText(this.silCount, list.length ? String(list.length) : '');
    const err = this.silencesError;
    let empty = '';
    if (err) empty = t('alerts.silencesFailed', { err: err.message });
    else if (this.silences === null) empty = this.api === false || this.error ? '' : t('loading');
    else if (!list.length) empty = t('alerts.noSilences');
    setText(this.silEmpty, empty);
    this.silEmpty.hidden = !empty;
    this.silTable.el.hidden = list.length === 0;
    const key = JSON.stringify([lang(), list, this.confirming, this.expiring]);
    this.silTable.update(key, () => list.map((s) => this.silenceRow(s)));
    // The relative times move with the clock: in place.
    [...this.silTable.body.children].forEach((tr, i) => {
      const s = list[i];
      if (!s) return;
      for (const [cls, ms] of [['.sil-starts-rel', s.startsAt], ['.sil-ends-rel', s.endsAt]]) {
        const el = tr.querySelector(cls);
        const rel = relativeTime(ms, now);
        if (el) setText(el, rel ? t(...rel) : '–');
      }
    });
  }

  silenceRow(s) {
    const when = (cls, ms) => h('td', { class: 'nowrap' }, h('div', { class: cls }, ''),
      h('div', { class: 'job-sub' }, dateTime(ms)));
    let actions = null;
    if (silenceExpirable(s) && this.confirming === s.id) {
      const busy = this.expiring === s.id;
      actions = h('div', { class: 'sil-confirm' }, h('span', { class: 'sil-ask' }, t('alerts.expireAsk')),
        h('button', { type: 'button', class: 'btn small danger', 'data-testid': 'expire-confirm', disabled: busy,
          onclick: () => this.expire(s) }, t('alerts.expireYes')),
        h('button', { type: 'button', class: 'btn small', 'data-testid': 'expire-cancel', disabled: busy,
          onclick: () => { this.confirming = null; this.renderSilences(Date.now()); } }, t('alerts.cancel')));
    } else if (silenceExpirable(s)) {
      actions = h('button', { type: 'button', class: 'btn small', 'data-testid': 'expire', onclick: () => {
        this.confirming = s.id;
        this.renderSilences(Date.now());
        this.silTable.body.querySelector('[data-testid=expire-confirm]')?.focus();
      } }, t('alerts.expire'));
    }
    const state = silenceStateBadge(s.state);
    return h('tr', { class: `silence-row ${s.state}`, 'data-id': s.id, 'data-state': s.state },
      h('td', { class: 'nowrap' }, badge(state, { 'data-state': s.state })),
      h('td', { class: 'sil-matchers-cell' }, h('code', { class: 'sil-matchers-text' }, matchersText(s.matchers)),
        h('div', { class: 'job-sub sil-id' }, s.id)),
      when('sil-starts-rel', s.startsAt),
      when('sil-ends-rel', s.endsAt),
      h('td', { class: 'sil-author' }, s.createdBy),
      h('td', { class: 'sil-comment' }, s.comment),
      h('td', { class: 'nowrap sil-actions' }, actions));
  }

  // What the last add or expire did (ok: false says it failed), as text.
  result(text, ok) {
    setText(this.silResult, text);
    this.silResult.className = `sil-result ${ok ? 'ok' : 'bad'}`;
    this.silResult.hidden = !text;
  }

  async expire(s) {
    if (this.expiring) return;
    this.expiring = s.id;
    this.renderSilences(Date.now());
    try {
      const answer = await api.sendJson('DELETE', `/api/v1/silence/${encodeURIComponent(s.id)}`);
      // The answer is the silence, expired: shown at once, not at the next refresh.
      const [now] = silencesFrom([answer]);
      if (now && this.silences) this.silences = this.silences.map((x) => (x.id === now.id ? now : x));
      this.result(t('alerts.expired', { id: s.id }), true);
    } catch (e) {
      this.result(t('alerts.expireFailed', { id: s.id, err: e.message }), false);
    } finally {
      this.expiring = null;
      this.confirming = null;
    }
    this.render();
    if (this.visible) this.schedule(0);
  }

  // The form's texts that depend on what it is for (relabel() calls it).
  labelForm() {
    const f = this.f;
    setText(f.title, t(this.formAlert ? 'alerts.form.titleAlert' : 'alerts.newSilence'));
    setText(f.submit, t(this.sending ? 'alerts.form.sending' : 'alerts.form.submit'));
    f.comment.placeholder = t('alerts.form.commentHint');
    if (this.formAlert) setText(f.alert, [this.formAlert.title, ...this.formAlert.where.map(([, v]) => v)].join(' · '));
    if (this.dialog?.open) this.formDuration();
    const me = f.matchersError;
    if (!me.hidden && me.dataset.key) setText(me, t(me.dataset.key, JSON.parse(me.dataset.vars ?? '{}')));
  }

  formError(el, text, key = null, vars = null) {
    setText(el, text);
    el.hidden = !text;
    if (key) { el.dataset.key = key; el.dataset.vars = JSON.stringify(vars ?? {}); } else { delete el.dataset.key; }
  }

  // The duration chosen ('' when the custom one is not valid) and the end it
  // gives, under the choice.
  formDuration() {
    const f = this.f;
    const custom = f.duration.value === 'custom';
    f.customField.hidden = !custom;
    const text = custom ? f.custom.value.trim() : SILENCE_DURATIONS.find(([c]) => c === f.duration.value)?.[1] ?? '';
    const ms = silenceDurationMs(text);
    let line = '';
    if (Number.isFinite(ms)) line = t('alerts.form.ends', { t: dateTime(Date.now() + ms), d: duration(ms / 1000) });
    else if (text) line = t('alerts.form.badDuration', { text });
    setText(f.ends, line);
    f.ends.className = `sil-ends${text && !Number.isFinite(ms) ? ' bad' : ''}`;
    return Number.isFinite(ms) ? text : '';
  }

  // Opens the form: for an alert's row (its matchers filled in), or empty.
  openForm(row) {
    const f = this.f;
    this.formAlert = row ? { title: row.title, where: row.where } : null;
    f.alertRow.hidden = !row;
    f.matchers.value = row ? matchersText(row.matchers) : '';
    f.duration.value = SILENCE_DURATIONS[0][0];
    f.custom.value = '';
    f.comment.value = '';
    f.createdBy.value = savedAuthor();
    this.formError(f.matchersError, '');
    setText(f.refusedText, '');
    f.refused.hidden = true;
    this.sending = false;
    f.submit.disabled = false;
    this.labelForm();
    this.formDuration();
    if (!this.dialog.open) this.dialog.showModal();
    (row ? f.comment : f.matchers).focus();
  }

  async submitForm() {
    const f = this.f;
    if (this.sending) return;
    f.refused.hidden = true;
    const parsed = parseMatchers(f.matchers.value);
    if (parsed.error) {
      this.formError(f.matchersError, t(parsed.error.key, parsed.error.vars), parsed.error.key, parsed.error.vars);
      f.matchers.focus();
      return;
    }
    this.formError(f.matchersError, '');
    const dur = this.formDuration();
    if (!dur) {
      if (f.duration.value === 'custom') {
        setText(f.ends, t('alerts.form.badDuration', { text: f.custom.value.trim() }));
        f.ends.className = 'sil-ends bad';
        f.custom.focus();
      }
      return;
    }
    const createdBy = f.createdBy.value.trim();
    saveAuthor(createdBy);
    this.sending = true;
    f.submit.disabled = true;
    this.labelForm();
    try {
      const answer = await api.sendJson('POST', SILENCES, silenceBody({ matchers: parsed.matchers, duration: dur,
        comment: f.comment.value, createdBy }));
      this.dialog.close();
      this.result(t('alerts.added', { id: String(answer?.silenceID ?? '') }), true);
      if (this.visible) this.schedule(0);
    } catch (e) {
      // The server's message, verbatim (it names the bad field); over the
      // silences if the form was closed meanwhile.
      setText(f.refusedText, e.message);
      f.refused.hidden = false;
      if (!this.dialog.open) this.result(`${t('alerts.form.refused')} ${e.message}`, false);
    } finally {
      this.sending = false;
      f.submit.disabled = false;
      this.labelForm();
    }
  }

  renderRules() {
    const rules = this.rules ?? [];
    this.rulesView.hidden = this.rulesApi === false || this.api === false;
    setText(this.rulesCount, rules.length ? String(rules.length) : '');
    const err = this.rulesError;
    let empty = '';
    if (err) empty = t('alerts.rulesFailed', { err: err.message });
    else if (this.rules === null) empty = t('loading');
    else if (!rules.length) empty = t('alerts.noRules');
    setText(this.rulesEmpty, empty);
    this.rulesEmpty.hidden = !empty;
    this.rulesTable.el.hidden = rules.length === 0;
    const key = JSON.stringify([lang(), rules]);
    this.rulesTable.update(key, () => rules.map((r) => {
      const state = ruleStateBadge(r.state);
      const health = healthBadge(r.health);
      const thr = conditionText(r), clr = thresholdText(r, 'clear');
      return h('tr', { class: `rule-row${r.enabled ? '' : ' disabled'}`, 'data-rule': r.name, 'data-severity': r.severity },
        h('td', { class: 'alert-cell-name' }, h('div', { class: 'alert-title' }, ruleTitle(r.name)),
          ruleTitleKey(r.name) ? h('div', { class: 'job-sub alert-rule' }, r.name) : null),
        h('td', { class: 'nowrap' }, badge(severityBadge(r.severity))),
        h('td', { class: 'nowrap rule-enabled' }, r.enabled ? t('alerts.enabled') : t('alerts.disabled')),
        h('td', { class: 'rule-query' }, h('code', null, r.query)),
        h('td', { class: 'nowrap rule-for' }, Number.isFinite(r.duration) ? duration(r.duration) : '–',
          r.keepFiringFor > 0 ? h('div', { class: 'job-sub' }, t('alerts.keepFiring', { d: duration(r.keepFiringFor) })) : null),
        h('td', { class: 'nowrap rule-threshold' }, thr || '–', ...subLines([...overrideLines(r), ...perGpuLines(r)])),
        h('td', { class: 'nowrap rule-clear' }, clr || '–'),
        h('td', { class: 'nowrap' }, badge(state, { 'data-state': r.state })),
        h('td', { class: 'rule-health' }, badge(health, { 'data-health': r.health }),
          r.lastError ? h('div', { class: 'rule-error' }, r.lastError) : null));
    }));
  }
}

// Lines under a cell's value, at most 9 (the rest counted).
function subLines(lines, max = 9) {
  const shown = lines.length > max ? lines.slice(0, max - 1) : lines;
  const out = shown.map((l) => h('div', { class: 'job-sub rule-sub' }, l));
  if (shown.length < lines.length) out.push(h('div', { class: 'job-sub rule-sub' }, t('alerts.more', { n: lines.length - shown.length })));
  return out;
}

registerPage({
  id: 'alerts',
  hash: 'alerts',
  label: 'nav.alerts',
  strings,
  rangePicker: false, // the alerts are now's; each link picks its own range
  create: (shell) => new AlertsPage(shell.ranges),
});
