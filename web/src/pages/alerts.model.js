// The Alerts tab's model, without the DOM (tested in node): severities and
// their badges, the records of /api/v1/alerts/records sorted into the
// sections (firing, pending, history), the header's count, the silences
// (their matchers as text, the parser of typed matchers, the body of a new
// one, the matchers that pick out an alert), the rules of
// /api/v1/rules (Prometheus' shape with Vigil's `vigil` block) as rows, the
// texts of a record (title, where, summary in the page's language, value
// against threshold) and of a rule level (thresholds relative to a per-GPU
// value: "slowdown − 5 °C"), and the links to the GPU's charts, the job's
// page and its logs.

import * as fmt from '../format.js';
import { t } from '../i18n.js';
import { jobsHash } from './jobs.model.js';
import { logsHash } from './logs.model.js';
import { overviewHash } from './overview.model.js';

// The preset rules (src/alert/rules.cc), each with a title in both languages
// (alerts.rule.<id>); a rule this UI does not know is shown by its id.
export const RULE_IDS = [
  'gpu_underutilized', 'gpu_idle_allocated', 'gpu_memory_near_full', 'gpu_temperature_high', 'gpu_throttled',
  'gpu_ecc_errors', 'gpu_xid', 'gpu_lost', 'gpu_driver_unresponsive', 'training_loss_nan', 'job_crashed',
  'job_finished', 'job_stalled', 'host_memory_near_full', 'disk_near_full', 'node_down', 'notification_channel_failing',
  'gpu_memory_growing', 'idle_gpu_cost', 'training_loss_diverging', 'training_loss_plateau', 'training_grad_norm_spike',
  'training_throughput_drop', 'job_straggler_rank',
];

export const SEVERITIES = ['critical', 'warning', 'info'];

// The tables' columns (alerts.col.<name>, alerts.rcol.<name>).
export const ACTIVE_COLUMNS = ['severity', 'alert', 'where', 'summary', 'value', 'since', 'links', 'actions'];
export const HISTORY_COLUMNS = ['severity', 'alert', 'where', 'summary', 'value', 'started', 'resolved', 'links'];
export const RULE_COLUMNS = ['rule', 'severity', 'enabled', 'condition', 'for', 'threshold', 'clear', 'state', 'health'];
const SEV_TONES = { critical: 'red', warning: 'amber', info: 'blue' };
const SEV_RANK = { critical: 0, warning: 1, info: 2 };

// What a record's value means. Most rules compare a measurement with a
// threshold ("91 °C ≥ 85 °C"); for these the value is a flag (1, or 0 for a
// GPU that is gone), a step number or a time, and the threshold is 0.
const VALUE_KINDS = {
  gpu_throttled: 'none', gpu_lost: 'none', gpu_driver_unresponsive: 'none',
  job_crashed: 'none', job_finished: 'none', training_loss_nan: 'step', job_stalled: 'seconds',
};
// The presets' units and comparisons, for a record whose rule /api/v1/rules
// did not (yet) give.
const UNITS = {
  gpu_underutilized: '%', gpu_idle_allocated: '%', gpu_memory_near_full: '%', gpu_temperature_high: '°C',
  host_memory_near_full: '%', disk_near_full: '%', node_down: 's',
};
const COMPARISONS = {
  gpu_underutilized: '<', gpu_idle_allocated: '<', gpu_lost: '<', gpu_driver_unresponsive: '<', gpu_temperature_high: '>=',
};
const SYMBOLS = { '>=': '≥', '<=': '≤', '>': '>', '<': '<', '==': '=', '!=': '≠' };
// Per-GPU values a threshold can be relative to (the rule's relative_to),
// by metric name; others are shown by their name.
export const REFERENCES = { vigil_gpu_temp_slowdown_celsius: 'alerts.ref.slowdown' };

// A number from the server's JSON: NaN for null, absent or ''.
const num = (v) => (v == null || v === '' ? NaN : Number(v));
const has = (v) => v != null && v !== '' && typeof v !== 'object';

