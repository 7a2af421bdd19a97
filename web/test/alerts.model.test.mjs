// Unit tests of the Alerts tab's model (pages/alerts.model.js, no DOM):
// severity badges, records sorted into the firing, pending and history
// sections, the header's count (muted alerts left out), rules flattened
// from /api/v1/rules, thresholds relative to a per-GPU value, values against
// thresholds, where, the summary in the page's language, the links to the
// GPU's charts, the job and its logs (and that the other pages read them
// back), silences (their matchers as text and back, the parser of typed
// matchers: every operator, quoting, bad input; the list, the body of a new
// one, an alert's matchers, durations), and that every string the tab uses
// exists, translated, in both languages. Run from unit.test.mjs.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { setLang, t } from '../src/i18n.js';
import {
  ACTIVE_COLUMNS, HISTORY_COLUMNS, MAX_MATCHERS, RULE_COLUMNS, RULE_IDS, SEVERITIES, SILENCE_COLUMNS, SILENCE_DURATIONS,
  SILENCE_STATES, alertLinks, alertMatchers, alertMuted, alertNumber, alertResolvedMs, alertSections, alertStartMs,
  badgeTone, comparisonSymbol, diagnosisOf, conditionText, firingCount, healthBadge, labelsText, logExcerpt, matcherOp, matcherText,
  matchersText, parseMatchers, parseTime, quoteValue, reachingRange, referenceName, relativeTime, ruleLevelFor,
  ruleStateBadge, ruleTitle, ruleTitleKey, rulesFrom, perGpuLines, overrideLines, severityBadge, silenceBody,
  silenceDurationMs, silenceExpirable, silenceStateBadge, silencesFrom, summaryText, thresholdText, valueKind,
  valueText, whereParts, withUnit, TEMPLATE_MARKS, orderedTemplates, templateLine, templateMarks,
} from '../src/pages/alerts.model.js';
import { jobIdFromHash } from '../src/pages/jobs.model.js';
import { parseLogsHash } from '../src/pages/logs.model.js';
import { gpuFromHash, overviewHash } from '../src/pages/overview.model.js';
import { ALL } from './i18n_tables.mjs';

const RANGES = [['5m', 300], ['15m', 900], ['1h', 3600], ['6h', 21600], ['24h', 86400], ['7d', 604800]];
const NOW = Date.parse('2026-12-02T03:00:00Z');
const at = (min) => new Date(NOW - min * 60000).toISOString().replace(/\.000Z$/, 'Z');
const rec = (o) => ({
  id: o.id, rule: 'gpu_temperature_high', state: 'firing', severity: 'warning', value: 91, threshold: 85,
  labels: { node: 'n1', gpu: '0' }, summary: 'en', summary_zh: 'zh', started_at: at(10), resolved_at: null, ...o,
});

// setLang marks <html lang>: a stand-in document for node.
function inLang(l, fn) {
  globalThis.document ??= { documentElement: {} };
  setLang(l);
  try { return fn(); } finally { setLang('en'); }
}

test('alerts: severities get a colour and a word, unknown ones grey and as written', () => {
  assert.deepEqual(SEVERITIES.map((s) => severityBadge(s).tone), ['red', 'amber', 'blue']);
  assert.deepEqual(severityBadge('critical'), { tone: 'red', key: 'alerts.sev.critical', text: 'critical' });
  assert.deepEqual(severityBadge('page'), { tone: 'grey', key: null, text: 'page' });
  assert.deepEqual(severityBadge(undefined), { tone: 'grey', key: null, text: '' });
  assert.equal(ruleStateBadge('firing').tone, 'red');
  assert.equal(ruleStateBadge('pending').key, 'alerts.state.pending');
  assert.deepEqual(ruleStateBadge('odd'), { tone: 'grey', key: null, text: 'odd' });
  assert.equal(healthBadge('ok').tone, 'green');
  assert.equal(healthBadge('err').tone, 'red');
  assert.equal(healthBadge('unknown').key, 'alerts.health.unknown');
  assert.equal(badgeTone('critical'), 'crit');
  assert.equal(badgeTone('warning'), 'warn');
  assert.equal(badgeTone('info'), 'info');
});

test('alerts: every preset rule has a title in both languages; others show their id', () => {
  assert.equal(RULE_IDS.length, 24);
  for (const id of RULE_IDS) {
    const k = ruleTitleKey(id);
    assert.equal(k, `alerts.rule.${id}`);
    assert.ok(ALL.en[k] && ALL.zh[k], `${id} has a title`);
    assert.notEqual(ALL.zh[k], ALL.en[k], `${id}'s title is translated`);
  }
  assert.equal(ruleTitle('gpu_temperature_high'), 'GPU temperature high');
  assert.equal(inLang('zh', () => ruleTitle('gpu_temperature_high')), 'GPU 温度过高');
  assert.equal(ruleTitleKey('my_rule'), null);
  assert.equal(ruleTitle('my_rule'), 'my_rule');
  assert.equal(ruleTitle('<b>x</b>'), '<b>x</b>');
});

