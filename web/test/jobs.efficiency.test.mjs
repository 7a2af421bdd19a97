// Unit tests of a job's efficiency section (pages/jobs.efficiency.js, no
// DOM): the bar's segments and legend from the report's shares, the facts
// (GPU-hours, idle GPU-hours, cost, SM/tensor activity, '–' or "not
// reported" where the server sent null), the coverage note, the request's
// parameters, and that every string the section uses exists in both
// languages. Run from unit.test.mjs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setLang, t } from '../src/i18n.js';
import {
  EFF_CLASSES, efficiencyOf, efficiencyParams, efficiencyView, factText, gpuHours, measuredNote, money, sharePct,
} from '../src/pages/jobs.efficiency.js';
import { ALL } from './i18n_tables.mjs';

// As GET /api/v1/jobs/efficiency writes it (docs/jobs.md "Efficiency").
const REPORT = {
  start_ms: 1764460800000, end_ms: 1764464400000, step_ms: 15000, gpus: 2, gpu_hours: 2,
  measured: 1, shares: { gpu_busy: 0.62, input_bound: 0.3, communication: 0, idle: 0.08 },
  idle_gpu_hours: 0.16, sm_active: 0.41, tensor_active: null,
  cost: { price_per_gpu_hour: 2.5, currency: 'USD', total: 5, idle: 0.4 }, final: true,
  summary: 'GPU busy 62%, input-bound 30%, idle 8% (0.16 GPU-h idle, about 0.40 USD); SM active 41%',
};

test('efficiency: the bar has the four classes in order, with shares and GPU-hours', () => {
  const v = efficiencyView(REPORT);
  assert.deepEqual(v.segments.map((s) => [s.field, s.pct, s.hours, s.tone]), [
    ['gpu_busy', '62%', '1.24', 'green'], ['input_bound', '30%', '0.60', 'amber'],
    ['communication', '0%', '0.00', 'blue'], ['idle', '8%', '0.16', 'grey'],
  ]);
  assert.equal(v.partial, false);
  assert.equal(measuredNote(v), '');
  // A running job's report is partial.
  assert.equal(efficiencyView({ ...REPORT, final: false }).partial, true);
  // Shares out of range are clamped; a missing one is 0.
  const odd = efficiencyView({ ...REPORT, shares: { gpu_busy: 1.2, idle: -0.1 } });
  assert.deepEqual(odd.segments.map((s) => s.share), [1, 0, 0, 0]);
});

test('efficiency: facts say what was reported and only that', () => {
  setLang('en');
  const facts = (r) => Object.fromEntries(efficiencyView(r).facts.map(([k, v]) => [k, factText(v, t)]));
  assert.deepEqual(facts(REPORT), {
    'jobs.eff.gpuHours': '2.00', 'jobs.eff.idleHours': '0.16',
    'jobs.eff.cost': '5.00 USD, of which idle 0.40 USD',
    'jobs.eff.sm': '41%', 'jobs.eff.tensor': 'not reported by these GPUs',
  });
  // Not priced: said so, not a cost of 0.
  assert.equal(facts({ ...REPORT, cost: null })['jobs.eff.cost'], 'not priced (alerts.price_per_gpu_hour is 0)');
  // No SM series either.
  assert.equal(facts({ ...REPORT, sm_active: null })['jobs.eff.sm'], 'not reported by these GPUs');
  setLang('zh');
  assert.equal(facts(REPORT)['jobs.eff.cost'], '5.00 USD，其中空闲 0.40 USD');
  assert.equal(t('jobs.eff.segment', { label: t('jobs.eff.input'), pct: '30%', hours: '0.60' }), '等待输入：30%（0.60 GPU 小时）');
  setLang('en');
});

test('efficiency: no shares, no section; a partly measured job says so', () => {
  assert.equal(efficiencyView(null), null);
  assert.equal(efficiencyView({ ...REPORT, shares: null }), null);
  assert.equal(efficiencyView({ gpus: 0, gpu_hours: 0, shares: 'x' }), null);
  assert.equal(measuredNote(efficiencyView({ ...REPORT, measured: 0.5 })), '50%');
  assert.equal(measuredNote(efficiencyView({ ...REPORT, measured: 0.95 })), '');
  assert.equal(measuredNote(null), '');
  assert.equal(efficiencyOf({ data: { efficiency: REPORT } }), REPORT);
  assert.equal(efficiencyOf({ data: { efficiency: null } }), null);
  assert.equal(efficiencyOf(null), null);
});

test('efficiency: numbers are formatted, never invented', () => {
  assert.equal(sharePct(0.625), '63%');
  assert.equal(sharePct(null), '–');
  assert.equal(gpuHours(12.345), '12.3');
  assert.equal(gpuHours(0.044), '0.04');
  assert.equal(gpuHours(NaN), '–');
  assert.equal(money(0.4, 'CNY'), '0.40 CNY');
  assert.equal(money(null, 'USD'), '–');
  assert.deepEqual(efficiencyParams({ id: 'run-1', node: 'gpu-1' }), { id: 'run-1', node: 'gpu-1' });
  assert.deepEqual(efficiencyParams({ id: 7 }), { id: '7' });
});

test('efficiency: every string the section uses exists in both languages', () => {
  const keys = [...EFF_CLASSES.map((c) => c.label), ...efficiencyView(REPORT).facts.map(([k]) => k),
    'jobs.eff.title', 'jobs.eff.hint', 'jobs.eff.partial', 'jobs.eff.none', 'jobs.eff.failed', 'jobs.eff.segment',
    'jobs.eff.hoursValue', 'jobs.eff.costValue', 'jobs.eff.notPriced', 'jobs.eff.notReported', 'jobs.eff.measured'];
  for (const k of keys) {
    assert.ok(ALL.en[k], `English lacks ${k}`);
    assert.ok(ALL.zh[k], `Chinese lacks ${k}`);
    assert.notEqual(ALL.zh[k], ALL.en[k], `${k} is not translated`);
  }
});