// A severity's badge: its colour, its i18n key and its text (an unknown
// severity is grey, shown as the server wrote it).
export function severityBadge(sev) {
  const known = SEVERITIES.includes(sev);
  return { tone: known ? SEV_TONES[sev] : 'grey', key: known ? `alerts.sev.${sev}` : null, text: String(sev ?? '') };
}

export function severityRank(sev) { return SEV_RANK[sev] ?? 3; }

// A rule's title key (alerts.rule.<id>), or null for a rule this UI does not know.
export function ruleTitleKey(id) {
  return RULE_IDS.includes(id) ? `alerts.rule.${id}` : null;
}

// A rule's title in the page's language; its id when not known.
export function ruleTitle(id) {
  const k = ruleTitleKey(id);
  return k ? t(k) : String(id ?? '');
}

// RFC 3339 to ms; NaN when absent or unreadable.
export function parseTime(s) {
  if (typeof s !== 'string' || !s) return NaN;
  const ms = Date.parse(s);
  return Number.isFinite(ms) ? ms : NaN;
}

// When the alert started (fired, or for a pending one became active) and
// when it was resolved, in ms; NaN when not known.
export function alertStartMs(rec) {
  const ms = parseTime(rec?.started_at);
  if (Number.isFinite(ms)) return ms;
  for (const k of ['fired_at_ms', 'active_at_ms']) {
    const v = num(rec?.[k]);
    if (Number.isFinite(v) && v > 0) return v;
  }
  return NaN;
}

export function alertResolvedMs(rec) {
  const ms = parseTime(rec?.resolved_at);
  if (Number.isFinite(ms)) return ms;
  const v = num(rec?.resolved_at_ms);
  return Number.isFinite(v) && v > 0 ? v : NaN;
}

const newest = (ms) => (Number.isFinite(ms) ? -ms : Infinity);
const byId = (a, b) => String(a.id ?? '').localeCompare(String(b.id ?? ''));

// Whether something mutes an alert's notifications: another alert
// (inhibited) or a silence (silenced).
export function alertMuted(rec) { return !!(rec?.inhibited || rec?.silenced); }

// The records (the answer of /api/v1/alerts/records?all=1: the active ones,
// then the resolved history) in the page's three sections. Firing: alerts
// not muted (inhibited or silenced) first, then the most severe, then the newest; pending: the most
// severe, then the newest; history: the newest resolved first. A record is
// kept once (the first of an id); a state the page does not know is left out.
export function alertSections(records) {
  const seen = new Set();
  const out = { firing: [], pending: [], history: [] };
  for (const r of Array.isArray(records) ? records : []) {
    if (!r || typeof r !== 'object' || seen.has(String(r.id))) continue;
    seen.add(String(r.id));
    if (r.state === 'firing') out.firing.push(r);
    else if (r.state === 'pending') out.pending.push(r);
    else if (r.state === 'resolved') out.history.push(r);
  }
  const severe = (a, b) => severityRank(a.severity) - severityRank(b.severity);
  const started = (a, b) => newest(alertStartMs(a)) - newest(alertStartMs(b));
  out.firing.sort((a, b) => (alertMuted(a) - alertMuted(b)) || severe(a, b) || started(a, b) || byId(a, b));
  out.pending.sort((a, b) => severe(a, b) || started(a, b) || byId(a, b));
  out.history.sort((a, b) => (newest(alertResolvedMs(a)) - newest(alertResolvedMs(b))) || started(a, b) || byId(a, b));
  return out;
}

// The header's badge: how many alerts fire that nothing mutes (another
// alert or a silence), how many of them are critical, and the most severe
// of them ('' when none).
export function firingCount(records) {
  let count = 0, critical = 0, worst = '';
  const seen = new Set();
  for (const r of Array.isArray(records) ? records : []) {
    if (!r || r.state !== 'firing' || alertMuted(r) || seen.has(String(r.id))) continue;
    seen.add(String(r.id));
    count++;
    if (r.severity === 'critical') critical++;
    if (!worst || severityRank(r.severity) < severityRank(worst)) worst = String(r.severity ?? '');
  }
  return { count, critical, worst };
}