test('alerts: times from started_at / resolved_at, else the ms fields', () => {
  assert.equal(parseTime('2026-12-02T02:05:39Z'), Date.UTC(2026, 11, 2, 2, 5, 39));
  assert.ok(Number.isNaN(parseTime('')));
  assert.ok(Number.isNaN(parseTime('not a time')));
  assert.ok(Number.isNaN(parseTime(null)));
  assert.equal(alertStartMs({ started_at: '2026-12-02T02:05:39Z' }), Date.UTC(2026, 11, 2, 2, 5, 39));
  assert.equal(alertStartMs({ started_at: '', fired_at_ms: 0, active_at_ms: 5000 }), 5000);
  assert.equal(alertStartMs({ fired_at_ms: 7000, active_at_ms: 5000 }), 7000);
  assert.ok(Number.isNaN(alertStartMs({})));
  assert.equal(alertResolvedMs({ resolved_at: '2026-12-02T02:05:39Z' }), Date.UTC(2026, 11, 2, 2, 5, 39));
  assert.equal(alertResolvedMs({ resolved_at: null, resolved_at_ms: 9000 }), 9000);
  assert.ok(Number.isNaN(alertResolvedMs({ resolved_at: null, resolved_at_ms: 0 })));
});

test('alerts: records sorted into firing, pending and history', () => {
  const records = [
    rec({ id: 'w-old', severity: 'warning', started_at: at(50) }),
    rec({ id: 'c-muted', severity: 'critical', inhibited: true, started_at: at(1) }),
    rec({ id: 'w-new', severity: 'warning', started_at: at(2) }),
    rec({ id: 'c', severity: 'critical', started_at: at(30) }),
    rec({ id: 'i', severity: 'info', started_at: at(0) }),
    rec({ id: 'p-w', state: 'pending', severity: 'warning', started_at: at(1) }),
    rec({ id: 'p-c', state: 'pending', severity: 'critical', started_at: at(5) }),
    rec({ id: 'p-c2', state: 'pending', severity: 'critical', started_at: at(3) }),
    rec({ id: 'h-1', state: 'resolved', started_at: at(300), resolved_at: at(200) }),
    rec({ id: 'h-2', state: 'resolved', started_at: at(100), resolved_at: at(90) }),
    rec({ id: 'h-3', state: 'resolved', started_at: at(400), resolved_at: null, resolved_at_ms: NOW - 60000 }),
    rec({ id: 'x', state: 'silenced' }), // a state this page does not know
    rec({ id: 'c', state: 'resolved' }), // the same id again: the first one counts
    null, 'junk',
  ];
  const s = alertSections(records);
  // Firing: not muted first, then the most severe, then the newest.
  assert.deepEqual(s.firing.map((r) => r.id), ['c', 'w-new', 'w-old', 'i', 'c-muted']);
  assert.deepEqual(s.pending.map((r) => r.id), ['p-c2', 'p-c', 'p-w']);
  // History: the newest resolved first.
  assert.deepEqual(s.history.map((r) => r.id), ['h-3', 'h-2', 'h-1']);
  assert.deepEqual(alertSections(null), { firing: [], pending: [], history: [] });
  assert.deepEqual(alertSections({ not: 'an array' }).firing, []);
});

test('alerts: the header counts firing alerts that nothing mutes', () => {
  const records = [
    rec({ id: 'a', severity: 'warning' }),
    rec({ id: 'b', severity: 'critical', inhibited: true }),
    rec({ id: 'c', severity: 'info' }),
    rec({ id: 'd', state: 'pending', severity: 'critical' }),
    rec({ id: 'e', state: 'resolved', severity: 'critical' }),
    rec({ id: 'a', severity: 'warning' }),
  ];
  assert.deepEqual(firingCount(records), { count: 2, critical: 0, worst: 'warning' });
  records.push(rec({ id: 'f', severity: 'critical' }));
  assert.deepEqual(firingCount(records), { count: 3, critical: 1, worst: 'critical' });
  assert.deepEqual(firingCount([rec({ id: 'g', severity: 'info' })]), { count: 1, critical: 0, worst: 'info' });
  assert.deepEqual(firingCount([]), { count: 0, critical: 0, worst: '' });
  assert.deepEqual(firingCount(null), { count: 0, critical: 0, worst: '' });
});

const RULES_BODY = {
  status: 'success',
  data: { groups: [{ name: 'vigil-presets', interval: 1, rules: [
    { name: 'gpu_temperature_high', query: 'DCGM_FI_DEV_GPU_TEMP >= on(node, gpu) (vigil_gpu_temp_slowdown_celsius > 0) - 5',
      duration: 60, keepFiringFor: 0, labels: { severity: 'warning' }, annotations: {}, alerts: [], state: 'firing',
      health: 'ok', evaluationTime: 0.0003, lastEvaluation: '2026-12-02T02:05:39Z', type: 'alerting',
      vigil: { enabled: true, comparison: '>=', threshold: -5, clear: -8, relative_to: 'vigil_gpu_temp_slowdown_celsius > 0', unit: '°C',
        per_series: [{ where: 'node n1 gpu 10 (A100)', threshold: 80 }, { where: 'node n1 gpu 2 (H100)', threshold: 85 }, { where: 'x', threshold: 'no' }],
        overrides: [{ gpu_model: '*A100*', threshold: 80 }, { node: 'n7', job: 'sweep-*', enabled: false, for: '2m' }, null] } },
    { name: 'gpu_temperature_high', query: '... + 0', duration: 30, keepFiringFor: 0, labels: { severity: 'critical' },
      state: 'inactive', health: 'ok',
      vigil: { enabled: true, comparison: '>=', threshold: 0, clear: -3, relative_to: 'vigil_gpu_temp_slowdown_celsius > 0', unit: '°C' } },
    { name: 'gpu_underutilized', query: 'job GPU utilisation < 80', duration: 900, keepFiringFor: 0,
      labels: { severity: 'warning' }, state: 'pending', health: 'err', lastError: 'rule gpu_underutilized: boom',
      vigil: { enabled: false, comparison: '<', threshold: 80, clear: 85, relative_to: '', unit: '%' } },
    { name: 'gpu_xid', query: 'increase(vigil_gpu_xid_errors_total[5m]) > 0', duration: 0, keepFiringFor: 900,
      labels: { severity: 'critical' }, state: 'inactive', health: 'unknown',
      vigil: { enabled: true, comparison: '>', threshold: 0, clear: 0, relative_to: '', unit: '' } },
    { name: 'job_crashed', query: 'job crashed or killed', duration: 0, labels: { severity: 'critical' },
      vigil: { enabled: true, comparison: '>', threshold: 0, clear: 0, relative_to: '', unit: '' } },
    { name: 'ref_above', labels: { severity: 'info' },
      vigil: { comparison: '>', threshold: 2.5, clear: 0, relative_to: 'some_metric{a="b"}', unit: 'W' } },
    null,
  ] }, { name: 'empty' }] },
};

