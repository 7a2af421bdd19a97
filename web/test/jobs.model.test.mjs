// Unit tests of the Jobs tab's model (pages/jobs.model.js, no DOM): state
// badges, the time axis and its refresh, throughput choice, durations,
// sorting, the URL, the logs link, PromQL selectors and queries, event texts,
// the job's GPUs, its other training series, the series its charts are built
// from, the node's events, and that every string the tab uses exists,
// translated, in both languages. Run from unit.test.mjs.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { duration } from '../src/format.js';
import { setLang } from '../src/i18n.js';
import { parseLogsHash } from '../src/pages/logs.model.js';
import {
  CANONICAL_TRAINING, MAX_EXTRA, STATES, TRAINING_CHARTS, buildJobView, chartQueries, chartRefreshMs,
  chartWindowKey, endReason, eventPosition, eventText, eventTone, eventsWindow, extraQuery, extraTitle,
  extraTrainingNames, frameworkText, gpuFilter, gpuSummary, hasValues, jobDurationSec, jobEvents, jobGpus,
  jobIdFromHash, jobWindow, jobsHash, logsLinkFor, nodeEventTexts, nodeEventsFrom, parseSelector, ranksText,
  severalNodes, sig, sortJobs, stateBadge, throughputToShow, trainingChartsToShow, trainingSelector,
  trainingSeriesSelector,
} from '../src/pages/jobs.model.js';
import { ALL } from './i18n_tables.mjs';

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
  // A job read by run: the Logs tab shows that run's lines only.
  const run = { ...job, id: '42-7-ab', log_query: '{run="42-7-ab", node="gpu-1"}' };
  assert.deepEqual([parseLogsHash(logsLinkFor(run, now, ranges)).run, parseLogsHash(logsLinkFor(run, now, ranges)).job],
    ['42-7-ab', '']);

  assert.equal(trainingSelector({ name: 'tr"ain', node: 'gpu-1' }), '{job="tr\\"ain", node="gpu-1"}');
  assert.equal(trainingSelector({ name: 'train', node: '' }), '{job="train"}');
  // The server's selector of the run, when it gives one; nothing else is taken as one.
  assert.equal(trainingSelector({ name: 'train', node: 'n', series_selector: '{run="42-9-ab", node="n"}' }),
    '{run="42-9-ab", node="n"}');
  assert.equal(trainingSelector({ name: 'train', node: 'n', series_selector: '{run="x"} or up' }),
    '{job="train", node="n"}');

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