// The header's badge colour: red with any critical alert, amber with a
// warning, blue with info only.
export function badgeTone(worst) {
  return worst === 'critical' ? 'crit' : worst === 'warning' ? 'warn' : 'info';
}

// ---------------------------------------------------------------------------
// Rules

// Every rule level of /api/v1/rules' answer, in its order, flat.
export function rulesFrom(body) {
  const groups = body?.data?.groups;
  const out = [];
  for (const g of Array.isArray(groups) ? groups : []) {
    for (const r of Array.isArray(g?.rules) ? g.rules : []) {
      if (!r || typeof r !== 'object') continue;
      const v = r.vigil && typeof r.vigil === 'object' ? r.vigil : {};
      out.push({
        group: String(g.name ?? ''), name: String(r.name ?? ''), severity: String(r.labels?.severity ?? ''),
        query: String(r.query ?? ''), duration: num(r.duration), keepFiringFor: num(r.keepFiringFor),
        state: String(r.state ?? ''), health: String(r.health ?? ''), lastError: String(r.lastError ?? ''),
        enabled: v.enabled !== false, comparison: String(v.comparison ?? ''), threshold: num(v.threshold),
        clear: num(v.clear), relativeTo: String(v.relative_to ?? ''), unit: String(v.unit ?? ''),
        perGpu: perGpuFrom(v.per_series), overrides: overridesFrom(v.overrides),
      });
    }
  }
  return out;
}

// Each GPU's effective threshold of a level (vigil.per_series), sorted.
function perGpuFrom(list) {
  const out = [];
  for (const p of Array.isArray(list) ? list : []) {
    if (!p || typeof p !== 'object' || !Number.isFinite(num(p.threshold))) continue;
    out.push({ where: String(p.where ?? ''), threshold: num(p.threshold) });
  }
  return out.sort((a, b) => a.where.localeCompare(b.where, 'en', { numeric: true }));
}

// config.json's overrides of a level (vigil.overrides).
function overridesFrom(list) {
  const out = [];
  for (const o of Array.isArray(list) ? list : []) {
    if (!o || typeof o !== 'object') continue;
    out.push({
      node: String(o.node ?? ''), job: String(o.job ?? ''), gpuModel: String(o.gpu_model ?? ''),
      enabled: typeof o.enabled === 'boolean' ? o.enabled : null,
      for: String(o.for ?? ''), threshold: num(o.threshold),
    });
  }
  return out;
}

// What a rule level's threshold is on each GPU, as lines for its cell: one
// line when every GPU has the same ("each of 8 GPUs: 80%"), else one per
// GPU ("node n1 gpu 3 (NVIDIA H100 80GB HBM3): 87 °C").
export function perGpuLines(level) {
  const rows = level?.perGpu ?? [];
  if (!rows.length) return [];
  if (rows.length > 1 && rows.every((r) => r.threshold === rows[0].threshold)) {
    return [t('alerts.eachGpu', { n: rows.length, v: withUnit(rows[0].threshold, level.unit) })];
  }
  return rows.map((r) => `${r.where}: ${withUnit(r.threshold, level.unit)}`);
}

// A level's overrides as lines: "gpu_model *A100*: 80 °C", "job sweep-*: off".
export function overrideLines(level) {
  return (level?.overrides ?? []).map((o) => {
    const where = [['node', o.node], ['job', o.job], ['gpu_model', o.gpuModel]]
      .filter(([, v]) => v).map(([k, v]) => `${k} ${v}`).join(', ');
    const what = [];
    if (o.enabled !== null) what.push(t(o.enabled ? 'alerts.overrideOn' : 'alerts.overrideOff'));
    if (Number.isFinite(o.threshold)) what.push(withUnit(o.threshold, level.unit));
    if (o.for) what.push(t('alerts.overrideFor', { d: o.for }));
    return t('alerts.override', { where, what: what.join(', ') });
  });
}

