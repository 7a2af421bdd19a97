// Unit tests of the Actions tab's model (pages/actions.model.js, no DOM):
// entries and configured actions from /api/v1/actions (bad entries
// dropped), the server's clock, the entry a link names, state badges, the
// countdown, what can be cancelled, commands as read. Run from
// unit.test.mjs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  STATES, actionsHash, canCancel, clockOffset, commandText, configuredFrom, countdown, entriesFrom, highlightId,
  signature, stateBadge, whereText,
} from '../src/pages/actions.model.js';
import { ALL } from './i18n_tables.mjs';

const answer = {
  status: 'success',
  data: {
    now_ms: 1796007600000,
    actions: [
      { id: 3, action: 'stop-instance', on: 'job_finished', state: 'scheduled', dry_run: false,
        command: ['/usr/local/bin/stop-instance', '--id', 'i-123'],
        alert: { id: 'ab', rule: 'job_finished', labels: { job: 'train-a', node: 'gpu-07', run: '42-1', alertname: 'job_finished' }, owner: 'alice' },
        created_ms: 1796007000000, run_at_ms: 1796007845000, started_ms: null, finished_ms: null,
        cancelled_by: '', exit_code: null, output: '', output_truncated: false, error: '' },
      { id: 2, action: 'stop-instance', on: 'gpus_idle', state: 'failed', dry_run: false, command: ['/bin/x'],
        alert: { labels: { node: 'gpu-07' } }, created_ms: 1, run_at_ms: 2, started_ms: 2, finished_ms: 3,
        exit_code: 3, output: 'boom', output_truncated: true, error: 'exited with status 3' },
      { id: 'x' }, null, { id: 0 },
    ],
    configured: [{ name: 'stop-instance', on: 'job_finished', dry_run: true, confirm_window_ms: 600000, command: ['/bin/x'] },
      { on: 'gpus_idle' }],
  },
};

test('actions: entries and configured actions from the answer; bad entries dropped', () => {
  const list = entriesFrom(answer);
  assert.deepEqual(list.map((e) => e.id), [3, 2]);
  assert.equal(list[0].owner, 'alice');
  assert.equal(list[0].runAtMs, 1796007845000);
  assert.equal(list[0].startedMs, 0);
  assert.equal(list[0].exitCode, null);
  assert.equal(list[1].exitCode, 3);
  assert.equal(list[1].outputTruncated, true);
  assert.deepEqual(entriesFrom({}), []);
  assert.deepEqual(configuredFrom(answer).map((a) => [a.name, a.dryRun, a.confirmWindowMs]), [['stop-instance', true, 600000]]);
  assert.equal(clockOffset(answer, 1796007599000), 1000);
  assert.equal(clockOffset({}, 5), 0);
});

test('actions: the link names an entry', () => {
  assert.equal(highlightId('#actions&id=12'), 12);
  assert.equal(highlightId('#actions&id=12&range=1h'), 12);
  assert.equal(highlightId('#actions'), 0);
  assert.equal(highlightId('#actions&id=abc'), 0);
  assert.equal(highlightId(undefined), 0);
  assert.equal(actionsHash(12), '#actions&id=12');
  assert.equal(actionsHash(0), '#actions');
});

test('actions: countdowns on the server clock, cancel while scheduled only', () => {
  const [scheduled, failed] = entriesFrom(answer);
  const now = answer.data.now_ms;
  assert.equal(countdown(scheduled, now), '4m 05s');
  assert.equal(countdown(scheduled, now - 3600000), '1h 04m 05s');
  assert.equal(countdown(scheduled, now + 240000), '5s');
  assert.equal(countdown(scheduled, now + 999999), '0s');
  assert.equal(countdown(failed, now), null);
  assert.equal(canCancel(scheduled), true);
  assert.equal(canCancel(failed), false);
  assert.equal(canCancel(null), false);
});

test('actions: badges, commands, where, signatures', () => {
  for (const s of STATES) {
    const b = stateBadge(s);
    assert.ok(b.key in ALL.en && b.key in ALL.zh, s);
  }
  assert.deepEqual(stateBadge('weird'), { tone: 'grey', key: null, text: 'weird' });
  assert.equal(commandText(['/usr/local/bin/stop-instance', '--id', 'i-123']), '/usr/local/bin/stop-instance --id i-123');
  assert.equal(commandText(['/bin/sh', '-c', "echo it's done"]), "/bin/sh -c 'echo it'\\''s done'");
  assert.equal(whereText(entriesFrom(answer)[0]), 'job train-a · node gpu-07 · run 42-1');
  assert.equal(whereText(entriesFrom(answer)[1]), 'node gpu-07');
  assert.equal(signature('  alice  '), 'alice');
  assert.equal(signature('x'.repeat(200)).length, 128);
  for (const k of ['actions.on.job_finished', 'actions.on.gpus_idle', 'nav.actions']) assert.ok(k in ALL.zh, k);
});