test('the Jobs tab\'s strings exist, translated, in both languages', () => {
  const { en, zh } = ALL;
  const src = ['jobs.js', 'jobs.model.js'].map((f) => readFileSync(new URL(`../src/pages/${f}`, import.meta.url), 'utf8')).join('\n');
  const keys = new Set(['nav.jobs']);
  for (const m of src.matchAll(/\b(?:t|T)\('([\w.]+)'/g)) keys.add(m[1]);
  for (const m of src.matchAll(/'((?:jobs|jobstate)\.[\w.]+)'/g)) keys.add(m[1]);
  for (const s of STATES) keys.add(`jobstate.${s}`);
  for (const k of ['training', 'inference', 'unknown']) keys.add(`jobs.kind.${k}`);
  for (const r of ['launcher', 'rank', 'helper']) keys.add(`jobs.role.${r}`);
  for (const c of ['name', 'state', 'user', 'framework', 'ranks', 'started', 'duration', 'reason']) keys.add(`jobs.col.${c}`);
  for (const c of ['time', 'gpu', 'kind', 'details']) keys.add(`jobs.nev.${c}`);
  for (const c of ['pid', 'role', 'rank', 'localRank', 'cmdline']) keys.add(`jobs.proc.${c}`);
  for (const c of ['time', 'since', 'kind', 'message']) keys.add(`jobs.ev.${c}`);
  // Every event kind of docs/training-events.md, and the tracker's "signal".
  for (const e of ['xid', 'oom_killed', 'nccl_timeout', 'device_assert', 'no_kernel_image', 'driver_too_old', 'cuda_oom',
    'dataloader_killed', 'nccl_error', 'cuda_error', 'nan_loss', 'loss_overflow', 'segfault', 'completed', 'traceback', 'signal']) {
    keys.add(`event.${e}`);
  }
  keys.delete('jobs.kind'); // prefixes for tLabel
  keys.delete('jobs.role');
  for (const k of keys) if (k.endsWith('.')) keys.delete(k); // prefixes of column names
  assert.ok(keys.size > 80, `found ${keys.size} keys`);
  const same = /^jobs\.(proc\.(pid|rank)|series\.tokens|nev\.gpu)$/; // PID, Rank, tokens/s, GPU
  for (const k of keys) {
    assert.ok(k in en, `English lacks ${k}`);
    assert.ok(k in zh, `Chinese lacks ${k}`);
    if (!same.test(k)) assert.notEqual(zh[k], en[k], `${k} is not translated`);
  }
});

test('a job\'s header: framework, ranks, several nodes, why it ended', () => {
  assert.equal(frameworkText({ framework: 'pytorch', launcher: 'deepspeed' }), 'pytorch · deepspeed');
  assert.equal(frameworkText({ framework: 'jax' }), 'jax');
  assert.equal(frameworkText({}), '–');
  assert.equal(ranksText({ world_size: 8 }), '8');
  assert.equal(ranksText({ world_size: null }), '–');
  assert.equal(ranksText({}), '–');
  assert.equal(severalNodes([{ node: 'a' }, { node: 'a' }]), false);
  assert.equal(severalNodes([{ node: 'a' }, { node: 'b' }]), true);
  assert.equal(severalNodes([]), false);
  // The kind once when the server's text starts with it.
  assert.deepEqual(endReason('CUDA out of memory', 'CUDA out of memory. Tried to allocate 2.00 GiB'),
    ['CUDA out of memory. Tried to allocate 2.00 GiB']);
  assert.deepEqual(endReason('cuda out of MEMORY', 'CUDA out of memory.'), ['CUDA out of memory.']);
  assert.deepEqual(endReason('Killed by a signal', 'SIGKILL'), ['Killed by a signal', 'SIGKILL']);
  assert.deepEqual(endReason('', 'exit 3'), ['exit 3']);
  assert.deepEqual(endReason('Completed', undefined), ['Completed']);
  assert.deepEqual(endReason('', null), []);
});

test('a job\'s events and the node\'s: timed ones only, oldest first; markers on the axis', () => {
  const job = { events: [{ event: 'b', time_ms: 3000 }, { event: 'x' }, null, { event: 'a', time_ms: '1000' }, { event: 'c', time_ms: '' }] };
  assert.deepEqual(jobEvents(job).map((e) => e.event), ['a', 'b']);
  assert.deepEqual(jobEvents({ events: 'x' }), []);
  assert.deepEqual(jobEvents(null), []);
  assert.deepEqual(nodeEventsFrom({ events: [{ event: 'late', time_ms: 9 }, { event: 'early', time_ms: 1 }, { event: 'none' }, 0] })
    .map((e) => e.event), ['early', 'late']);
  assert.deepEqual(nodeEventsFrom(undefined), []);
  assert.deepEqual(nodeEventsFrom({ events: {} }), []);
  const win = { start: 100, end: 200, step: 1 };
  assert.equal(eventPosition({ time_ms: 150000 }, win), 0.5);
  assert.equal(eventPosition({ time_ms: 10000 }, win), 0);
  assert.equal(eventPosition({ time_ms: 990000 }, win), 1);
});

test('a job\'s chart queries: its training series by name and node, its node\'s GPUs', () => {
  const q = chartQueries({ name: 'tr"ain', node: 'gpu-1' });
  assert.deepEqual(Object.keys(q), [...TRAINING_CHARTS, 'util', 'used', 'free']);
  assert.equal(q.loss, 'avg(training_loss{job="tr\\"ain", node="gpu-1"})');
  assert.equal(q.tokens, 'avg(training_tokens_per_second{job="tr\\"ain", node="gpu-1"})');
  assert.equal(q.util, 'DCGM_FI_DEV_GPU_UTIL{node="gpu-1"}');
  const local = chartQueries({ name: 'x' });
  assert.equal(local.lr, 'avg(training_learning_rate{job="x"})');
  assert.equal(local.free, 'DCGM_FI_DEV_FB_FREE');
  assert.equal(extraQuery({ name: 'x', node: 'n' }, 'training_eval_loss'), 'avg(training_eval_loss{job="x", node="n"})');
  // Fetched again for another job, a longer step or the job's end; not for a running job's now.
  assert.equal(chartWindowKey({ id: 'j' }, { start: 0, end: 60, step: 2, live: true }), 'j|0|2|live');
  assert.equal(chartWindowKey({ id: 'j' }, { start: 0, end: 62, step: 2, live: true }), 'j|0|2|live');
  assert.equal(chartWindowKey({ id: 'j' }, { start: 0, end: 62, step: 2, live: false }), 'j|0|2|62');
});

test('a job\'s charts: series on the window\'s axis, its own GPUs when known', () => {
  const win = { start: 100, end: 110, step: 2, live: false };
  const s = (labels, pairs) => ({ metric: labels, values: pairs.map(([t, v]) => [t, String(v)]) });
  const gpu = (g, pairs) => s({ gpu: g }, pairs);
  const res = {
    loss: [s({}, [[100, 2.5], [104, 2.0]])],
    lr: [], grad: [], tokens: [s({}, [[110, 5000]])], samples: [], iterations: [],
    util: [gpu('0', [[100, 90]]), gpu('10', [[100, 50]]), gpu('2', [[102, 70]])],
    used: [gpu('0', [[100, 1024]]), gpu('2', [[100, 2048], [102, 4096]])],
    free: [gpu('0', [[100, 1024]]), gpu('2', [[100, 2048], [102, 6144]])],
    extra: [[s({}, [[106, 0.5]])], []],
  };
  const extra = { names: ['training_accuracy', 'training_mfu'], more: 3 };
  const all = buildJobView({ id: 'j', gpus: [] }, win, res, extra);
  assert.deepEqual(all.xs, [100, 102, 104, 106, 108, 110]);
  assert.deepEqual(all.training.loss, [2.5, null, 2.0, null, null, null]);
  assert.deepEqual(all.training.lr, [null, null, null, null, null, null]);
  assert.deepEqual(all.training.tokens, [null, null, null, null, null, 5000]);
  assert.deepEqual(all.extras.map((e) => [e.name, e.ys[3]]), [['training_accuracy', 0.5], ['training_mfu', null]]);
  assert.equal(all.more, 3);
  // Not known: every GPU with data, in numeric order; memory in GiB, the largest total.
  assert.equal(all.ownGpus, false);
  assert.deepEqual(all.gpus, ['0', '2', '10']);
  assert.deepEqual(all.util.map((u) => u[0]), [90, null, 50]);
  assert.deepEqual(all.mem[1].slice(0, 2), [2, 4]);
  assert.equal(all.totalGiB, 10);
  // Known: only those, even one without data.
  const own = buildJobView({ id: 'j', gpus: [{ gpu: '2' }, { gpu: 7 }] }, win, res);
  assert.equal(own.ownGpus, true);
  assert.deepEqual(own.gpus, ['2', '7']);
  assert.deepEqual(own.util.map((u) => u[1]), [70, null]);
  assert.deepEqual(own.extras, []);
  assert.equal(own.more, 0);
  // Nothing answered: empty series, no total.
  const none = buildJobView({ id: 'j' }, win, {});
  assert.deepEqual(none.gpus, []);
  assert.ok(Number.isNaN(none.totalGiB));
  assert.ok(!hasValues(none.training.loss));
  // Which training charts show: loss and tokens/s here.
  assert.deepEqual([...trainingChartsToShow(all.training)], ['loss', 'tokens']);
  assert.deepEqual([...trainingChartsToShow(none.training)], []);
});
