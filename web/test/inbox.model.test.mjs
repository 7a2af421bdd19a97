// Unit tests of the Inbox tab's model (pages/inbox.model.js, no DOM): the
// request's parameters from the filters, items from /api/v1/inbox (bad
// entries dropped), the counts, the recipients' choices, kind badges, the
// tab's unread badge, the run summary's language, paging, each item's
// diagnosis (cause, evidence, ranked and bounded templates, suggestion).
// Run from unit.test.mjs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  INBOX_TEMPLATES, KINDS, countsFrom, descriptionText, inboxDiagnosis, inboxParams, itemsFrom, kindBadge, mergeOlder,
  oldestId, recipientChoices, savedRecipient, stepsText, templateLineText, unreadBadge,
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

test('inbox: the diagnosis with its cause, evidence, templates errors first, and suggestion', () => {
  const diagnosis = {
    summary: 'Probable cause: input pipeline CPU-bound (75%)', summary_zh: '可能原因：输入管道受 CPU 限制（75%）',
    causes: [{ id: 'input_pipeline_cpu', title: 'input pipeline CPU-bound', confidence: 0.75,
      evidence: [{ signal: 'host_cpu_saturated', text: 'host CPU 97% busy', text_zh: '主机 CPU 占用 97%' }] }],
    suggestions: [{ text: 'Raise num_workers', text_zh: '增大 num_workers', parameter: 'num_workers', current: '2', suggested: '7' }],
    log_templates: [
      { template: 'Epoch <*> step <*> loss <*>', count: 312, severity: 'info', new: false },
      { template: '<img src=x onerror=alert(1)>', count: 2, severity: 'info', new: true },
      { template: 'NCCL WARN <*>', count: 7, severity: 'warn', new: false },
      { template: 'RuntimeError: CUDA error: <*>', count: 3, severity: 'error', new: false },
      ...Array.from({ length: 8 }, (_, i) => ({ template: `filler ${i}`, count: 1, severity: 'info' })),
    ],
  };
  const item = { kind: 'firing', alert: { diagnosis } };
  const d = inboxDiagnosis(item, 'en');
  assert.equal(d.cause, 'Probable cause: input pipeline CPU-bound (75%)');
  assert.deepEqual(d.evidence, ['host CPU 97% busy']);
  assert.equal(d.suggestion.text, 'Raise num_workers');
  assert.equal(d.suggestion.current, '2');
  assert.equal(d.suggestion.suggested, '7');
  assert.equal(d.templates.length, INBOX_TEMPLATES);
  const tr = (k) => ALL.en[k];
  assert.deepEqual(d.templates.map((x) => templateLineText(x, tr)), [
    '×3 [error] RuntimeError: CUDA error: <*>',
    '×2 [new] <img src=x onerror=alert(1)>', // text, rendered as a text node
    '×312 Epoch <*> step <*> loss <*>',
    '×7 [warn] NCCL WARN <*>',
    '×1 filler 0',
  ]);
  const zh = inboxDiagnosis(item, 'zh');
  assert.equal(zh.cause, '可能原因：输入管道受 CPU 限制（75%）');
  assert.deepEqual(zh.evidence, ['主机 CPU 占用 97%']);
  assert.equal(templateLineText(zh.templates[0], (k) => ALL.zh[k]), '×3 [错误] RuntimeError: CUDA error: <*>');
  for (const x of d.templates) for (const k of x.marks) assert.ok(ALL.en[k] && ALL.zh[k], k);

  // A resolution names the cause only; no diagnosis, nothing.
  assert.deepEqual(inboxDiagnosis({ ...item, kind: 'resolved' }, 'en'),
    { cause: d.cause, evidence: [], templates: [], suggestion: null });
  assert.equal(inboxDiagnosis({ kind: 'firing', alert: { diagnosis: {} } }, 'en'), null);
  assert.equal(inboxDiagnosis({ kind: 'held_back', alert: {} }, 'en'), null);
  // Bounded: each template's text as alerts.model.js cuts it.
  const long = inboxDiagnosis({ kind: 'firing', alert: { diagnosis: { log_templates: [{ template: 'x'.repeat(5000), count: 1 }] } } }, 'en');
  assert.ok(long.templates[0].text.length <= 240);
  assert.equal(long.cause, '');
});
