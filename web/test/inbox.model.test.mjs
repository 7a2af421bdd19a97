// Unit tests of the Inbox tab's model (pages/inbox.model.js, no DOM): the
// request's parameters from the filters, items from /api/v1/inbox (bad
// entries dropped), the counts, the recipients' choices, kind badges, the
// tab's unread badge, the run summary's language, paging. Run from
// unit.test.mjs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  KINDS, countsFrom, descriptionText, inboxParams, itemsFrom, kindBadge, mergeOlder, oldestId, recipientChoices,
  savedRecipient, stepsText, unreadBadge,
} from '../src/pages/inbox.model.js';
import { ALL } from './i18n_tables.mjs';

const answer = {
  status: 'success',
  data: {
    items: [
      { id: 7, kind: 'resolved', at: '2026-12-02T03:00:00Z', at_ms: 1796007600000, read: false, recipients: ['alice', 'lab'],
        note: '', alert: { rule: 'job_stalled', severity: 'warning', description: 'ran 2h', description_zh: '运行 2 小时' } },
      { id: 5, kind: 'held_back', at_ms: 1796007500000, read: true, recipients: [], note: 'sms: capped', alert: {} },
      { id: 'x', kind: 'firing' },
      null,
      { id: -1, kind: 'firing' },
    ],
    counts: { total: 9, unread: 4, unread_by_severity: { critical: 1, warning: 3, info: 0 } },
    recipients: [{ name: 'alice', kind: 'person', team: 'lab' }, { name: 'lab', kind: 'team', lead: 'bob' },
      { name: 'alice', kind: 'person' }, { name: '' }, { kind: 'team' }],
  },
};

test('inbox: the filters become the request', () => {
  assert.deepEqual(inboxParams(), { limit: '50' });
  assert.deepEqual(inboxParams({ recipient: 'alice', severity: 'critical', unreadOnly: true, before: 12 }),
    { limit: '50', recipient: 'alice', severity: 'critical', unread: '1', before: '12' });
  assert.deepEqual(inboxParams({ severity: 'loud', before: -3 }), { limit: '50' });
});

test('inbox: items, counts and choices from the answer; bad entries dropped', () => {
  const items = itemsFrom(answer);
  assert.deepEqual(items.map((i) => i.id), [7, 5]);
  assert.equal(items[0].atMs, 1796007600000);
  assert.deepEqual(items[0].recipients, ['alice', 'lab']);
  assert.equal(items[1].read, true);
  assert.equal(items[1].note, 'sms: capped');
  assert.deepEqual(itemsFrom({}), []);
  assert.deepEqual(countsFrom(answer), { total: 9, unread: 4, critical: 1, warning: 3, info: 0 });
  assert.deepEqual(countsFrom(null), { total: 0, unread: 0, critical: 0, warning: 0, info: 0 });
  const choices = recipientChoices(answer);
  assert.deepEqual(choices.map((c) => [c.value, c.kind]), [['', 'all'], ['alice', 'person'], ['lab', 'team']]);
  assert.equal(savedRecipient('lab', choices), 'lab');
  assert.equal(savedRecipient('gone', choices), '');
});

test('inbox: kinds, the unread badge, the run summary in the page language, paging', () => {
  for (const k of KINDS) {
    assert.ok(ALL.en[kindBadge(k).key] && ALL.zh[kindBadge(k).key], k);
  }
  assert.deepEqual(kindBadge('other'), { tone: 'grey', key: null, text: 'other' });
  assert.deepEqual(unreadBadge({ unread: 4, critical: 1 }), { n: 4, tone: 'crit', hidden: false });
  assert.equal(unreadBadge({ unread: 2, warning: 2 }).tone, 'warn');
  assert.equal(unreadBadge({ unread: 0 }).hidden, true);
  const a = itemsFrom(answer)[0].alert;
  assert.equal(descriptionText(a, 'zh'), '运行 2 小时');
  assert.equal(descriptionText(a, 'en'), 'ran 2h');
  assert.equal(descriptionText({ description: 'only en' }, 'zh'), 'only en');
  const fired = { kind: 'firing', alert: { steps: 'Check the fan.', steps_zh: '检查风扇。' } };
  assert.equal(stepsText(fired, 'en'), 'Check the fan.');
  assert.equal(stepsText(fired, 'zh'), '检查风扇。');
  assert.equal(stepsText({ ...fired, kind: 'resolved' }, 'en'), '', 'a resolution gives no advice');
  assert.equal(stepsText({ kind: 'firing', alert: {} }, 'en'), '');
  const items = itemsFrom(answer);
  assert.equal(oldestId(items), 5);
  assert.equal(oldestId([]), 0);
  assert.deepEqual(mergeOlder(items, [{ id: 5 }, { id: 3 }]).map((i) => i.id), [7, 5, 3]);
});
