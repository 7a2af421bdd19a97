// Unit tests of the UI's pure parts (no browser): query windows, alignment of
// Prometheus matrices, formatting of numbers and times, the page registry,
// both languages having every string in every table (shared and per page)
// and every key the sources use, the log explorer's LogQL building,
// highlights, histogram shaping and paging; the pages' models are tested in
// overview.model.test.mjs, jobs.model.test.mjs, jobs.efficiency.test.mjs, alerts.model.test.mjs,
// inbox.model.test.mjs, actions.model.test.mjs and settings.model.test.mjs, run from here.
// Run: node --test web/test/unit.test.mjs
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { alignValues, lastValue, pickStep, sumAligned, timeAxis, windowFor } from '../src/api.js';
import { bytes, clock, clockSeconds, compact, dateTime, lineTime, percent, rate, shortTime } from '../src/format.js';
import { LANGS, addStrings, t } from '../src/i18n.js';
import { pageForHash, pageHash, pages, registerPage } from '../src/registry.js';
import { ALL, PAGE_TABLES, TABLES } from './i18n_tables.mjs';
import './overview.model.test.mjs';
import './jobs.model.test.mjs';
import './jobs.efficiency.test.mjs';
import './alerts.model.test.mjs';
import './inbox.model.test.mjs';
import './actions.model.test.mjs';
import './settings.model.test.mjs';
import {
  FLAGS, LEVELS, PAGE, buildQuery, compareEntries, histogramStep, logsHash, makeMatcher, nsToMs, nsToSec,
  olderPage, parseLogsHash, quote, reEscape, shapeHistogram, splitHighlights,
} from '../src/pages/logs.model.js';

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

test('times: local, 24 h, with the date when asked, – when unknown', () => {
  const ms = new Date(2025, 10, 3, 4, 5, 9, 7).getTime(); // local time
  assert.equal(dateTime(ms), '2025-11-03 04:05:09');
  assert.equal(shortTime(ms), '04:05:09');
  assert.equal(shortTime(ms, true), '11-03 04:05:09');
  assert.equal(lineTime(ms), '04:05:09.007');
  assert.equal(lineTime(ms, true), '11-03 04:05:09.007');
  assert.equal(clock(ms / 1000), '04:05');
  assert.equal(clock(ms / 1000, true), '11-03 04:05');
  assert.equal(clockSeconds(ms / 1000), '04:05:09');
  assert.equal(dateTime(NaN), '–');
  assert.equal(shortTime(NaN, true), '–');
});

// ---------------------------------------------------------------------------
// Translations: shared and per page

test('every table has the same strings in English and Chinese, placeholders included', () => {
  assert.deepEqual(LANGS, ['en', 'zh']);
  assert.deepEqual(TABLES.map((x) => x.name), ['shared', ...PAGE_TABLES.map((f) => f.replace('.i18n.js', ''))]);
  assert.ok(PAGE_TABLES.length >= 3, PAGE_TABLES.join(' '));
  const vars = (s) => (s.match(/\{\w+\}/g) ?? []).sort();
  for (const { name, en, zh } of TABLES) {
    assert.deepEqual(Object.keys(zh).sort(), Object.keys(en).sort(), `${name}: the same keys`);
    for (const k of Object.keys(en)) {
      assert.equal(typeof en[k], 'string', `${name}: ${k}`);
      assert.deepEqual(vars(zh[k]), vars(en[k]), `${name}: ${k}`);
    }
  }
  assert.equal(t('gpuOk', { n: 8, model: 'M', driver: 'd', cuda: 'c' }), '8 GPUs detected · M · driver d · CUDA c');
  assert.equal(t('jobs.exitCode', { code: 1 }), 'code 1', 'a page\'s strings are found once added');
});

