// Unit tests of the overview's model (pages/overview.model.js, no DOM): rate
// windows, failed queries, the view built from Prometheus answers (the GPU
// list, memory %, CPU shares, system sums), GPU flags, the summary and the
// refresh cadence, and that the strings built from its lists exist in both
// languages. Run from unit.test.mjs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  CPU_MODES, INSTANT_QUERIES, computeView, gpuFlag, rangeQueries, rateWindow, refreshMs, settledResults, summarize,
} from '../src/pages/overview.model.js';
import { ALL } from './i18n_tables.mjs';

test('overview: rate windows cover a step, at least 1m', () => {
  assert.equal(rateWindow(2), '1m');
  assert.equal(rateWindow(90), '90s');
  assert.equal(rateWindow(3600), '60m');
  assert.equal(rangeQueries(120).cpu, 'sum by (mode) (rate(node_cpu_seconds_total[2m]))');
  assert.equal(rangeQueries(2).netRx, 'rate(node_network_receive_bytes_total{device!="lo"}[1m])');
});

test('overview: a failed query leaves [] and the first failure', () => {
  const e1 = new Error('one'), e2 = new Error('two');
  const got = settledResults(['a', 'b', 'c'], [
    { status: 'fulfilled', value: [1] }, { status: 'rejected', reason: e1 }, { status: 'rejected', reason: e2 }]);
  assert.deepEqual(got.results, { a: [1], b: [], c: [] });
  assert.equal(got.error, e1);
  assert.equal(settledResults(['a'], [{ status: 'fulfilled', value: [] }]).error, null);
});

function fixture() {
  const win = { start: 100, end: 104, step: 2 };
  const s = (metric, pairs) => ({ metric, values: pairs.map(([t, v]) => [t, String(v)]) });
  const v = (metric, value) => ({ metric, value: [104, String(value)] });
  const range = {
    util: [s({ gpu: '1', modelName: 'From data' }, [[100, 50], [104, 60]]), s({ gpu: '0' }, [[104, 2]])],
    used: [s({ gpu: '0' }, [[104, 1024]]), s({ gpu: '1' }, [[104, 3072]])],
    free: [s({ gpu: '0' }, [[104, 3072]]), s({ gpu: '1' }, [[104, 1024]])],
    temp: [s({ gpu: '1' }, [[104, 87]])],
    power: [s({ gpu: '0' }, [[104, 100]]), s({ gpu: '1' }, [[104, 600]])],
    cpu: [s({ mode: 'user' }, [[100, 3], [104, 1]]), s({ mode: 'idle' }, [[100, 1], [104, 3]])],
    memAvail: [s({}, [[104, 6e9]])],
    diskRead: [s({ device: 'a' }, [[104, 10]]), s({ device: 'b' }, [[104, 5]])],
    diskWrite: [],
    netRx: [s({ device: 'eth0' }, [[104, 100]])],
    netTx: [],
  };
  const inst = {
    slowdown: [v({ gpu: '0' }, 90), v({ gpu: '1' }, 90)], limit: [v({ gpu: '0' }, 700), v({ gpu: '1' }, 700)],
    tx: [v({ gpu: '1' }, 2)], rx: [], memTotal: [v({}, 8e9)], cpus: [v({ cpu: '0' }, 1), v({ cpu: '1' }, 1)],
  };
  return { win, range, inst };
}

