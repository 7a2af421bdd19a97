// Unit tests of the UI's pure parts (no browser): query windows, alignment of
// Prometheus matrices, formatting, and that both languages have every string.
// Run: node --test web/test/unit.test.mjs
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { alignValues, lastValue, pickStep, sumAligned, timeAxis, windowFor } from '../src/api.js';
import { bytes, compact, percent, rate } from '../src/format.js';
import { STRINGS_FOR_TEST, t } from '../src/i18n.js';

test('every range gets 140-300 points and an aligned window', () => {
  for (const range of [300, 900, 3600, 21600, 86400, 604800]) {
    const w = windowFor(range, 1796007975123);
    assert.equal(w.end - w.start, range);
    assert.equal(w.end % w.step, 0);
    const points = range / w.step + 1;
    assert.ok(points >= 140 && points <= 301, `${range}s: ${points} points`);
  }
  assert.equal(pickStep(300), 2);
  assert.equal(pickStep(604800), 3600);
});

test('matrix values land on the window axis, gaps stay null', () => {
  const win = { start: 100, end: 110, step: 2 };
  const xs = timeAxis(win);
  assert.deepEqual(xs, [100, 102, 104, 106, 108, 110]);
  const s = { metric: {}, values: [[100, '1'], [104, '3.5'], [110, 'NaN'], [112, '9']] };
  assert.deepEqual(alignValues(s, win, xs), [1, null, 3.5, null, null, null]);
  assert.deepEqual(sumAligned([[1, null, 2], [1, null, null]], 3), [2, null, 2]);
  assert.equal(lastValue([1, 2, null]), 2);
  assert.ok(Number.isNaN(lastValue([null])));
});

test('formatting', () => {
  assert.equal(bytes(81559 * 1048576, 0), '80 GiB');
  assert.equal(rate(180000 * 1024), '184 MB/s');
  assert.equal(percent(96.6), '97%');
  assert.equal(percent(NaN), '–');
  assert.equal(compact(1500000), '1.5M');
});

test('English and Chinese have the same strings, placeholders included', () => {
  const { en, zh } = STRINGS_FOR_TEST;
  assert.deepEqual(Object.keys(zh).sort(), Object.keys(en).sort());
  const vars = (s) => (s.match(/\{\w+\}/g) ?? []).sort();
  for (const k of Object.keys(en)) assert.deepEqual(vars(zh[k]), vars(en[k]), k);
  assert.equal(t('gpuOk', { n: 8, model: 'M', driver: 'd', cuda: 'c' }), '8 GPUs detected · M · driver d · CUDA c');
});