test('alerts: rules flattened from /api/v1/rules, one row per level', () => {
  const rules = rulesFrom(RULES_BODY);
  assert.deepEqual(rules.map((r) => `${r.name}/${r.severity}`), ['gpu_temperature_high/warning', 'gpu_temperature_high/critical',
    'gpu_underutilized/warning', 'gpu_xid/critical', 'job_crashed/critical', 'ref_above/info']);
  assert.deepEqual(rules[0], {
    group: 'vigil-presets', name: 'gpu_temperature_high', severity: 'warning',
    query: 'DCGM_FI_DEV_GPU_TEMP >= on(node, gpu) (vigil_gpu_temp_slowdown_celsius > 0) - 5', duration: 60, keepFiringFor: 0,
    state: 'firing', health: 'ok', lastError: '', enabled: true, comparison: '>=', threshold: -5, clear: -8,
    relativeTo: 'vigil_gpu_temp_slowdown_celsius > 0', unit: '°C',
    perGpu: [{ where: 'node n1 gpu 2 (H100)', threshold: 85 }, { where: 'node n1 gpu 10 (A100)', threshold: 80 }],
    overrides: [{ node: '', job: '', gpuModel: '*A100*', enabled: null, for: '', threshold: 80 },
      { node: 'n7', job: 'sweep-*', gpuModel: '', enabled: false, for: '2m', threshold: NaN }],
  });
  // Each GPU's threshold, one line per GPU where they differ, else one line.
  assert.deepEqual(perGpuLines(rules[0]), ['node n1 gpu 2 (H100): 85 °C', 'node n1 gpu 10 (A100): 80 °C']);
  assert.deepEqual(perGpuLines({ unit: '%', perGpu: [{ where: 'a', threshold: 90 }, { where: 'b', threshold: 90 }] }),
    ['each of 2 GPUs: 90%']);
  assert.deepEqual(perGpuLines(rules[1]), []);
  assert.deepEqual(overrideLines(rules[0]), ['override (gpu_model *A100*): 80 °C', 'override (node n7, job sweep-*): off, for 2m']);
  assert.equal(rules[2].enabled, false);
  assert.equal(rules[2].lastError, 'rule gpu_underutilized: boom');
  assert.equal(rules[5].enabled, true, 'enabled unless it says otherwise');
  assert.ok(Number.isNaN(rules[5].duration));
  assert.deepEqual(rulesFrom(null), []);
  assert.deepEqual(rulesFrom({ data: { groups: 'x' } }), []);
  // A record's level: same rule and severity, else the rule's first.
  assert.equal(ruleLevelFor(rules, { rule: 'gpu_temperature_high', severity: 'critical' }), rules[1]);
  assert.equal(ruleLevelFor(rules, { rule: 'gpu_temperature_high', severity: 'info' }), rules[0]);
  assert.equal(ruleLevelFor(rules, { rule: 'nope', severity: 'info' }), null);
  assert.equal(ruleLevelFor(null, { rule: 'gpu_xid' }), null);
});

test('alerts: thresholds with units, relative ones as an offset from the per-GPU value', () => {
  const rules = rulesFrom(RULES_BODY);
  assert.equal(thresholdText(rules[0]), 'slowdown − 5 °C');
  assert.equal(thresholdText(rules[0], 'clear'), 'slowdown − 8 °C');
  assert.equal(conditionText(rules[0]), '≥ slowdown − 5 °C');
  assert.equal(thresholdText(rules[1]), 'slowdown', 'an offset of 0 is the value itself');
  assert.equal(thresholdText(rules[1], 'clear'), 'slowdown − 3 °C');
  assert.equal(thresholdText(rules[2]), '80%');
  assert.equal(conditionText(rules[2]), '< 80%');
  assert.equal(thresholdText(rules[2], 'clear'), '85%');
  assert.equal(thresholdText(rules[3]), '0');
  assert.equal(conditionText(rules[3]), '> 0');
  // A crash has no threshold to speak of.
  assert.equal(thresholdText(rules[4]), '');
  assert.equal(conditionText(rules[4]), '');
  // A reference this UI does not know: its metric name; above it, "+".
  assert.equal(thresholdText(rules[5]), 'some_metric + 2.5 W');
  assert.equal(referenceName('vigil_gpu_temp_slowdown_celsius > 0'), 'slowdown');
  assert.equal(referenceName('(weird'), '(weird');
  assert.equal(inLang('zh', () => thresholdText(rules[0])), '降频温度 − 5 °C');
  assert.equal(thresholdText(null), '');
  assert.equal(comparisonSymbol('>='), '≥');
  assert.equal(comparisonSymbol('<'), '<');
  assert.equal(comparisonSymbol('~'), '~');
});

