// Unit tests of the UI's pure parts (no browser): query windows, alignment of
// Prometheus matrices, formatting, both languages having every string, the
// log explorer's LogQL building, highlights, histogram shaping and paging, and
// the Jobs tab's state badges, time axis, throughput choice, durations, links,
// its GPUs, its other training series and the node's events.
// Run: node --test web/test/unit.test.mjs
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { alignValues, lastValue, pickStep, sumAligned, timeAxis, windowFor } from '../src/api.js';
import { bytes, compact, percent, rate } from '../src/format.js';
import { STRINGS_FOR_TEST, duration, setLang, t } from '../src/i18n.js';
import {
  CANONICAL_TRAINING, MAX_EXTRA, STATES, chartRefreshMs, eventText, eventTone, eventsWindow, extraTitle,
  extraTrainingNames, gpuFilter, gpuSummary, jobDurationSec, jobGpus, jobIdFromHash, jobWindow, jobsHash,
  logsLinkFor, nodeEventTexts, parseSelector, sig, sortJobs, stateBadge, throughputToShow, trainingSelector,
  trainingSeriesSelector,
} from '../src/jobs.js';
import {
  FLAGS, LEVELS, PAGE, buildQuery, compareEntries, histogramStep, logsHash, makeMatcher, nsToMs, nsToSec,
  olderPage, parseLogsHash, quote, reEscape, shapeHistogram, splitHighlights,
} from '../src/logql.js';

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
  const f = { node: 'n 1', job: 'tr&ain', container: '', levels: ['warn', 'error'], search: 'a=b #c', regex: true };
  const hash = logsHash('1h', f);
  assert.match(hash, /^#logs&range=1h&/);
  assert.deepEqual(parseLogsHash(hash), f);
  assert.deepEqual(parseLogsHash('#logs'), { node: '', job: '', container: '', levels: [], search: '', regex: false });
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

test('the log explorer\'s strings exist in both languages', async () => {
  const { readFile } = await import('node:fs/promises');
  const { en, zh } = STRINGS_FOR_TEST;
  const keys = new Set();
  for (const f of ['logs.js', 'histogram.js', 'volume.js', 'main.js']) {
    const src = await readFile(new URL(`../src/${f}`, import.meta.url), 'utf8');
    for (const m of src.matchAll(/\b(?:t|T)\('([\w.]+)'/g)) keys.add(m[1]);
    for (const m of src.matchAll(/'((?:logs|nav)\.[\w.]+)'/g)) keys.add(m[1]);
  }
  for (const l of LEVELS) keys.add(`level.${l}`);
  for (const f of FLAGS) { keys.add(`logflag.${f}`); keys.add(`logflag.${f}.title`); }
  for (const c of ['source', 'lines', 'bytes', 'sampled', 'filtered', 'truncated']) keys.add(`logs.col.${c}`);
  assert.ok(keys.size > 60, `found ${keys.size} keys`);
  for (const k of keys) {
    assert.ok(k in en, `English lacks ${k}`);
    assert.ok(k in zh, `Chinese lacks ${k}`);
    if (k.startsWith('logs.') && !/^logs\.(query|contextN)$/.test(k)) assert.notEqual(zh[k], en[k], `${k} is not translated`);
  }
});

// ---------------------------------------------------------------------------
// Jobs tab

test('job states get their badge colour', () => {
  const tones = Object.fromEntries(STATES.map((s) => [s, stateBadge(s).tone]));
  assert.deepEqual(tones, { running: 'green', stalled: 'amber', completed: 'blue', crashed: 'red', killed: 'grey', exited: 'grey', unknown: 'grey' });
  assert.equal(stateBadge('unknown').key, 'jobstate.unknown');
  assert.equal(stateBadge('running').key, 'jobstate.running');
  // A state this UI does not know yet is grey and shown as the server wrote it.
  assert.deepEqual(stateBadge('paused'), { tone: 'grey', key: null, text: 'paused' });
  assert.deepEqual(stateBadge(undefined), { tone: 'grey', key: null, text: '' });
});

test('throughput charts: the series that have values, tokens first', () => {
  assert.deepEqual(throughputToShow({ tokens: [null, 5], samples: [1], iterations: [null] }), ['tokens', 'samples']);
  assert.deepEqual(throughputToShow({ iterations: [2], samples: [null, null] }), ['iterations']);
  assert.deepEqual(throughputToShow({ samples: [NaN] }), []);
  assert.deepEqual(throughputToShow({}), []);
  assert.deepEqual(throughputToShow(null), []);
});

test('a job\'s time axis runs from its start to its end, or now', () => {
  const now = 1796007975123;
  const start = now - 3600 * 1000;
  // A running job: up to the last whole step before now, about 240 points.
  const live = jobWindow({ state: 'running', start_time_ms: start, end_time_ms: null }, now);
  assert.equal(live.live, true);
  assert.equal(live.step, 15);
  assert.ok(live.start <= start / 1000 && live.start > start / 1000 - live.step);
  assert.ok(live.end <= now / 1000 && live.end > now / 1000 - live.step);
  assert.equal(live.start % live.step, 0);
  assert.equal(live.end % live.step, 0);
  assert.equal(chartRefreshMs(live), 15000);
  // A finished job: its end is on the axis; no refresh.
  const end = start + 600 * 1000 + 500;
  const done = jobWindow({ state: 'crashed', start_time_ms: start, end_time_ms: end }, now);
  assert.equal(done.live, false);
  assert.ok(done.end >= end / 1000 && done.end - done.step < end / 1000);
  const points = (done.end - done.start) / done.step;
  assert.ok(points >= 90 && points <= 301, `${points} points`);
  assert.equal(chartRefreshMs(done), null);
  // Over without an end time: it ends when last seen.
  const seen = jobWindow({ state: 'exited', start_time_ms: start, end_time_ms: null, last_seen_ms: start + 1200e3 }, now);
  assert.ok(seen.end >= (start + 1200e3) / 1000 && seen.end < now / 1000 - 600);
  // Just started: at least a minute, and never an empty axis.
  const young = jobWindow({ state: 'running', start_time_ms: now - 2000, end_time_ms: null }, now);
  assert.ok(young.end > young.start);
  assert.ok(young.end - young.start >= 55, `${young.end - young.start}s`);
  assert.equal(chartRefreshMs(young), 2000);
  // No start time: its last hour rather than no axis.
  const nostart = jobWindow({ state: 'running' }, now);
  assert.ok(Number.isFinite(nostart.start) && nostart.end - nostart.start >= 3500);
  // Weeks: still a few hundred points at most.
  const long = jobWindow({ state: 'running', start_time_ms: now - 30 * 86400e3, end_time_ms: null }, now);
  assert.ok((long.end - long.start) / long.step <= 301, `${(long.end - long.start) / long.step} points`);
});

test('job durations', () => {
  const now = 1796007975123;
  const job = (o) => ({ state: 'completed', start_time_ms: now - 7384e3, end_time_ms: now - 1000e3, ...o });
  assert.equal(jobDurationSec(job(), now), 6384);
  assert.equal(duration(jobDurationSec(job(), now)), '1h 46m');
  assert.equal(duration(jobDurationSec(job({ state: 'running', end_time_ms: null }), now)), '2h 3m');
  assert.equal(duration(jobDurationSec(job({ end_time_ms: now - 7339e3 }), now)), '45s');
  assert.equal(duration(jobDurationSec(job({ start_time_ms: now - 3 * 86400e3 - 7200e3, end_time_ms: now }), now)), '3d 2h');
  assert.ok(Number.isNaN(jobDurationSec({ state: 'running' }, now)));
  // setLang marks <html lang>: a stand-in document for node.
  globalThis.document ??= { documentElement: {} };
  setLang('zh');
  try {
    assert.equal(duration(jobDurationSec(job(), now)), '1 小时 46 分');
  } finally { setLang('en'); }
});

test('jobs: sorting, URL, the logs link, PromQL selectors, event text', () => {
  const jobs = [
    { id: 'a', state: 'completed', start_time_ms: 300 }, { id: 'b', state: 'running', start_time_ms: 100 },
    { id: 'c', state: 'crashed', start_time_ms: 200 }, { id: 'd', state: 'stalled', start_time_ms: 150 }];
  assert.deepEqual(sortJobs(jobs).map((j) => j.id), ['d', 'b', 'a', 'c']);
  assert.equal(jobsHash('1h', '4242-1764460800000'), '#jobs&range=1h&id=4242-1764460800000');
  assert.equal(jobIdFromHash('#jobs&range=1h&id=a%26b%3D%3Cc%3E'), 'a&b=<c>');
  assert.equal(jobIdFromHash(jobsHash('5m', 'x y&z')), 'x y&z');
  assert.equal(jobIdFromHash('#jobs'), '');

  assert.deepEqual(parseSelector('{job="train"}'), { job: 'train' });
  assert.deepEqual(parseSelector('{job="a\\"b", node="gpu-1"}'), { job: 'a"b', node: 'gpu-1' });
  assert.equal(parseSelector('{job=~"tr.*"}'), null);
  assert.equal(parseSelector('{job="a"} |= "x"'), null);
  assert.equal(parseSelector(''), null);

  const ranges = [['5m', 300], ['15m', 900], ['1h', 3600], ['6h', 21600], ['24h', 86400], ['7d', 604800]];
  const now = 1796007975123;
  const job = { name: 'train', node: 'gpu-1', start_time_ms: now - 2000e3, log_query: '{job="train"}' };
  assert.equal(logsLinkFor(job, now, ranges), '#logs&range=1h&job=train');
  assert.deepEqual(parseLogsHash(logsLinkFor(job, now, ranges)).job, 'train');
  // A query the Logs tab cannot show as filters: the job's name and node.
  const odd = { ...job, name: 'a&b', log_query: '{job=~"a.*"}', start_time_ms: now - 30 * 86400e3 };
  const f = parseLogsHash(logsLinkFor(odd, now, ranges));
  assert.deepEqual([f.job, f.node], ['a&b', 'gpu-1']);
  assert.match(logsLinkFor(odd, now, ranges), /^#logs&range=7d&/);

  assert.equal(trainingSelector({ name: 'tr"ain', node: 'gpu-1' }), '{job="tr\\"ain", node="gpu-1"}');
  assert.equal(trainingSelector({ name: 'train', node: '' }), '{job="train"}');

  assert.equal(eventText({ event: 'cuda_oom', details: { exception: 'E', message: 'CUDA out of memory' } }), 'CUDA out of memory');
  assert.equal(eventText({ event: 'x', details: { exception: 'torch.cuda.OutOfMemoryError' } }), 'torch.cuda.OutOfMemoryError');
  assert.equal(eventText({ event: 'loss_overflow', details: { rank: 0, loss_scale: 32768 } }), 'rank=0 loss_scale=32768');
  assert.equal(eventText({}), '');
  assert.deepEqual(['completed', 'nan_loss', 'cuda_oom'].map(eventTone), ['blue', 'amber', 'red']);
  assert.equal(sig(2.34567), '2.346');
  assert.equal(sig(0.0003), '3.00e-4');
  assert.equal(sig(52000), '52000');
  assert.equal(sig(NaN), '–');
});

test('a job\'s GPUs: known ones only, in order, with their memory', () => {
  const GiB = 1024 ** 3;
  assert.deepEqual(jobGpus({}), { gpus: [], memoryBytes: null });
  assert.deepEqual(jobGpus({ gpus: [] }), { gpus: [], memoryBytes: null });
  assert.deepEqual(jobGpus({ gpus: 'x' }), { gpus: [], memoryBytes: null });
  const job = { gpus: [{ gpu: '10', memory_bytes: 2 * GiB }, { gpu: '1', uuid: 'GPU-1', memory_bytes: 10.3 * GiB },
    { gpu: '2', memory_bytes: null }, { gpu: '1', memory_bytes: 5 * GiB }, { gpu: '' }, null, { uuid: 'GPU-x' }] };
  assert.deepEqual(jobGpus(job), { gpus: ['1', '2', '10'], memoryBytes: 12.3 * GiB });
  assert.equal(gpuSummary(job), '1, 2, 10 (12.3 GiB)');
  assert.equal(gpuSummary({ gpus: [{ gpu: '0', memory_bytes: null }, { gpu: 3 }] }), '0, 3');
  assert.equal(gpuSummary({ gpus: [] }), '');
  assert.equal(gpuSummary({}), '');
  // DCGM series by their gpu label: only the job's, or all when unknown.
  const series = ['0', '1', '2', '3'].map((g) => ({ metric: { gpu: g }, values: [] }));
  assert.deepEqual(gpuFilter(series, ['1', '3']).map((s) => s.metric.gpu), ['1', '3']);
  assert.deepEqual(gpuFilter(series, []).map((s) => s.metric.gpu), ['0', '1', '2', '3']);
  assert.deepEqual(gpuFilter(series, undefined).length, 4);
  assert.deepEqual(gpuFilter([{ metric: {} }, ...series], ['0']).map((s) => s.metric.gpu), ['0']);
});

test('a job\'s other training series: found, filtered, sorted, capped', () => {
  assert.equal(trainingSeriesSelector({ name: 'a"b', node: 'n1' }), '{__name__=~"training_.+", job="a\\"b", node="n1"}');
  assert.equal(trainingSeriesSelector({ name: 'x' }), '{__name__=~"training_.+", job="x"}');
  const ls = (n) => ({ __name__: n, job: 'train', node: 'n1' });
  const got = extraTrainingNames([
    ...CANONICAL_TRAINING.map(ls), ls('training_step'), ls('training_epoch'),
    ls('training_eval_loss'), ls('training_accuracy'), ls('training_eval_loss'), // twice: stdout and stderr
    ls('training_mfu'), ls('training_'), ls('training_<img src=x>'), ls('node_load1'), ls('training_a b'), { job: 'x' }, null,
  ]);
  assert.deepEqual(got, { names: ['training_accuracy', 'training_eval_loss', 'training_mfu'], more: 0 });
  assert.ok(CANONICAL_TRAINING.includes('training_tokens_per_second'));
  const many = Array.from({ length: 15 }, (_, i) => ls(`training_m${String(i).padStart(2, '0')}`));
  const capped = extraTrainingNames(many);
  assert.equal(MAX_EXTRA, 12);
  assert.equal(capped.names.length, 12);
  assert.equal(capped.names[11], 'training_m11');
  assert.equal(capped.more, 3);
  assert.deepEqual(extraTrainingNames(many, 20).more, 0);
  assert.deepEqual(extraTrainingNames(undefined), { names: [], more: 0 });
  assert.equal(extraTitle('training_eval_loss'), 'eval_loss');
  assert.equal(extraTitle('training_training_x'), 'training_x');
});

test('node events: meaning and action in the page\'s language, the range in ms', () => {
  const ev = { event: 'xid', details: { xid: 79, meaning: 'GPU has fallen off the bus', meaning_zh: 'GPU 已从总线上掉线',
    action: 'Reset the GPU', action_zh: '' } };
  assert.deepEqual(nodeEventTexts(ev, 'en'), { meaning: 'GPU has fallen off the bus', action: 'Reset the GPU' });
  assert.deepEqual(nodeEventTexts(ev, 'zh'), { meaning: 'GPU 已从总线上掉线', action: 'Reset the GPU' });
  assert.deepEqual(nodeEventTexts({ details: { meaning_zh: '只有中文' } }, 'en'), { meaning: '只有中文', action: '' });
  assert.deepEqual(nodeEventTexts({ event: 'oom_killed', details: { pid: 1 } }, 'zh'), { meaning: '', action: '' });
  assert.deepEqual(nodeEventTexts({}, 'en'), { meaning: '', action: '' });
  assert.deepEqual(nodeEventTexts({ details: 'x' }, 'en'), { meaning: '', action: '' });
  assert.deepEqual(eventsWindow(3600, 1700000000123), { start_ms: 1699996400123, end_ms: 1700000000123 });
});

test('the Jobs tab\'s strings exist, translated, in both languages', async () => {
  const { readFile } = await import('node:fs/promises');
  const { en, zh } = STRINGS_FOR_TEST;
  const src = await readFile(new URL('../src/jobs.js', import.meta.url), 'utf8');
  const keys = new Set(['nav.jobs']);
  for (const m of src.matchAll(/\b(?:t|T)\('([\w.]+)'/g)) keys.add(m[1]);
  for (const m of src.matchAll(/'((?:jobs|jobstate)\.[\w.]+)'/g)) keys.add(m[1]);
  for (const s of STATES) keys.add(`jobstate.${s}`);
  for (const k of ['training', 'inference', 'unknown']) keys.add(`jobs.kind.${k}`);
  for (const r of ['launcher', 'rank', 'helper']) keys.add(`jobs.role.${r}`);
  for (const c of ['name', 'state', 'framework', 'ranks', 'started', 'duration', 'reason']) keys.add(`jobs.col.${c}`);
  for (const c of ['time', 'gpu', 'kind', 'details']) keys.add(`jobs.nev.${c}`);
  // Every event kind of docs/training-events.md, and the tracker's "signal".
  for (const e of ['xid', 'oom_killed', 'nccl_timeout', 'device_assert', 'no_kernel_image', 'driver_too_old', 'cuda_oom',
    'dataloader_killed', 'nccl_error', 'cuda_error', 'nan_loss', 'loss_overflow', 'segfault', 'completed', 'traceback', 'signal']) {
    keys.add(`event.${e}`);
  }
  keys.delete('jobs.kind'); // prefixes for tLabel
  keys.delete('jobs.role');
  assert.ok(keys.size > 80, `found ${keys.size} keys`);
  const same = /^jobs\.(proc\.pid|series\.tokens|nev\.gpu)$/;
  for (const k of keys) {
    assert.ok(k in en, `English lacks ${k}`);
    assert.ok(k in zh, `Chinese lacks ${k}`);
    if (!same.test(k)) assert.notEqual(zh[k], en[k], `${k} is not translated`);
  }
});