test('a key lives in one table only', () => {
  const seen = new Map();
  for (const { name, en } of TABLES) {
    for (const k of Object.keys(en)) {
      assert.ok(!seen.has(k), `${k} is in ${seen.get(k)} and ${name}`);
      seen.set(k, name);
    }
  }
  assert.throws(() => addStrings('again', { en: { 'jobs.title': 'x' }, zh: { 'jobs.title': 'x' } }), /redefines jobs\.title/);
  assert.throws(() => addStrings('half', { en: { 'half.x': 'x' } }), /no zh strings/);
  assert.throws(() => addStrings('shared', { en: {}, zh: {} }), /added twice/);
});

// Every literal key the sources use: t('k'), T('k'), and the i18n keys of
// chart specs and page registrations (title:, key:, label:).
test('every key the sources use exists in both languages', () => {
  const files = [];
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) walk(new URL(`${e.name}/`, dir));
      else if (e.name.endsWith('.js') && !e.name.endsWith('.i18n.js')) files.push(new URL(e.name, dir));
    }
  };
  walk(new URL('../src/', import.meta.url));
  const keys = new Set();
  for (const f of files) {
    const src = readFileSync(f, 'utf8');
    for (const m of src.matchAll(/\b(?:t|T)\('([\w.]+)'/g)) keys.add(m[1]);
    for (const m of src.matchAll(/\b(?:title|key|label): '([\w.]+)'/g)) keys.add(m[1]);
  }
  assert.ok(keys.size > 120, `found ${keys.size} keys`);
  for (const k of keys) {
    assert.ok(k in ALL.en, `English lacks ${k}`);
    assert.ok(k in ALL.zh, `Chinese lacks ${k}`);
  }
});

// ---------------------------------------------------------------------------
// The page registry (the pages themselves need a browser; these are stand-ins)