test('alerts: values as the server prints them, against the threshold with its unit', () => {
  assert.equal(alertNumber(91), '91');
  assert.equal(alertNumber(91.46), '91.5');
  assert.equal(alertNumber(123.4), '123');
  assert.equal(alertNumber(-5), '-5');
  assert.equal(alertNumber(0.012345), '0.0123');
  assert.equal(alertNumber(NaN), '–');
  assert.equal(withUnit(97.2, '%'), '97.2%');
  assert.equal(withUnit(45, 's'), '45 s');
  assert.equal(withUnit(3, ''), '3');
  assert.equal(withUnit(NaN, '%'), '–');
  const rules = rulesFrom(RULES_BODY);
  const hot = rec({ id: 'h', value: 91, threshold: 85 });
  assert.equal(valueText(hot, ruleLevelFor(rules, hot)), '91 °C ≥ 85 °C');
  // Without the rules: the presets' unit and comparison.
  assert.equal(valueText(hot, null), '91 °C ≥ 85 °C');
  assert.equal(valueText(rec({ rule: 'gpu_underutilized', value: 3.25, threshold: 10 }), null), '3.3% < 10%');
  assert.equal(valueText(rec({ rule: 'gpu_memory_near_full', value: 97.5, threshold: 97 }), null), '97.5% > 97%');
  assert.equal(valueText(rec({ rule: 'node_down', value: 45, threshold: 30 }), null), '45 s > 30 s');
  assert.equal(valueText(rec({ rule: 'my_rule', value: 2, threshold: 1 }), null), '2 > 1');
  assert.equal(valueText(rec({ rule: 'my_rule', value: 2, threshold: null }), null), '2');
  // No value (NaN, written as null), or one that means nothing.
  assert.equal(valueText(rec({ value: null }), null), '–');
  assert.equal(valueText(rec({ rule: 'job_crashed', value: 1, threshold: 0 }), null), '–');
  assert.equal(valueText(rec({ rule: 'gpu_lost', value: 0, threshold: 1 }), null), '–');
  assert.equal(valueKind('gpu_throttled'), 'none');
  assert.equal(valueKind('gpu_temperature_high'), 'compare');
  assert.equal(valueText(rec({ rule: 'training_loss_nan', value: 1200, threshold: 0 }), null), 'at step 1200');
  assert.equal(valueText(rec({ rule: 'job_stalled', value: 720, threshold: 0 }), null), '12m');
  assert.equal(inLang('zh', () => valueText(rec({ rule: 'training_loss_nan', value: 1200 }), null)), '第 1200 步');
});

test('alerts: where, labels and the summary in the page\'s language', () => {
  const r = rec({ labels: { alertname: 'x', node: 'n1', gpu: '0', job: 'train', run: '1-2-3', mountpoint: '/data', UUID: 'GPU-1' } });
  assert.deepEqual(whereParts(r), [['node', 'n1'], ['gpu', 'GPU 0'], ['job', 'train'], ['mountpoint', '/data']]);
  assert.deepEqual(whereParts({ labels: { node: '', gpu: { x: 1 } } }), []);
  assert.deepEqual(whereParts({}), []);
  assert.equal(labelsText({ labels: { a: '1', b: '<b>' } }), 'a=1\nb=<b>');
  assert.equal(summaryText({ summary: 'hot', summary_zh: '过热' }, 'en'), 'hot');
  assert.equal(summaryText({ summary: 'hot', summary_zh: '过热' }, 'zh'), '过热');
  assert.equal(summaryText({ summary: 'hot', summary_zh: '' }, 'zh'), 'hot');
  assert.equal(summaryText({ summary: '', summary_zh: '过热' }, 'en'), '过热');
  assert.equal(summaryText({}, 'en'), '');
});

test('alerts: the log excerpt is strings only, bounded, and not on a resolution', () => {
  const lines = ['Traceback (most recent call last):', 7, { x: 1 }, '<script>alert(1)</script>', 'x'.repeat(900)];
  const got = logExcerpt({ state: 'firing', log_excerpt: lines });
  assert.deepEqual(got.slice(0, 2), ['Traceback (most recent call last):', '<script>alert(1)</script>']);
  assert.equal(got[2].length, 500);
  assert.equal(logExcerpt({ state: 'firing', log_excerpt: Array(50).fill('l') }).length, 20);
  assert.deepEqual(logExcerpt({ state: 'resolved', log_excerpt: ['a'] }), []);
  assert.deepEqual(logExcerpt({ state: 'firing', log_excerpt: 'not a list' }), []);
  assert.deepEqual(logExcerpt({}), []);
});

