// The Inbox tab (#inbox): every alert as it fired and resolved, and what a
// channel's cap held back (/api/v1/inbox), newest first, for the recipient
// chosen in "Inbox of" (remembered in this browser; "everyone" shows every
// item), filtered by severity and unread; each item with its severity, what
// happened, the summary (and a run's summary) in the page's language, where,
// when, for whom, the diagnosis (probable cause, suggestion with the job's
// values, and folded: the evidence and the log templates), links to the
// GPU's charts, the job and its logs, and Mark
// read / unread; Mark all read; Load older. Refreshed every 5 s while shown;
// the tab carries the unread count of the chosen inbox on every page
// (polled every 15 s while hidden). The data shaping is inbox.model.js'.
//
// Summaries, labels, notes and recipient names are the server's
// (untrusted): they reach the page only as text nodes (dom.js h / setText).

import * as api from '../api.js';
import { h, retranslate, setText, translated } from '../dom.js';
import { dateTime, duration } from '../format.js';
import { lang, t } from '../i18n.js';
import { registerPage } from '../registry.js';
import { alertLinks, logExcerpt, ruleTitle, severityBadge, summaryText, whereParts } from './alerts.model.js';
import {
  SEVERITY_FILTERS, countsFrom, descriptionText, inboxDiagnosis, inboxParams, itemsFrom, kindBadge, mergeOlder,
  oldestId, recipientChoices, savedRecipient, stepsText, templateLineText, unreadBadge,
} from './inbox.model.js';
import strings from './inbox.i18n.js';

const INBOX = '/api/v1/inbox';
const PAGE_REFRESH_MS = 5000;
const BADGE_REFRESH_MS = 15000;
const RECIPIENT_KEY = 'vigil.inbox.recipient';

function load(key) {
  try { return localStorage.getItem(key) ?? ''; } catch { return ''; }
}
function save(key, v) {
  try { localStorage.setItem(key, v); } catch { /* storage disabled */ }
}

function badge(b) {
  return h('span', { class: `badge ${b.tone}` }, b.key ? t(b.key) : b.text);
}

class InboxPage {
  constructor(ranges) {
    this.ranges = ranges;
    this.visible = false;
    this.items = [];
    this.counts = null;
    this.choices = recipientChoices(null);
    this.recipient = load(RECIPIENT_KEY);
    this.severity = '';
    this.unreadOnly = false;
    this.more = false; // the last page was full: there may be older items
    this.apiMissing = false;
    this.error = null;
    this.timer = null;
    this.gen = 0;
    this.i18n = [];
    this.build();
    this.schedule(0);
  }

  T(key, tag = 'span', cls = null) {
    return translated(this.i18n, t, key, tag, cls);
  }

  build() {
    const T = this.T.bind(this);
    this.badge = h('span', { class: 'tab-badge', hidden: true, 'data-testid': 'inbox-badge' });
    this.note = h('div', { class: 'note', hidden: true, role: 'alert', 'data-testid': 'inbox-note' });
    this.whose = h('select', { class: 'input', name: 'recipient', 'data-testid': 'inbox-recipient',
      onchange: () => { this.recipient = this.whose.value; save(RECIPIENT_KEY, this.recipient); this.reload(); } });
    this.sev = h('select', { class: 'input', name: 'severity', 'data-testid': 'inbox-severity',
      onchange: () => { this.severity = this.sev.value; this.reload(); } });
    this.unread = h('input', { type: 'checkbox', 'data-testid': 'inbox-unread',
      onchange: () => { this.unreadOnly = this.unread.checked; this.reload(); } });
    this.allRead = h('button', { type: 'button', class: 'btn', 'data-testid': 'inbox-all-read',
      onclick: () => this.mark([], true) }, T('inbox.markAllRead'));
    this.countLine = h('span', { class: 'count', 'data-testid': 'inbox-counts' });
    this.list = h('ol', { class: 'inbox-list', 'data-testid': 'inbox-list' });
    this.empty = h('div', { class: 'jobs-empty', hidden: true, 'data-testid': 'inbox-empty' });
    this.olderBtn = h('button', { type: 'button', class: 'btn', hidden: true, 'data-testid': 'inbox-older',
      onclick: () => this.loadOlder() }, T('inbox.older'));
    const field = (key, control) => h('label', { class: 'field' }, T(key, 'span', 'field-label'), control);
    this.el = h('div', { class: 'jobs-page inbox-page', hidden: true }, this.note,
      h('section', { class: 'card jobs-list' },
        h('div', { class: 'jobs-head' }, h('h3', null, T('inbox.title'), this.countLine), T('inbox.hint', 'span', 'hint')),
        h('div', { class: 'filter-row' }, field('inbox.whose', this.whose), field('inbox.severity', this.sev),
          h('label', { class: 'field inline' }, this.unread, T('inbox.unreadOnly')), this.allRead),
        this.empty, this.list, this.olderBtn));
    this.fillSelects();
  }