// The level of a rule a record belongs to: same rule and severity (else
// the rule's first level; null when the rules are not known).
export function ruleLevelFor(rules, rec) {
  const same = (rules ?? []).filter((r) => r.name === rec?.rule);
  return same.find((r) => r.severity === rec?.severity) ?? same[0] ?? null;
}

export function comparisonSymbol(c) { return SYMBOLS[c] ?? String(c ?? ''); }

// An alert's number as the server's summaries print it: whole numbers and
// |v| ≥ 100 without decimals, one decimal from 1, else 3 significant digits.
export function alertNumber(v) {
  if (!Number.isFinite(v)) return '–';
  const a = Math.abs(v);
  if (a >= 100 || a === Math.floor(a)) return v.toFixed(0);
  if (a >= 1) return v.toFixed(1);
  return String(Number(v.toPrecision(3)));
}

// "91 °C", "97%", "45 s".
export function withUnit(v, unit) {
  const n = alertNumber(v);
  if (!unit || n === '–') return n;
  return unit === '%' ? `${n}%` : `${n} ${unit}`;
}

// A rule's value kind: 'compare' (a measurement against a threshold), or
// 'none', 'step', 'seconds' (see VALUE_KINDS).
export function valueKind(rule) { return VALUE_KINDS[rule] ?? 'compare'; }

// What a record's value was against its threshold: "91 °C ≥ 85 °C" (the
// record's threshold is absolute, a relative rule's offset applied); the
// step of a NaN loss, how long a job has stalled; '–' when there is no
// value (NaN) or it means nothing (a crash, a lost GPU).
export function valueText(rec, level) {
  const kind = valueKind(rec?.rule);
  const v = num(rec?.value);
  if (kind === 'none' || !Number.isFinite(v)) return '–';
  if (kind === 'step') return t('alerts.valueStep', { step: alertNumber(v) });
  if (kind === 'seconds') return fmt.duration(v);
  const unit = level?.unit || UNITS[rec.rule] || '';
  const thr = num(rec.threshold);
  if (!Number.isFinite(thr)) return withUnit(v, unit);
  const cmp = comparisonSymbol(level?.comparison || COMPARISONS[rec.rule] || '>');
  return `${withUnit(v, unit)} ${cmp} ${withUnit(thr, unit)}`;
}

// The name of what a relative threshold is relative to: the first metric
// name of relative_to, translated when known ("slowdown"), else as written.
export function referenceName(relativeTo) {
  const m = /^\s*([A-Za-z_:][A-Za-z0-9_:]*)/.exec(String(relativeTo ?? ''));
  if (!m) return String(relativeTo ?? '');
  return REFERENCES[m[1]] ? t(REFERENCES[m[1]]) : m[1];
}

// A rule level's threshold (which: 'threshold') or clear level ('clear')
// with its unit: "90%", or relative to a per-GPU value, "slowdown − 5 °C"
// ("slowdown" at 0, "slowdown + 2 °C" above); '' for rules whose value is
// not compared (a crash, a lost GPU, a NaN loss).
export function thresholdText(level, which = 'threshold') {
  if (!level || valueKind(level.name) !== 'compare') return '';
  const v = level[which];
  if (!Number.isFinite(v)) return '';
  if (!level.relativeTo) return withUnit(v, level.unit);
  const ref = referenceName(level.relativeTo);
  if (v === 0) return ref;
  return `${ref} ${v < 0 ? '−' : '+'} ${withUnit(Math.abs(v), level.unit)}`;
}

// A rule level's firing condition in short: "≥ slowdown − 5 °C", "< 80%".
export function conditionText(level) {
  const thr = thresholdText(level, 'threshold');
  return thr ? `${comparisonSymbol(level.comparison)} ${thr}` : '';
}