test('pages register once, with a hash of their own; the hash picks the page', () => {
  const noop = () => ({ el: null, show() {}, hide() {} });
  assert.equal(pages().length, 0);
  registerPage({ id: 'home', hash: '', label: 'test.nav.home', create: noop,
    strings: { en: { 'test.nav.home': 'Home' }, zh: { 'test.nav.home': '首页' } } });
  registerPage({ id: 'alpha', hash: 'alpha', label: 'test.nav.alpha', rangePicker: false, create: noop });
  registerPage({ id: 'beta-2', hash: 'beta-2', label: 'test.nav.beta', create: noop });
  assert.throws(() => registerPage({ id: 'alpha', hash: 'other', label: 'x', create: noop }), /twice/);
  assert.throws(() => registerPage({ id: 'gamma', hash: 'alpha', label: 'x', create: noop }), /takes #alpha/);
  assert.throws(() => registerPage({ id: 'delta', hash: 'delta', label: 'x' }), /needs/);
  assert.throws(() => registerPage({ id: 'eps', hash: 'a&b', label: 'x', create: noop }), /bad hash/);
  assert.deepEqual(pages().map((p) => [p.id, p.rangePicker]), [['home', true], ['alpha', false], ['beta-2', true]]);
  assert.equal(t('test.nav.home'), 'Home', 'its strings are added');
  const id = (hash) => pageForHash(hash).id;
  assert.equal(id('#alpha'), 'alpha');
  assert.equal(id('#alpha&range=1h&id=x'), 'alpha');
  assert.equal(id('#beta-2&range=5m'), 'beta-2');
  assert.equal(id('#alphabet'), 'home');
  assert.equal(id('#range=1h'), 'home');
  assert.equal(id(''), 'home');
  assert.equal(id('#nosuch&range=1h'), 'home');
  assert.equal(pageHash(pageForHash('#alpha'), '1h'), '#alpha&range=1h');
  assert.equal(pageHash(pageForHash(''), '7d'), '#range=7d');
});

// ---------------------------------------------------------------------------
// Log explorer

test('filters become LogQL with quotes and backslashes escaped', () => {
  const base = { node: '', job: '', container: '', levels: [], search: '', regex: false };
  assert.equal(buildQuery(base), '{}');
  assert.equal(buildQuery({ ...base, job: 'train' }), '{job="train"}');
  assert.equal(buildQuery({ ...base, node: 'gpu-1', job: 'train', container: 'c1' }),
    '{node="gpu-1", job="train", container="c1"}');
  assert.equal(buildQuery({ ...base, levels: ['error'] }), '{level="error"}');
  // Levels in a fixed order whatever order they were clicked in; all = none.
  assert.equal(buildQuery({ ...base, levels: ['error', 'warn'] }), '{level=~"warn|error"}');
  assert.equal(buildQuery({ ...base, levels: [...LEVELS] }), '{}');
  assert.equal(buildQuery({ ...base, search: 'CUDA out of memory' }), '{} |= "CUDA out of memory"');
  assert.equal(buildQuery({ ...base, job: 'a"b\\c', search: 'say "hi" C:\\dir' }),
    '{job="a\\"b\\\\c"} |= "say \\"hi\\" C:\\\\dir"');
  assert.equal(buildQuery({ ...base, search: 'step \\d+ "x"', regex: true }), '{} |~ "step \\\\d+ \\"x\\""');
  assert.equal(buildQuery({ ...base, job: 'j', levels: ['warn'], search: 'loss', regex: false }),
    '{job="j", level="warn"} |= "loss"');
  assert.equal(quote('a\nb\tc\u0001训练'), '"a\\nb\\tc\\u0001训练"');
  assert.equal(reEscape('a.b*(c)'), 'a\\.b\\*\\(c\\)');
});

test('filters round-trip through the URL hash', () => {
  const f = { node: 'n 1', job: 'tr&ain', run: '42-7-ab', container: '', levels: ['warn', 'error'], search: 'a=b #c', regex: true };
  const hash = logsHash('1h', f);
  assert.match(hash, /^#logs&range=1h&/);
  assert.deepEqual(parseLogsHash(hash), f);
  assert.deepEqual(parseLogsHash('#logs'), { node: '', job: '', run: '', container: '', levels: [], search: '', regex: false });
  // One run of a sweep: its id narrows the selector.
  assert.equal(buildQuery({ ...f, search: '', levels: [] }), '{node="n 1", job="tr&ain", run="42-7-ab"}');
  assert.deepEqual(parseLogsHash('#logs&level=warn,bogus').levels, ['warn']);
});

test('highlights split text into marked and plain segments that join back', () => {
  const join = (segs) => segs.map((s) => s.text).join('');
  const text = 'loss=1.5 loss=NaN <b>loss</b>';
  const kw = splitHighlights(text, makeMatcher('loss', false));
  assert.equal(join(kw), text);
  assert.deepEqual(kw.filter((s) => s.hit).map((s) => s.text), ['loss', 'loss', 'loss']);
  assert.deepEqual(kw[0], { text: 'loss', hit: true });
  // Keyword search is case-sensitive, like |=.
  assert.deepEqual(splitHighlights('LOSS', makeMatcher('loss', false)), [{ text: 'LOSS', hit: false }]);
  const re = splitHighlights('step 12 step 345', makeMatcher('step [0-9]+', true));
  assert.deepEqual(re.filter((s) => s.hit).map((s) => s.text), ['step 12', 'step 345']);
  assert.equal(join(re), 'step 12 step 345');
  // RE2's (?i) flag becomes JavaScript's i flag.
  const ci = splitHighlights('NaN nan', makeMatcher('(?i)nan', true));
  assert.deepEqual(ci.filter((s) => s.hit).map((s) => s.text), ['NaN', 'nan']);
  // Empty matches mark nothing and don't loop; bad or risky patterns don't highlight.
  assert.deepEqual(splitHighlights('abc', makeMatcher('x*', true)), [{ text: 'abc', hit: false }]);
  assert.equal(makeMatcher('(', true), null);
  assert.equal(makeMatcher('(a+)+$', true), null);
  assert.equal(makeMatcher('', false), null);
  assert.deepEqual(splitHighlights('abc', null), [{ text: 'abc', hit: false }]);
  // Multiline records keep their newlines.
  assert.equal(join(splitHighlights('Traceback\n  File "x"\nError', makeMatcher('File', false))), 'Traceback\n  File "x"\nError');
  // A match count past the cap leaves the rest plain, still complete.
  const many = 'a'.repeat(1000);
  const segs = splitHighlights(many, makeMatcher('a', false));
  assert.equal(join(segs), many);
  assert.equal(segs.filter((s) => s.hit).length, 200);
});

test('histogram buckets become stacked bars in level order', () => {
  const data = {
    start: '1700000000000000000', step: '60000000000',
    // Shuffled level order: the shaping must follow names, not positions.
    levels: ['info', 'unknown', 'trace', 'debug', 'warn', 'error', 'fatal'],
    buckets: [[120, 1, 0, 0, 3, 1, 0], [0, 0, 0, 0, 0, 0, 0], [5, 0, 0, 2, 0, 0, 1]],
  };
  const s = shapeHistogram(data);
  assert.equal(s.start, 1700000000);
  assert.equal(s.step, 60);
  assert.deepEqual(s.bars.map((b) => b.t), [1700000000, 1700000060, 1700000120]);
  // LEVELS order: unknown, trace, debug, info, warn, error, fatal
  assert.deepEqual(s.bars[0].counts, [1, 0, 0, 120, 3, 1, 0]);
  assert.deepEqual(s.bars.map((b) => b.total), [125, 0, 8]);
  assert.equal(s.max, 125);
  assert.equal(s.total, 133);
  assert.equal(s.totals.info, 125);
  assert.equal(s.totals.fatal, 1);
  assert.deepEqual(shapeHistogram(null).bars, []);
  for (const [range, want] of [[300, 5], [900, 10], [3600, 60], [21600, 300], [86400, 1200], [604800, 7200]]) {
    const step = histogramStep(range);
    assert.equal(step, want, `${range}s`);
    assert.ok(range / step >= 40 && range / step <= 90, `${range}s: ${range / step} bars`);
  }
});

test('times, ordering and the older-page cursor', () => {
  assert.equal(nsToSec('1700000000123456789'), 1700000000.123456789);
  assert.equal(nsToMs('1700000000500000000'), 1700000000500);
  assert.equal(nsToSec('bogus'), 0);
  const e = (ts, seq) => ({ ts, seq });
  const sorted = [e('1700000000000000002', '9'), e('1700000000000000001', '7'), e('1700000000000000001', '3')]
    .sort(compareEntries);
  assert.deepEqual(sorted.map((x) => x.seq), ['3', '7', '9']);
  // The next page ends just after the oldest timestamp and asks for the
  // lines already shown at it on top of a page (they are dropped by seq).
  const p = olderPage(sorted);
  assert.deepEqual(p, { end: '1700000000000000002', limit: PAGE + 2, strictEnd: '1700000000000000001' });
  assert.equal(olderPage([]), null);
});

test('the log explorer\'s strings exist, translated, in both languages', async () => {
  const { readFile } = await import('node:fs/promises');
  const { en, zh } = ALL;
  const keys = new Set();
  for (const f of ['pages/logs.js', 'pages/logs.histogram.js', 'pages/logs.volume.js']) {
    const src = await readFile(new URL(`../src/${f}`, import.meta.url), 'utf8');
    for (const m of src.matchAll(/\b(?:t|T)\('([\w.]+)'/g)) keys.add(m[1]);
    for (const m of src.matchAll(/'((?:logs|nav)\.[\w.]+)'/g)) keys.add(m[1]);
  }
  for (const l of LEVELS) keys.add(`level.${l}`);
  for (const f of FLAGS) { keys.add(`logflag.${f}`); keys.add(`logflag.${f}.title`); }
  for (const c of ['source', 'lines', 'bytes', 'sampled', 'filtered', 'truncated']) keys.add(`logs.col.${c}`);
  keys.delete('logs.col.'); // the columns' prefix
  assert.ok(keys.size > 50, `found ${keys.size} keys`);
  for (const k of keys) {
    assert.ok(k in en, `English lacks ${k}`);
    assert.ok(k in zh, `Chinese lacks ${k}`);
    if (k.startsWith('logs.') && !/^logs\.(query|contextN)$/.test(k)) assert.notEqual(zh[k], en[k], `${k} is not translated`);
  }
});
