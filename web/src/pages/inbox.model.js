// The Inbox tab's data shaping (no DOM): /api/v1/inbox's items normalised,
// the request's parameters from the filters, each item's kind as a badge,
// the tab's unread count, the "whose inbox" choices, the saved choice, and
// each item's diagnosis. inbox.js renders it.

import { diagnosisOf, orderedTemplates, templateLine, templateMarks } from './alerts.model.js';

export const KINDS = ['firing', 'resolved', 'held_back'];
export const SEVERITY_FILTERS = ['', 'critical', 'warning', 'info'];
export const PAGE_SIZE = 50;

const KIND_TONES = { firing: 'red', resolved: 'green', held_back: 'amber' };

// The query of GET /api/v1/inbox for the filters (and an older page).
export function inboxParams({ recipient = '', severity = '', unreadOnly = false, before = 0, limit = PAGE_SIZE } = {}) {
  const p = { limit: String(limit) };
  if (recipient) p.recipient = recipient;
  if (SEVERITY_FILTERS.includes(severity) && severity) p.severity = severity;
  if (unreadOnly) p.unread = '1';
  if (Number.isInteger(before) && before > 0) p.before = String(before);
  return p;
}

const str = (v) => (typeof v === 'string' ? v : '');
const int = (v) => (Number.isInteger(v) ? v : 0);

// The answer's items, each {id, kind, atMs, read, recipients, note, alert};
// entries without a numeric id are dropped.
export function itemsFrom(answer) {
  const items = answer?.data?.items;
  if (!Array.isArray(items)) return [];
  return items.filter((i) => i && Number.isInteger(i.id) && i.id > 0).map((i) => ({
    id: i.id,
    kind: str(i.kind),
    atMs: Number.isFinite(i.at_ms) ? i.at_ms : Date.parse(str(i.at)),
    read: i.read === true,
    recipients: Array.isArray(i.recipients) ? i.recipients.filter((r) => typeof r === 'string') : [],
    note: str(i.note),
    alert: i.alert && typeof i.alert === 'object' ? i.alert : {},
  }));
}

// {total, unread, critical, warning, info} (unread by severity).
export function countsFrom(answer) {
  const c = answer?.data?.counts ?? {};
  const by = c.unread_by_severity ?? {};
  return { total: int(c.total), unread: int(c.unread), critical: int(by.critical), warning: int(by.warning), info: int(by.info) };
}

// [{value, label, kind}]: "" (everyone) first, then the configured people
// and teams by name.
export function recipientChoices(answer) {
  const list = answer?.data?.recipients;
  const out = [{ value: '', label: '', kind: 'all' }];
  if (!Array.isArray(list)) return out;
  const seen = new Set();
  for (const r of list) {
    if (!r || typeof r.name !== 'string' || !r.name || seen.has(r.name)) continue;
    seen.add(r.name);
    out.push({ value: r.name, label: r.name, kind: r.kind === 'team' ? 'team' : 'person' });
  }
  return out;
}

// The badge of an item's kind: {tone, key}; unknown kinds grey, as written.
export function kindBadge(kind) {
  return KINDS.includes(kind) ? { tone: KIND_TONES[kind], key: `inbox.kind.${kind}` } : { tone: 'grey', key: null, text: String(kind ?? '') };
}

// The tab's badge: the unread count, its tone that of the Alerts tab's
// badge (crit with a critical unread, warn with a warning, info otherwise);
// hidden at 0.
export function unreadBadge(counts) {
  const n = counts?.unread ?? 0;
  return { n, tone: counts?.critical ? 'crit' : counts?.warning ? 'warn' : 'info', hidden: n === 0 };
}

// The item's longer text (a run's summary) in the page's language.
export function descriptionText(alert, language) {
  const en = str(alert?.description), zh = str(alert?.description_zh);
  return language === 'zh' && zh ? zh : (en || zh);
}

// What to do (the rule's advice) in the page's language, for an item that
// fired; "" for a resolution or when the rule says nothing.
export function stepsText(item, language) {
  if (item?.kind === 'resolved') return '';
  const en = str(item?.alert?.steps), zh = str(item?.alert?.steps_zh);
  return language === 'zh' && zh ? zh : (en || zh);
}

// The id of the oldest item listed (for "Load older"), 0 when none.
export function oldestId(items) {
  return items.length ? Math.min(...items.map((i) => i.id)) : 0;
}

// Items appended from an older page, without duplicates, newest first.
export function mergeOlder(items, older) {
  const have = new Set(items.map((i) => i.id));
  return items.concat(older.filter((i) => !have.has(i.id))).sort((a, b) => b.id - a.id);
}

// The recipient a saved choice names, when it is still one of `choices`.
export function savedRecipient(saved, choices) {
  return choices.some((c) => c.value === saved) ? saved : '';
}

// How many of the diagnosis' log templates an item lists.
export const INBOX_TEMPLATES = 5;

// An item's diagnosis (docs/diagnosis.md "JSON", shaped and bounded by
// alerts.model.js' diagnosisOf) as the inbox shows it, or null while the
// alert has none: the probable cause (the summary line, else the top cause's
// title), the top cause's evidence, the log templates (errors first, then
// new ones, then by count; at most INBOX_TEMPLATES, each {count, marks,
// text} with marks as string keys) and the suggestion with the job's values.
// A resolution keeps the cause only. Everything is the server's text, shown
// as text.
export function inboxDiagnosis(item, language) {
  const d = diagnosisOf(item?.alert, language);
  if (!d) return null;
  const top = d.causes[0];
  const cause = d.summary || top?.title || '';
  if (item.kind === 'resolved') return { cause, evidence: [], templates: [], suggestion: null };
  // Marks as string keys (inbox.i18n.js).
  const templates = orderedTemplates(d.templates).slice(0, INBOX_TEMPLATES).map((x) => ({
    count: x.count,
    marks: templateMarks(x).map((m) => `inbox.diag.${m}`),
    text: x.text,
  }));
  const s = d.suggestion;
  return {
    cause,
    evidence: top?.evidence ?? [],
    templates,
    suggestion: s && s.text ? s : null,
  };
}

// A template's line: "×312 [error, new] Epoch <*> step <*>", its marks
// translated by `tr` (i18n's t).
export function templateLineText(x, tr) {
  return templateLine(x.count, x.marks.map((k) => tr(k)), x.text);
}