// A rule level's state and health as badges: their colour and i18n key.
export function ruleStateBadge(state) {
  const tones = { firing: 'red', pending: 'amber', inactive: 'grey' };
  return { tone: tones[state] ?? 'grey', key: state in tones ? `alerts.state.${state}` : null, text: String(state ?? '') };
}

export function healthBadge(health) {
  const tones = { ok: 'green', err: 'red', unknown: 'grey' };
  return { tone: tones[health] ?? 'grey', key: health in tones ? `alerts.health.${health}` : null, text: String(health ?? '') };
}

// ---------------------------------------------------------------------------
// A record's texts and links

// Where it happened: its node, GPU, job and filesystem, as [label, text]
// (label values are the server's: shown as text).
export function whereParts(rec) {
  const l = rec?.labels && typeof rec.labels === 'object' ? rec.labels : {};
  const out = [];
  if (has(l.node)) out.push(['node', String(l.node)]);
  if (has(l.gpu)) out.push(['gpu', `GPU ${l.gpu}`]);
  if (has(l.job)) out.push(['job', String(l.job)]);
  if (has(l.mountpoint)) out.push(['mountpoint', String(l.mountpoint)]);
  return out;
}

// The summary in the page's language: summary_zh in Chinese when present,
// else the English one (else the Chinese one).
export function summaryText(rec, language) {
  const en = typeof rec?.summary === 'string' ? rec.summary : '';
  const zh = typeof rec?.summary_zh === 'string' ? rec.summary_zh : '';
  return language === 'zh' && zh ? zh : (en || zh);
}

// The job's log lines the alert quotes (its `log_excerpt`), while it fires:
// strings only, at most 20 of at most 500 characters each (the server
// bounds them; a page never trusts that). Shown as text, never as markup.
export function logExcerpt(rec) {
  if (rec?.state === 'resolved' || !Array.isArray(rec?.log_excerpt)) return [];
  return rec.log_excerpt.filter((l) => typeof l === 'string').slice(0, 20).map((l) => l.slice(0, 500));
}

// The alert's diagnosis (docs/diagnosis.md "JSON") in the page's language,
// or null while it has none: the summary line, the causes (title,
// confidence in %, evidence lines), the top suggestion and the collapsed
// log templates. Everything is from the server and shown as text; strings
// only, each bounded, lists cut (a page never trusts the bounds).
export function diagnosisOf(rec, language) {
  const d = rec?.diagnosis;
  if (!d || typeof d !== 'object' || Array.isArray(d)) return null;
  const zh = language === 'zh';
  const str = (v, n = 300) => (typeof v === 'string' ? v.slice(0, n) : '');
  const pick = (o, key) => str(zh && typeof o?.[`${key}_zh`] === 'string' && o[`${key}_zh`] ? o[`${key}_zh`] : o?.[key]);
  const list = (v, n) => (Array.isArray(v) ? v.slice(0, n) : []);
  const causes = list(d.causes, 5).filter((c) => c && typeof c === 'object').map((c) => ({
    id: str(c.id, 64),
    title: pick(c, 'title') || str(c.id, 64),
    confidence: Number.isFinite(c.confidence) ? Math.round(Math.min(Math.max(c.confidence, 0), 1) * 100) : null,
    evidence: list(c.evidence, 8).map((e) => (zh && e?.text_zh ? str(e.text_zh) : str(e?.text))).filter(Boolean),
    source: /^https:\/\//.test(str(c.source)) ? str(c.source) : '',
  }));
  const s = list(d.suggestions, 1)[0];
  const suggestion = s && typeof s === 'object' ? {
    text: pick(s, 'text'), parameter: str(s.parameter, 64),
    current: typeof s.current === 'string' ? s.current.slice(0, 64) : null,
    suggested: typeof s.suggested === 'string' ? s.suggested.slice(0, 64) : null,
  } : null;
  const templates = list(d.log_templates, 10).filter((x) => x && typeof x === 'object').map((x) => ({
    text: str(x.template, 240), count: Number.isFinite(x.count) ? x.count : 0,
    severity: str(x.severity, 8), isNew: x.new === true,
  }));
  const summary = pick(d, 'summary');
  if (!summary && !causes.length && !templates.length) return null;
  return { summary, causes, suggestion, templates };
}