test('alerts: the diagnosis in the page\'s language, bounded, text only', () => {
  assert.equal(diagnosisOf({ diagnosis: {} }, 'en'), null);
  assert.equal(diagnosisOf({ diagnosis: 'x' }, 'en'), null);
  assert.equal(diagnosisOf({}, 'en'), null);
  const d = {
    summary: 'Probable cause: CUDA out of memory (71%)', summary_zh: '可能原因：显存不足',
    causes: [{ id: 'cuda_oom', title: 'CUDA out of memory', title_zh: '显存不足', confidence: 0.714,
      evidence: [{ signal: 'event:cuda_oom', text: 'log: cuda_oom', text_zh: '日志：cuda_oom' }],
      source: 'https://pytorch.org/docs/stable/notes/cuda.html' },
    { id: 'code_error', title: '<b>x</b>', confidence: 7, evidence: 'no', source: 'javascript:alert(1)' }],
    suggestions: [{ text: 'Halve the batch', text_zh: '减半', parameter: 'batch_size', current: '16', suggested: '8' }],
    log_templates: [{ template: 'RuntimeError: CUDA out of memory <*>', count: 3, severity: 'error', new: true }],
  };
  const en = diagnosisOf({ diagnosis: d }, 'en');
  assert.equal(en.summary, 'Probable cause: CUDA out of memory (71%)');
  assert.deepEqual(en.causes[0], { id: 'cuda_oom', title: 'CUDA out of memory', confidence: 71,
    evidence: ['log: cuda_oom'], source: 'https://pytorch.org/docs/stable/notes/cuda.html' });
  // Bounded and never a link that runs script; markup stays text.
  assert.equal(en.causes[1].confidence, 100);
  assert.equal(en.causes[1].source, '');
  assert.deepEqual(en.causes[1].evidence, []);
  assert.equal(en.causes[1].title, '<b>x</b>');
  assert.deepEqual(en.suggestion, { text: 'Halve the batch', parameter: 'batch_size', current: '16', suggested: '8' });
  assert.deepEqual(en.templates, [{ text: 'RuntimeError: CUDA out of memory <*>', count: 3, severity: 'error', isNew: true }]);
  const zh = diagnosisOf({ diagnosis: d }, 'zh');
  assert.equal(zh.summary, '可能原因：显存不足');
  assert.equal(zh.causes[0].title, '显存不足');
  assert.deepEqual(zh.causes[0].evidence, ['日志：cuda_oom']);
  assert.equal(zh.suggestion.text, '减半');
  const many = diagnosisOf({ diagnosis: { causes: Array(50).fill({ id: 'x', title: 'y'.repeat(1000) }) } }, 'en');
  assert.equal(many.causes.length, 5);
  assert.equal(many.causes[0].title.length, 300);
});

test('alerts: links to the GPU\'s charts, the job and its logs at the alert\'s time', () => {
  assert.equal(reachingRange(RANGES, 0), '5m');
  assert.equal(reachingRange(RANGES, 301), '15m');
  assert.equal(reachingRange(RANGES, 1e9), '7d');
  const r = rec({ started_at: at(20), labels: { node: 'n 1', gpu: '3', job: 'train&x', run: '1234-5678-abcd' } });
  const l = alertLinks(r, NOW, RANGES);
  // 20 minutes ago (and a minute before it): the last hour.
  assert.equal(l.gpu, '#range=1h&gpu=3');
  assert.equal(l.job, '#jobs&range=1h&id=1234-5678-abcd');
  assert.equal(l.logs, '#logs&range=1h&node=n+1&run=1234-5678-abcd');
  // The pages read them back as they parse their hash.
  assert.equal(gpuFromHash(l.gpu), '3');
  assert.equal(jobIdFromHash(l.job), '1234-5678-abcd');
  assert.deepEqual(parseLogsHash(l.logs), { node: 'n 1', job: '', run: '1234-5678-abcd', container: '', levels: [], search: '', regex: false });
  // A minute old: 5 m; 4.5 minutes: 15 m (a minute before the start too).
  assert.equal(alertLinks(rec({ started_at: at(1) }), NOW, RANGES).gpu, '#range=5m&gpu=0');
  assert.equal(alertLinks(rec({ started_at: at(4.5) }), NOW, RANGES).gpu, '#range=15m&gpu=0');
  // Older than the longest range: the last 7 days; no start known: the shortest.
  assert.equal(alertLinks(rec({ started_at: at(60 * 24 * 30) }), NOW, RANGES).gpu, '#range=7d&gpu=0');
  assert.equal(alertLinks(rec({ started_at: null }), NOW, RANGES).gpu, '#range=5m&gpu=0');
  // No GPU, no job: no links; a job without its run: no job link.
  assert.deepEqual(alertLinks(rec({ labels: { node: 'n1' } }), NOW, RANGES), { gpu: null, job: null, logs: null });
  assert.deepEqual(alertLinks(rec({ labels: { job: 'train' } }), NOW, RANGES), { gpu: null, job: null, logs: null });
  const noNode = alertLinks(rec({ labels: { job: 'j', run: 'r' } }), NOW, RANGES);
  assert.equal(noNode.logs, '#logs&range=15m&run=r');
  // Hostile label values stay inside their parameter.
  const evil = alertLinks(rec({ labels: { gpu: '0&range=7d', job: 'j', run: '#x&y=<img>' } }), NOW, RANGES);
  assert.equal(gpuFromHash(evil.gpu), '0&range=7d');
  assert.equal(jobIdFromHash(evil.job), '#x&y=<img>');
  assert.equal(overviewHash('1h', ''), '#range=1h');
  assert.equal(gpuFromHash('#range=1h'), '');
});

// ---------------------------------------------------------------------------
// Silences

const eq = (name, value) => ({ name, value, isRegex: false, isEqual: true });
const ne = (name, value) => ({ name, value, isRegex: false, isEqual: false });
const re = (name, value) => ({ name, value, isRegex: true, isEqual: true });
const nre = (name, value) => ({ name, value, isRegex: true, isEqual: false });
const parsed = (text) => {
  const r = parseMatchers(text);
  assert.equal(r.error, null, `${text}: ${JSON.stringify(r.error)}`);
  return r.matchers;
};
const refused = (text) => {
  const r = parseMatchers(text);
  assert.equal(r.matchers, null, `${text} was accepted: ${JSON.stringify(r.matchers)}`);
  return r.error;
};