test('overview: the view of one refresh', () => {
  const { win, range, inst } = fixture();
  assert.deepEqual(Object.keys(inst), Object.keys(INSTANT_QUERIES));
  const status = { gpu: { gpus: [{ gpu: 0, modelName: 'H100' }, { gpu: 2, modelName: 'H100' }] } };
  const view = computeView(win, range, inst, status);
  assert.deepEqual(view.xs, [100, 102, 104]);
  // The status' GPUs, and those with data, in order (GPU 2 has no data yet).
  assert.deepEqual(view.gpus.map((g) => [g.gpu, g.model]), [['0', 'H100'], ['1', 'From data'], ['2', 'H100']]);
  const [g0, g1, g2] = view.gpus;
  assert.deepEqual(g1.util, [50, null, 60]);
  assert.equal(g1.utilNow, 60);
  assert.deepEqual(g0.memPct, [null, null, 25]);
  assert.equal(g0.memUsed, 1024 * 1048576);
  assert.equal(g0.memTotal, 4096 * 1048576);
  assert.equal(g1.tempNow, 87);
  assert.equal(g1.slowdown, 90);
  assert.equal(g1.tx, 2048, 'PCIe KiB/s in B/s');
  assert.ok(Number.isNaN(g1.rx));
  assert.ok(Number.isNaN(g2.utilNow));
  // CPU modes as shares of all CPU time.
  assert.equal(view.cpu.series.length, CPU_MODES.length);
  assert.deepEqual(view.cpu.series[0], [75, null, 25]);
  assert.equal(view.cpu.busyPct, 25);
  assert.equal(view.cpu.cores, 2);
  assert.equal(view.mem.total, 8e9);
  assert.deepEqual(view.mem.used, [null, null, 2e9]);
  assert.deepEqual(view.disk.read, [null, null, 15]);
  assert.deepEqual(view.disk.write, [null, null, null]);
  assert.deepEqual(view.net.rx, [null, null, 100]);
  // No status yet: the GPUs with data only.
  assert.deepEqual(computeView(win, range, inst, null).gpus.map((g) => g.gpu), ['0', '1']);
});

test('overview: GPU flags and the summary', () => {
  assert.equal(gpuFlag({ tempNow: 90, slowdown: 90, utilNow: 99 }), 'throttle');
  assert.equal(gpuFlag({ tempNow: 85, slowdown: 90, utilNow: 99 }), 'hot');
  assert.equal(gpuFlag({ tempNow: 84.9, slowdown: 90, utilNow: 99 }), null);
  assert.equal(gpuFlag({ tempNow: 60, slowdown: 90, utilNow: 4 }), 'idle');
  assert.equal(gpuFlag({ tempNow: 60, slowdown: NaN, utilNow: NaN }), null);
  assert.equal(gpuFlag({ tempNow: 95, slowdown: NaN, utilNow: 1 }), 'idle', 'no slowdown known: not hot');

  const { win, range, inst } = fixture();
  const s = summarize(computeView(win, range, inst, null).gpus);
  assert.equal(s.avgUtil, 31);
  assert.equal(s.utilKnown, true);
  assert.equal(s.memUsed, 4096 * 1048576);
  assert.equal(s.memTotal, 8192 * 1048576);
  assert.equal(s.hottest.gpu, '1');
  assert.equal(s.hottestFlag, 'hot');
  assert.equal(s.power, 700);
  assert.equal(s.powerLimit, 1400);
  assert.equal(s.idle, 1);
  // Nothing known: unknown, not 0.
  const none = summarize([{ utilNow: NaN, memUsed: NaN, memTotal: NaN, tempNow: NaN, powerNow: NaN, limit: NaN }]);
  assert.ok(Number.isNaN(none.avgUtil) && Number.isNaN(none.memUsed) && Number.isNaN(none.power));
  assert.equal(none.utilKnown, false);
  assert.equal(none.hottest, null);
  assert.equal(none.idle, 0);
});

test('overview: refreshes every 2 s on short ranges, at the step up to 30 s on long ones', () => {
  assert.equal(refreshMs(300), 2000);
  assert.equal(refreshMs(3600), 15000);
  assert.equal(refreshMs(21600), 30000);
  assert.equal(refreshMs(604800), 30000);
});

test('overview: the strings built from its lists exist in both languages', () => {
  const keys = [...CPU_MODES.map((m) => `mode.${m}`), 'flag.hot', 'flag.throttle', 'flag.idle', 'nav.overview',
    ...['5m', '15m', '1h', '6h', '24h', '7d'].map((r) => `range.${r}`)];
  for (const k of keys) {
    assert.ok(k in ALL.en, `English lacks ${k}`);
    assert.ok(k in ALL.zh, `Chinese lacks ${k}`);
  }
});