// A diagnosis' templates as every page and notification orders them:
// errors first, then new ones, then the most frequent.
export function orderedTemplates(templates) {
  const rank = (x) => [x.severity === 'error' ? 0 : 1, x.isNew ? 0 : 1, -x.count];
  return [...templates].sort((a, b) => {
    const ra = rank(a), rb = rank(b);
    for (let i = 0; i < ra.length; i += 1) if (ra[i] !== rb[i]) return ra[i] - rb[i];
    return 0;
  });
}

// A template's marks as codes: 'error' or 'warn', then 'new'.
export const TEMPLATE_MARKS = ['error', 'warn', 'new'];
export function templateMarks(x) {
  return [x.severity === 'error' || x.severity === 'warn' ? x.severity : null, x.isNew ? 'new' : null]
    .filter(Boolean);
}

// "×312 [error, new] Epoch <*> step <*>", the marks already translated.
export function templateLine(count, marks, text) {
  return `×${count}${marks.length ? ` [${marks.join(', ')}]` : ''} ${text}`;
}

// The shortest range of the picker ([[key, seconds], ...]) that reaches
// back `seconds`; the longest when none does.
export function reachingRange(ranges, seconds) {
  return (ranges.find(([, s]) => s >= seconds) ?? ranges[ranges.length - 1])[0];
}

// Where a record links: the GPU's charts on the overview (#range=1h&gpu=0)
// when it names a GPU; the job's page (#jobs&range=1h&id=<run>) and its
// logs (#logs&range=1h&node=<node>&run=<run>) when it names a job and its
// run (the job's id). Each over the shortest range reaching a minute
// before the alert started (the longest, 7 d, for older ones: the pages
// have no absolute time range). null where the record does not say.
export function alertLinks(rec, nowMs, ranges) {
  const l = rec?.labels && typeof rec.labels === 'object' ? rec.labels : {};
  const start = alertStartMs(rec);
  const back = Number.isFinite(start) ? Math.max(0, (nowMs - start) / 1000) + 60 : 0;
  const range = reachingRange(ranges, back);
  const out = { gpu: null, job: null, logs: null };
  if (has(l.gpu)) out.gpu = overviewHash(range, String(l.gpu));
  if (has(l.job) && has(l.run)) {
    out.job = jobsHash(range, String(l.run));
    out.logs = logsHash(range, { node: has(l.node) ? String(l.node) : '', run: String(l.run), levels: [] });
  }
  return out;
}

// A record's labels as "name=value" lines (the hover text of its row).
export function labelsText(rec) {
  const l = rec?.labels && typeof rec.labels === 'object' ? rec.labels : {};
  return Object.entries(l).map(([k, v]) => `${k}=${v}`).join('\n');
}

// ---------------------------------------------------------------------------
// Silences (GET /api/v1/silences: Alertmanager's GettableSilence, plus
// createdAt; POST /api/v1/silences with `duration`; docs/alerts.md)

export const SILENCE_COLUMNS = ['state', 'matchers', 'starts', 'ends', 'createdBy', 'comment', 'actions'];
export const SILENCE_STATES = ['active', 'pending', 'expired'];
// The form's durations: [choice, what is sent]. The server knows ms, s, m,
// h and d (not w): a week is 7d.
export const SILENCE_DURATIONS = [['1h', '1h'], ['4h', '4h'], ['1d', '1d'], ['1w', '7d']];
export const MAX_MATCHERS = 32; // alert::kMaxSilenceMatchers
// The labels that pick out one alert, in this order (those it has).
export const ALERT_MATCHER_LABELS = ['alertname', 'node', 'gpu', 'job'];