test('silences: matchers as text, in Alertmanager\'s fields, quoted as the CLI prints them', () => {
  assert.deepEqual([eq('a', ''), ne('a', ''), re('a', ''), nre('a', '')].map(matcherOp), ['=', '!=', '=~', '!~']);
  // Alertmanager's defaults: isRegex false, isEqual true.
  assert.equal(matcherOp({ name: 'node', value: 'x' }), '=');
  assert.equal(matcherOp({ name: 'node', value: 'x', isEqual: false }), '!=');
  assert.equal(quoteValue('a"b\\c'), '"a\\"b\\\\c"');
  assert.equal(matcherText(eq('node', 'gpu-07')), 'node="gpu-07"');
  assert.equal(matchersText([eq('node', 'gpu-07'), re('alertname', 'gpu_.*')]), 'node="gpu-07", alertname=~"gpu_.*"');
  assert.equal(matchersText([ne('gpu', '3'), nre('job', 'test-.*')]), 'gpu!="3", job!~"test-.*"');
  assert.equal(matchersText(null), '');
  // Markup is a value like any other (the page shows it as text).
  assert.equal(matcherText(eq('job', '<img src=x onerror=alert(1)>')), 'job="<img src=x onerror=alert(1)>"');
  // Text and back: the same matchers, whatever the value holds.
  const hard = [eq('a', 'x y, z'), ne('b', 'say "hi"'), re('c', 'C:\\\\dir\\d+'), nre('d', '\\'), eq('e', ''), eq('f', '训练 {1,2}')];
  assert.deepEqual(parsed(matchersText(hard)), hard);
});

test('silences: typed matchers, every operator, separators, quoting', () => {
  // (Negative ones match an absent label: alone they would mute every alert.)
  const after = (text) => parsed(`node=n1 ${text}`).slice(1);
  assert.deepEqual(parsed('node=gpu-07'), [eq('node', 'gpu-07')]);
  assert.deepEqual(after('gpu!=3'), [ne('gpu', '3')]);
  assert.deepEqual(parsed('alertname=~gpu_.*'), [re('alertname', 'gpu_.*')]);
  assert.deepEqual(after('job!~test-.*'), [nre('job', 'test-.*')]);
  // Commas, spaces, both; braces as PromQL writes them; spaces around the operator.
  const four = [eq('node', 'gpu-07'), ne('gpu', '3'), re('alertname', 'gpu_.*'), nre('job', 'test-.*')];
  assert.deepEqual(parsed('node=gpu-07, gpu!=3,alertname=~gpu_.* job!~test-.*'), four);
  assert.deepEqual(parsed('  {node="gpu-07", gpu!="3", alertname=~"gpu_.*", job!~"test-.*"}  '), four);
  assert.deepEqual(parsed('node = gpu-07 ,, gpu != "3"\talertname =~ gpu_.*\njob!~ test-.*'), four);
  // Quotes are optional; in them, commas and spaces, \" and \\ (any \x is x, as the CLI reads it).
  assert.deepEqual(parsed('node="gpu-07"'), parsed('node=gpu-07'));
  assert.deepEqual(parsed('run="a b, c"'), [eq('run', 'a b, c')]);
  assert.deepEqual(parsed('msg="say \\"hi\\"" path="C:\\\\x"'), [eq('msg', 'say "hi"'), eq('path', 'C:\\x')]);
  assert.deepEqual(parsed('gpu=~"1|2"'), [re('gpu', '1|2')]);
  assert.deepEqual(parsed('node=n1 job!~""'), [eq('node', 'n1'), nre('job', '')]);
  // Bare, a value keeps its backslashes and everything up to a comma or a space.
  assert.deepEqual(parsed('node=~gpu\\d+'), [re('node', 'gpu\\d+')]);
  assert.deepEqual(parsed('a=b=c'), [eq('a', 'b=c')]);
  assert.deepEqual(parsed('a=x"y"'), [eq('a', 'x"y"')]);
  // An empty value: the label absent (with another matcher that selects).
  assert.deepEqual(parsed('job=, node=n1'), [eq('job', ''), eq('node', 'n1')]);
  assert.deepEqual(parsed('job="" node=n1'), [eq('job', ''), eq('node', 'n1')]);
  assert.deepEqual(parsed('_x9=1'), [eq('_x9', '1')]);
  assert.equal(parsed(Array.from({ length: MAX_MATCHERS }, (_, i) => `l${i}=v`).join(',')).length, 32);
});