  fillSelects() {
    this.whose.replaceChildren(...this.choices.map((c) => {
      const label = c.kind === 'all' ? t('inbox.everyone') : c.kind === 'team' ? t('inbox.team', { name: c.label }) : c.label;
      const o = h('option', null, label);
      o.value = c.value;
      return o;
    }));
    this.whose.value = this.recipient;
    this.sev.replaceChildren(...SEVERITY_FILTERS.map((s) => {
      const o = h('option', null, s ? t(`alerts.sev.${s}`) : t('inbox.allSeverities'));
      o.value = s;
      return o;
    }));
    this.sev.value = this.severity;
  }

  // Page hooks (registry.js) -------------------------------------------------

  show() {
    this.el.hidden = false;
    this.visible = true;
    this.render();
    this.schedule(0);
  }

  hide() {
    this.visible = false;
    this.el.hidden = true;
    this.schedule(BADGE_REFRESH_MS);
  }

  relabel() {
    retranslate(this.i18n, t);
    this.fillSelects();
    this.render();
  }

  onVisibility(hidden) {
    if (hidden) clearTimeout(this.timer);
    else this.schedule(0);
  }

  // Data ---------------------------------------------------------------------

  schedule(ms) {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.tick(), ms);
  }

  async tick() {
    if (document.hidden || this.apiMissing) return;
    const gen = ++this.gen;
    await this.refresh(gen).catch(() => {});
    if (gen === this.gen && !this.apiMissing) this.schedule(this.visible ? PAGE_REFRESH_MS : BADGE_REFRESH_MS);
  }

  reload() {
    this.items = [];
    this.schedule(0);
  }

  params(before = 0) {
    return inboxParams({ recipient: this.recipient, severity: this.severity, unreadOnly: this.unreadOnly, before });
  }

  async refresh(gen) {
    let answer;
    try {
      answer = await api.getJson(INBOX, this.params());
    } catch (e) {
      if (gen !== this.gen) return;
      this.apiMissing = e.status === 404;
      this.error = this.apiMissing ? t('inbox.apiMissing') : t('inbox.loadFailed', { err: e.message });
      this.render();
      return;
    }
    if (gen !== this.gen) return;
    this.error = null;
    const choices = recipientChoices(answer);
    if (JSON.stringify(choices) !== JSON.stringify(this.choices)) {
      this.choices = choices;
      this.recipient = savedRecipient(this.recipient, choices);
      this.fillSelects();
    }
    const fresh = itemsFrom(answer);
    // Keep the older pages already loaded below the newest one.
    const older = this.items.filter((i) => i.id < oldestId(fresh));
    this.items = mergeOlder(fresh, older);
    if (!older.length) this.more = fresh.length >= Number(this.params().limit);
    this.counts = countsFrom(answer);
    this.render();
  }

  async loadOlder() {
    try {
      const answer = await api.getJson(INBOX, this.params(oldestId(this.items)));
      const older = itemsFrom(answer);
      this.more = older.length >= Number(this.params().limit);
      this.items = mergeOlder(this.items, older);
      this.render();
    } catch (e) {
      this.error = t('inbox.loadFailed', { err: e.message });
      this.render();
    }
  }

  async mark(ids, read) {
    try {
      await api.sendJson('POST', `${INBOX}/read`, ids.length ? { recipient: this.recipient, ids, read } : { recipient: this.recipient, read });
      this.schedule(0);
    } catch (e) {
      this.error = t('inbox.markFailed', { err: e.message });
      this.render();
    }
  }

  // Rendering ----------------------------------------------------------------

  renderBadge() {
    const b = unreadBadge(this.counts);
    this.badge.hidden = b.hidden;
    setText(this.badge, b.hidden ? '' : String(b.n));
    this.badge.className = `tab-badge ${b.tone}`;
    const label = b.hidden ? '' : t('inbox.badge', { n: b.n });
    this.badge.title = label;
    this.badge.setAttribute('aria-label', label);
  }

  render() {
    this.renderBadge();
    this.note.hidden = !this.error;
    setText(this.note, this.error ?? '');
    if (!this.visible) return;
    const c = this.counts;
    setText(this.countLine, c ? t('inbox.counts', { unread: c.unread, total: c.total }) : '');
    this.allRead.disabled = !c || c.unread === 0;
    this.empty.hidden = this.items.length > 0;
    setText(this.empty, this.unreadOnly ? t('inbox.emptyUnread') : t('inbox.empty'));
    const now = Date.now();
    this.list.replaceChildren(...this.items.map((item) => this.itemView(item, now)));
    this.olderBtn.hidden = !this.more || this.items.length === 0;
  }

  // The probable cause and the suggestion on lines of their own; the
  // evidence and the log templates folded below them.
  diagnosisView(d) {
    if (!d) return null;
    const s = d.suggestion;
    const values = s && (s.current !== null || s.suggested !== null)
      ? t('inbox.diag.values', { p: s.parameter || '?', c: s.current ?? '?', s: s.suggested ?? '?' }) : '';
    const lines = d.templates.map((x) => templateLineText(x, t));
    return h('div', { class: 'inbox-diagnosis', 'data-testid': 'inbox-diagnosis' },
      d.cause ? h('div', { class: 'inbox-cause' }, t('inbox.diag.cause', { cause: d.cause })) : null,
      s ? h('div', { class: 'inbox-suggestion', 'data-testid': 'inbox-suggestion' },
        t('inbox.diag.suggestion', { text: s.text }), values ? h('span', { class: 'hint' }, ` (${values})`) : null) : null,
      d.evidence.length || lines.length ? h('details', { class: 'inbox-evidence' },
        h('summary', null, t('inbox.diag.more')),
        // (No list items: the inbox's own items are the page's <li>s.)
        d.evidence.length ? h('div', null, t('inbox.diag.evidence'),
          d.evidence.map((e) => h('div', { class: 'inbox-evidence-line' }, `· ${e}`))) : null,
        lines.length ? h('div', null, t('inbox.diag.templates'),
          h('pre', { class: 'inbox-templates', 'data-testid': 'inbox-templates' }, lines.join('\n'))) : null) : null);
  }

  itemView(item, now) {
    const a = item.alert;
    const links = alertLinks(a, now, this.ranges);
    const where = whereParts(a).map(([, text]) => text).join(' · ');
    const description = descriptionText(a, lang());
    const steps = stepsText(item, lang());
    const log = item.kind === 'resolved' ? [] : logExcerpt(a);
    const toggle = h('button', { type: 'button', class: 'btn small', 'data-testid': 'inbox-toggle',
      onclick: () => this.mark([item.id], !item.read) }, t(item.read ? 'inbox.markUnread' : 'inbox.markRead'));
    const link = (hash, key) => (hash ? h('a', { href: hash }, t(key)) : null);
    return h('li', { class: `inbox-item${item.read ? ' read' : ''}`, 'data-id': String(item.id), 'data-kind': item.kind },
      h('div', { class: 'inbox-line' }, badge(severityBadge(a.severity)), ' ', badge(kindBadge(item.kind)), ' ',
        h('strong', null, ruleTitle(a.rule)), where ? h('span', { class: 'hint' }, ` ${where}`) : null,
        h('span', { class: 'inbox-time', title: dateTime(item.atMs) },
          Number.isFinite(item.atMs) ? t('alerts.ago', { d: duration(Math.max(0, now - item.atMs) / 1000) }) : '–'),
        toggle),
      h('div', { class: 'inbox-summary' }, summaryText(a, lang())),
      description ? h('pre', { class: 'inbox-description' }, description) : null,
      steps ? h('div', { class: 'inbox-steps', 'data-testid': 'inbox-steps' }, t('inbox.steps', { steps })) : null,
      this.diagnosisView(inboxDiagnosis(item, lang())),
      log.length ? h('div', { class: 'inbox-log', 'data-testid': 'inbox-log' }, t('alerts.log', { n: log.length }),
        h('pre', null, log.join('\n'))) : null,
      item.note ? h('div', { class: 'inbox-note' }, t('inbox.heldBack', { note: item.note })) : null,
      h('div', { class: 'inbox-meta' },
        item.recipients.length ? h('span', { class: 'hint' }, t('inbox.for', { who: item.recipients.join(', ') })) : null,
        link(links.gpu, 'alerts.link.gpu'), link(links.job, 'alerts.link.job'), link(links.logs, 'alerts.link.logs')));
  }
}

registerPage({
  id: 'inbox',
  hash: 'inbox',
  label: 'nav.inbox',
  strings,
  rangePicker: false,
  create: (shell) => new InboxPage(shell.ranges),
});