// A silence state's badge: active green, pending blue, expired grey.
export function silenceStateBadge(state) {
  const tones = { active: 'green', pending: 'blue', expired: 'grey' };
  return { tone: tones[state] ?? 'grey', key: state in tones ? `alerts.silState.${state}` : null, text: String(state ?? '') };
}

// A matcher's operator from Alertmanager's isRegex and isEqual (false and
// true when absent, as Alertmanager reads them).
export function matcherOp(m) {
  const regex = m?.isRegex === true, equal = m?.isEqual !== false;
  return regex ? (equal ? '=~' : '!~') : (equal ? '=' : '!=');
}

// A value in double quotes, \ and " escaped (alert::MatcherText's quoting,
// which parseMatchers and `vigil silence add` read back).
export function quoteValue(v) {
  return `"${String(v ?? '').replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

// `node="gpu-07"`, `alertname=~"gpu_.*"`.
export function matcherText(m) {
  return `${String(m?.name ?? '')}${matcherOp(m)}${quoteValue(m?.value)}`;
}

// A silence's matchers as one line: `node="gpu-07", alertname=~"gpu_.*"`.
export function matchersText(list) {
  return (Array.isArray(list) ? list : []).map(matcherText).join(', ');
}

// The silences of GET /api/v1/silences, newest (created) first; times in
// ms (NaN when unreadable), texts as strings.
export function silencesFrom(body) {
  const out = [];
  for (const s of Array.isArray(body) ? body : []) {
    if (!s || typeof s !== 'object') continue;
    const matchers = [];
    for (const m of Array.isArray(s.matchers) ? s.matchers : []) {
      if (!m || typeof m !== 'object') continue;
      matchers.push({ name: String(m.name ?? ''), value: String(m.value ?? ''), isRegex: m.isRegex === true, isEqual: m.isEqual !== false });
    }
    out.push({
      id: String(s.id ?? ''), state: String(s.status?.state ?? ''), matchers,
      startsAt: parseTime(s.startsAt), endsAt: parseTime(s.endsAt), createdAt: parseTime(s.createdAt),
      createdBy: typeof s.createdBy === 'string' ? s.createdBy : '', comment: typeof s.comment === 'string' ? s.comment : '',
    });
  }
  const created = (x) => (Number.isFinite(x.createdAt) ? x.createdAt : x.startsAt);
  return out.sort((a, b) => newest(created(a)) - newest(created(b)) || a.id.localeCompare(b.id));
}

// Whether a silence can still be expired (DELETE): pending or active.
export function silenceExpirable(s) { return s?.state === 'pending' || s?.state === 'active'; }

// When a silence starts or ends, relative to now: ['alerts.in', {d}] for
// the future, ['alerts.ago', {d}] for the past; null when not known.
export function relativeTime(ms, nowMs) {
  if (!Number.isFinite(ms)) return null;
  const d = fmt.duration(Math.abs(nowMs - ms) / 1000);
  return ms > nowMs ? ['alerts.in', { d }] : ['alerts.ago', { d }];
}

// The matchers that pick out one alert: its alertname (its rule when the
// labels lack one), node and, when it has them, gpu and job; all `=`.
export function alertMatchers(rec) {
  const l = rec?.labels && typeof rec.labels === 'object' ? rec.labels : {};
  const out = [];
  for (const name of ALERT_MATCHER_LABELS) {
    let v = l[name];
    if (name === 'alertname' && !has(v)) v = rec?.rule;
    if (has(v)) out.push({ name, value: String(v), isRegex: false, isEqual: true });
  }
  return out;
}

const LABEL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const OPS = ['=~', '!~', '!=', '='];
const SEP = /[\s,]/;

// Matchers as `vigil silence add` takes them: name=value, name!=value,
// name=~regex, name!~regex, separated by commas or spaces (optionally in
// braces, as PromQL writes them: {node="n1", gpu="3"}). A value is written
// bare (up to the next comma or space; `\` is kept as is, for regexes) or
// in double quotes, where \" is a quote and \\ a backslash (any \x is x, as
// the CLI reads it). Returns {matchers, error: null}, or {matchers: null,
// error: {key, vars}} (an alerts.mx.* message). The regular expressions and
// the limits are the server's to check; that one matcher must not match
// the empty string is checked here too where JavaScript can tell.
export function parseMatchers(text) {
  const fail = (key, vars = {}) => ({ matchers: null, error: { key, vars } });
  let s = String(text ?? '').trim();
  if (s.startsWith('{') && s.endsWith('}')) s = s.slice(1, -1);
  const out = [];
  let i = 0;
  const word = (from) => {
    let j = from;
    while (j < s.length && !SEP.test(s[j])) j++;
    return s.slice(from, j).slice(0, 80);
  };
  while (i < s.length) {
    if (SEP.test(s[i])) { i++; continue; }
    const start = i;
    while (i < s.length && !SEP.test(s[i]) && !'=!~"'.includes(s[i])) i++;
    const name = s.slice(start, i);
    while (i < s.length && /\s/.test(s[i])) i++;
    const op = OPS.find((o) => s.startsWith(o, i));
    if (!name || !op) return fail('alerts.mx.bad', { text: word(start) });
    if (!LABEL_NAME.test(name)) return fail('alerts.mx.name', { name: name.slice(0, 80) });
    i += op.length;
    while (i < s.length && /\s/.test(s[i])) i++;
    let value = '';
    if (s[i] === '"') {
      let j = i + 1, closed = false;
      for (; j < s.length; j++) {
        if (s[j] === '\\' && j + 1 < s.length) { value += s[++j]; continue; }
        if (s[j] === '"') { closed = true; break; }
        value += s[j];
      }
      if (!closed) return fail('alerts.mx.quote', { text: s.slice(start, start + 80) });
      i = j + 1;
      if (i < s.length && !SEP.test(s[i])) return fail('alerts.mx.bad', { text: word(start) });
    } else {
      const from = i;
      while (i < s.length && !SEP.test(s[i])) i++;
      value = s.slice(from, i);
    }
    out.push({ name, value, isRegex: op.includes('~'), isEqual: !op.startsWith('!') });
  }
  if (!out.length) return fail('alerts.mx.empty');
  if (out.length > MAX_MATCHERS) return fail('alerts.mx.tooMany', { n: out.length, max: MAX_MATCHERS });
  if (!out.some(selective)) return fail('alerts.mx.all');
  return { matchers: out, error: null };
}

// Whether a matcher does not match the empty string (a label the alert
// lacks). A regular expression JavaScript cannot compile (RE2 syntax such
// as (?i)) counts as selective: the server decides.
function selective(m) {
  if (!m.isRegex) return m.isEqual ? m.value !== '' : m.value === '';
  let re;
  try { re = new RegExp(`^(?:${m.value})$`, 'u'); } catch { return true; }
  return m.isEqual ? !re.test('') : re.test('');
}

// A duration as the server reads it ("90m", "1h30m", "7d": whole numbers
// of ms, s, m, h, d), in ms; NaN when malformed or not positive.
export function silenceDurationMs(text) {
  const s = String(text ?? '').trim();
  if (s.length > 32 || !/^(?:\d{1,9}(?:ms|s|m|h|d))+$/.test(s)) return NaN;
  const unit = { ms: 1, s: 1000, m: 60000, h: 3600000, d: 86400000 };
  let ms = 0;
  for (const [, n, u] of s.matchAll(/(\d+)(ms|s|m|h|d)/g)) ms += Number(n) * unit[u];
  return ms > 0 ? ms : NaN;
}

// The body of POST /api/v1/silences.
export function silenceBody({ matchers, duration, comment = '', createdBy = '' }) {
  return {
    matchers: matchers.map((m) => ({ name: m.name, value: m.value, isRegex: !!m.isRegex, isEqual: m.isEqual !== false })),
    duration: String(duration).trim(), createdBy: String(createdBy), comment: String(comment),
  };
}