test('silences: bad matchers say what is wrong', () => {
  assert.deepEqual(refused(''), { key: 'alerts.mx.empty', vars: {} });
  assert.deepEqual(refused(' , \t\n'), { key: 'alerts.mx.empty', vars: {} });
  assert.deepEqual(refused('node=n1 {}'), { key: 'alerts.mx.bad', vars: { text: '{}' } });
  assert.deepEqual(refused('{}'), { key: 'alerts.mx.empty', vars: {} });
  assert.deepEqual(refused('node'), { key: 'alerts.mx.bad', vars: { text: 'node' } });
  assert.deepEqual(refused('node=n1 gpu'), { key: 'alerts.mx.bad', vars: { text: 'gpu' } });
  assert.deepEqual(refused('node gpu-07'), { key: 'alerts.mx.bad', vars: { text: 'node' } });
  assert.deepEqual(refused('=x'), { key: 'alerts.mx.bad', vars: { text: '=x' } });
  assert.deepEqual(refused('node~x'), { key: 'alerts.mx.bad', vars: { text: 'node~x' } });
  assert.deepEqual(refused('node!x'), { key: 'alerts.mx.bad', vars: { text: 'node!x' } });
  assert.deepEqual(refused('gpu-id=3'), { key: 'alerts.mx.name', vars: { name: 'gpu-id' } });
  assert.deepEqual(refused('3gpu=3'), { key: 'alerts.mx.name', vars: { name: '3gpu' } });
  assert.deepEqual(refused('{node=n1'), { key: 'alerts.mx.name', vars: { name: '{node' } });
  assert.deepEqual(refused('node="gpu-07'), { key: 'alerts.mx.quote', vars: { text: 'node="gpu-07' } });
  assert.deepEqual(refused('node="a\\"'), { key: 'alerts.mx.quote', vars: { text: 'node="a\\"' } });
  assert.deepEqual(refused('node="a"b'), { key: 'alerts.mx.bad', vars: { text: 'node="a"b' } });
  assert.deepEqual(refused(Array.from({ length: 33 }, (_, i) => `l${i}=v`).join(' ')),
    { key: 'alerts.mx.tooMany', vars: { n: 33, max: 32 } });
  // Every matcher matching an empty value would mute every alert.
  for (const all of ['job!=x', 'job=', 'job=~.*', 'job!~x', 'job=~"" node!=n1', 'job=~"(a|)"']) {
    assert.deepEqual(refused(all), { key: 'alerts.mx.all', vars: {} }, all);
  }
  // One that selects is enough; RE2 syntax JavaScript cannot read is the server's to judge.
  assert.deepEqual(parsed('job!=x node=n1').length, 2);
  assert.deepEqual(parsed('job!~""'), [nre('job', '')]);
  assert.deepEqual(parsed('node=~"(?i)gpu.*"'), [re('node', '(?i)gpu.*')]);
  assert.deepEqual(parsed('node=~"("'), [re('node', '(')]);
  // A long bad word is cut in the message.
  assert.equal(refused(`${'x'.repeat(200)}`).vars.text.length, 80);
  // Every message exists in both languages, placeholders filled.
  const texts = ['', 'node', 'gpu-id=3', 'node="x', Array(33).fill('a=b').join(','), 'job!=x'].map((x) => refused(x));
  for (const l of ['en', 'zh']) {
    inLang(l, () => {
      for (const e of texts) {
        const msg = t(e.key, e.vars);
        assert.ok(msg !== e.key && !/\{\w+\}/.test(msg), `${l}: ${msg}`);
      }
    });
  }
  assert.equal(t('alerts.mx.bad', { text: 'node' }),
    '"node" is not a matcher: write name=value, name!=value, name=~regex or name!~regex.');
  assert.equal(inLang('zh', () => t('alerts.mx.name', { name: 'gpu-id' })), '“gpu-id”不是有效的标签名（字母、数字和 _，不能以数字开头）。');
});

test('silences: the list, newest first, with states, times and texts', () => {
  const body = [
    { id: 'old', status: { state: 'expired' }, matchers: [{ name: 'job', value: 'x', isRegex: true, isEqual: false }],
      startsAt: '2026-12-01T00:00:00Z', endsAt: '2026-12-01T02:00:00Z', createdAt: '2026-12-01T00:00:00Z', createdBy: 'c', comment: '' },
    { id: 'new', status: { state: 'active' }, matchers: [{ name: 'node', value: 'gpu-07' }, { name: 'alertname', value: 'gpu_.*', isRegex: true }],
      startsAt: '2026-12-02T02:05:39Z', endsAt: '2026-12-02T06:05:39.25Z', createdAt: '2026-12-02T02:05:39Z',
      createdBy: '<b>a</b>', comment: '<img src=x>' },
    { id: 'mid', status: { state: 'pending' }, matchers: 'bad', startsAt: 'tomorrow', createdAt: '2026-12-01T12:00:00Z', createdBy: 7 },
    null, 'x',
  ];
  const list = silencesFrom(body);
  assert.deepEqual(list.map((s) => `${s.id}:${s.state}`), ['new:active', 'mid:pending', 'old:expired']);
  assert.deepEqual(list[0], {
    id: 'new', state: 'active', matchers: [eq('node', 'gpu-07'), re('alertname', 'gpu_.*')],
    startsAt: Date.parse('2026-12-02T02:05:39Z'), endsAt: Date.parse('2026-12-02T06:05:39.250Z'),
    createdAt: Date.parse('2026-12-02T02:05:39Z'), createdBy: '<b>a</b>', comment: '<img src=x>',
  });
  assert.equal(matchersText(list[2].matchers), 'job!~"x"');
  assert.deepEqual(list[1].matchers, []);
  assert.ok(Number.isNaN(list[1].startsAt));
  assert.equal(list[1].createdBy, '');
  assert.deepEqual(silencesFrom({ not: 'a list' }), []);
  assert.deepEqual(list.map(silenceExpirable), [true, true, false]);
  assert.deepEqual(SILENCE_STATES.map((s) => silenceStateBadge(s).tone), ['green', 'blue', 'grey']);
  assert.deepEqual(silenceStateBadge('active'), { tone: 'green', key: 'alerts.silState.active', text: 'active' });
  assert.deepEqual(silenceStateBadge('odd'), { tone: 'grey', key: null, text: 'odd' });
  // Times relative to now: ahead and behind.
  assert.deepEqual(relativeTime(NOW + 4 * 3600e3, NOW), ['alerts.in', { d: '4h 0m' }]);
  assert.deepEqual(relativeTime(NOW - 90e3, NOW), ['alerts.ago', { d: '1m' }]);
  assert.equal(relativeTime(NaN, NOW), null);
  assert.equal(t(...relativeTime(NOW + 3600e3, NOW)), 'in 1h 0m');
  assert.equal(inLang('zh', () => t(...relativeTime(NOW + 3600e3, NOW))), '1 小时 0 分后');
});

