// The Alerts tab (#alerts&range=15m): the alerts firing, those pending and
// the resolved history (/api/v1/alerts/records?all=1), each with its
// severity, rule, where (node, GPU, job), summary in the page's language,
// value against threshold, since when, whether another alert mutes it, and
// links to the GPU's charts, the job and its logs; under them, folded, every
// rule level of /api/v1/rules with its condition, threshold and health.
// Refreshed every 2 s while shown. On every page, the tab carries the count
// of firing alerts no other alert mutes (red with a critical one), polled
// every 5 s (with the page's refresh while it is shown). The data shaping
// is alerts.model.js'; this is the DOM.
//
// Labels, summaries, queries and errors are the server's (untrusted): they
// reach the page only as text nodes (dom.js h / setText), never as HTML.

import * as api from '../api.js';
import { h, retranslate, setText, translated } from '../dom.js';
import { dateTime, duration } from '../format.js';
import { lang, t } from '../i18n.js';
import { registerPage } from '../registry.js';
import { DataTable, columns } from '../table.js';
import {
  ACTIVE_COLUMNS, HISTORY_COLUMNS, RULE_COLUMNS, alertLinks, alertResolvedMs, alertSections, alertStartMs, badgeTone,
  conditionText, firingCount, healthBadge, labelsText, ruleLevelFor, ruleStateBadge, ruleTitle, ruleTitleKey,
  overrideLines, perGpuLines, rulesFrom, severityBadge, summaryText, thresholdText, valueText, whereParts,
} from './alerts.model.js';
import strings from './alerts.i18n.js';

const PAGE_REFRESH_MS = 2000;
const BADGE_REFRESH_MS = 5000;
const RECORDS = '/api/v1/alerts/records';

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

    this.el = h('div', { class: 'jobs-page alerts-page', hidden: true }, this.note,
      this.firing.el, this.pending.el, this.history.el, this.rulesView);
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
    this.el.hidden = true;
    this.gen++;
    this.ctrl?.abort();
    this.schedule(BADGE_REFRESH_MS);
  }

  relabel() {
    retranslate(this.i18n, t);
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
    const [recs, rules] = await Promise.allSettled([
      api.getJson(RECORDS, { all: '1' }, ctrl.signal),
      this.rulesApi === false ? Promise.resolve(null) : api.getJson('/api/v1/rules', null, ctrl.signal),
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
        known: !!ruleTitleKey(r.rule), title: ruleTitle(r.rule), inhibited: !!r.inhibited,
        where: whereParts(r), summary: summaryText(r, language), value: valueText(r, level),
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

  alertRow(r, history) {
    const sev = severityBadge(r.severity);
    const link = (kind, key) => (r.links[kind]
      ? h('a', { class: 'alert-link', href: r.links[kind], 'data-link': kind }, t(key)) : null);
    const lasted = Number.isFinite(r.start) && Number.isFinite(r.resolved)
      ? t('alerts.lasted', { d: duration((r.resolved - r.start) / 1000) }) : '';
    return h('tr', { class: `alert-row ${sev.tone}`, 'data-id': r.id, 'data-rule': r.rule, 'data-severity': r.severity,
      'data-state': r.state, 'data-inhibited': r.inhibited ? 'true' : null, title: r.labels || null },
    h('td', { class: 'nowrap' }, badge(sev, { 'data-severity': r.severity })),
    h('td', { class: 'alert-cell-name' },
      h('div', { class: 'alert-title' }, r.title,
        r.inhibited ? h('span', { class: 'badge grey alert-muted', title: t('alerts.mutedTitle'), 'data-testid': 'alert-muted' },
          t('alerts.muted')) : null),
      r.known ? h('div', { class: 'job-sub alert-rule' }, r.rule) : null),
    h('td', { class: 'alert-where' }, r.where.map(([k, v], i) => [i ? ' · ' : null,
      h('span', { class: `alert-where-${k}`, title: k }, v)])),
    h('td', { class: 'alert-summary' }, r.summary),
    h('td', { class: 'nowrap alert-value' }, r.value),
    history
      ? h('td', { class: 'nowrap alert-started' }, dateTime(r.start))
      : h('td', { class: 'nowrap alert-since', title: dateTime(r.start) }, ''),
    history ? h('td', { class: 'nowrap alert-resolved' }, dateTime(r.resolved),
      lasted ? h('div', { class: 'job-sub' }, lasted) : null) : null,
    h('td', { class: 'alert-links' }, link('gpu', 'alerts.link.gpu'), link('job', 'alerts.link.job'),
      link('logs', 'alerts.link.logs')));
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