test('silences: an alert\'s matchers, durations, the body of a new one', () => {
  assert.deepEqual(alertMatchers(rec({ labels: { alertname: 'gpu_temperature_high', severity: 'warning', node: 'n1', gpu: '3',
    UUID: 'GPU-3' } })), [eq('alertname', 'gpu_temperature_high'), eq('node', 'n1'), eq('gpu', '3')]);
  assert.deepEqual(alertMatchers(rec({ rule: 'job_crashed', labels: { node: 'n1', job: 'train', run: 'r1' } })),
    [eq('alertname', 'job_crashed'), eq('node', 'n1'), eq('job', 'train')]);
  assert.deepEqual(alertMatchers({ rule: 'x' }), [eq('alertname', 'x')]);
  // Hostile values stay values, and read back as they were.
  const evil = alertMatchers(rec({ labels: { alertname: 'a', node: '"n1", job=~".*', job: '<img src=x onerror=alert(1)>' } }));
  assert.deepEqual(parsed(matchersText(evil)), evil);
  // The form's durations as the server reads them (no w: a week is 7d).
  assert.deepEqual(SILENCE_DURATIONS.map(([, d]) => silenceDurationMs(d)), [3600e3, 4 * 3600e3, 86400e3, 7 * 86400e3]);
  assert.equal(silenceDurationMs('90m'), 90 * 60e3);
  assert.equal(silenceDurationMs(' 1h30m '), 90 * 60e3);
  assert.equal(silenceDurationMs('1d2h3m4s5ms'), 86400e3 + 2 * 3600e3 + 3 * 60e3 + 4e3 + 5);
  for (const bad of ['', '0m', '1w', '2 hours', 'h', '1.5h', '-1h', '1hm', '1234567890s', `${'1s'.repeat(17)}`]) {
    assert.ok(Number.isNaN(silenceDurationMs(bad)), bad);
  }
  assert.deepEqual(silenceBody({ matchers: [eq('node', 'n1'), nre('job', 'test-.*')], duration: ' 90m ', comment: 'c',
    createdBy: 'alice' }), { matchers: [eq('node', 'n1'), nre('job', 'test-.*')], duration: '90m', createdBy: 'alice', comment: 'c' });
  assert.deepEqual(silenceBody({ matchers: [{ name: 'a', value: 'b' }], duration: '1h' }),
    { matchers: [eq('a', 'b')], duration: '1h', createdBy: '', comment: '' });
});

test('silences: a silenced alert is muted: last among the firing, not counted', () => {
  const recs = [rec({ id: 'loud', severity: 'warning' }), rec({ id: 'hushed', severity: 'critical', silenced: true }),
    rec({ id: 'inh', severity: 'critical', inhibited: true })];
  assert.deepEqual(recs.map(alertMuted), [false, true, true]);
  assert.deepEqual(alertSections(recs).firing.map((r) => r.id), ['loud', 'hushed', 'inh']);
  assert.deepEqual(firingCount(recs), { count: 1, critical: 0, worst: 'warning' });
});

test('the Alerts tab\'s strings exist, translated, in both languages', () => {
  const { en, zh } = ALL;
  const src = ['alerts.js', 'alerts.model.js'].map((f) => readFileSync(new URL(`../src/pages/${f}`, import.meta.url), 'utf8')).join('\n');
  const keys = new Set();
  for (const m of src.matchAll(/'((?:alerts|nav)\.[\w.]+)'/g)) keys.add(m[1]);
  for (const c of [...ACTIVE_COLUMNS, ...HISTORY_COLUMNS]) keys.add(`alerts.col.${c}`);
  for (const c of RULE_COLUMNS) keys.add(`alerts.rcol.${c}`);
  for (const s of SEVERITIES) keys.add(`alerts.sev.${s}`);
  for (const s of ['firing', 'pending', 'inactive']) keys.add(`alerts.state.${s}`);
  for (const s of ['ok', 'err', 'unknown']) keys.add(`alerts.health.${s}`);
  for (const id of RULE_IDS) keys.add(`alerts.rule.${id}`);
  for (const c of SILENCE_COLUMNS) keys.add(`alerts.scol.${c}`);
  for (const s of SILENCE_STATES) keys.add(`alerts.silState.${s}`);
  for (const [d] of SILENCE_DURATIONS) keys.add(`alerts.dur.${d}`);
  for (const m of TEMPLATE_MARKS) keys.add(`alerts.diag.${m}`);
  for (const k of ['alerts.col.', 'alerts.rcol.', 'alerts.scol.']) keys.delete(k); // the columns' prefixes
  assert.ok(keys.size > 60, `found ${keys.size} keys`);
  for (const k of keys) {
    assert.ok(k in en, `English lacks ${k}`);
    assert.ok(k in zh, `Chinese lacks ${k}`);
    assert.notEqual(zh[k], en[k], `${k} is not translated`);
  }
  // Every key of the table is used.
  const table = Object.keys(en).filter((k) => k.startsWith('alerts.'));
  for (const k of table) assert.ok(keys.has(k), `${k} is not used`);
});

test('templates are ordered errors first, then new ones, then by count, with their marks', () => {
  const ts = [
    { text: 'step <*> loss <*>', count: 900, severity: 'info', isNew: false },
    { text: 'NCCL WARN <*>', count: 4, severity: 'warn', isNew: true },
    { text: 'RuntimeError: CUDA error: <*>', count: 2, severity: 'error', isNew: false },
    { text: 'epoch <*> done', count: 30, severity: 'info', isNew: false },
  ];
  const lines = orderedTemplates(ts).map((x) => templateLine(x.count, templateMarks(x), x.text));
  assert.deepEqual(lines, [
    '×2 [error] RuntimeError: CUDA error: <*>',
    '×4 [warn, new] NCCL WARN <*>',
    '×900 step <*> loss <*>',
    '×30 epoch <*> done',
  ]);
  assert.equal(ts[0].count, 900);  // the input is not reordered
});
