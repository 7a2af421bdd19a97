// Unit tests of the Settings tab's model (pages/settings.model.js, no DOM):
// each type's fields (docs/notify.md), a form into a channel body (a new
// channel's required fields, an edited one's secrets left out so the server
// keeps them, lists, headers, numbers, STARTTLS), a stored channel's view
// into the form (write-only fields empty), the list's rows (target, secret
// set or not, a failing channel with its last answer, routed), routes as
// text, the URL, and that every string the tab uses exists, translated, in
// both languages, and every one of its table is used. Run from unit.test.mjs.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import {
  CHANNEL_COLUMNS, FIELDS, NAME_RE, TYPES, channelBody, channelRows, deliveryState, fieldsFor, formValues,
  parseHeaders, parseSettingsHash, routeText, secretState, storedHas, targetOf,
} from '../src/pages/settings.model.js';
import { ALL } from './i18n_tables.mjs';

const props = (type) => fieldsFor(type).map((f) => f.prop);

test('each type has the fields docs/notify.md gives it', () => {
  assert.deepEqual(props('feishu'), ['url', 'secret', 'language', 'ca_file']);
  assert.deepEqual(props('dingtalk'), ['url', 'secret', 'at_mobiles', 'language', 'ca_file']);
  assert.deepEqual(props('wecom'), ['url', 'language', 'ca_file']);
  assert.deepEqual(props('slack'), ['url', 'language', 'ca_file']);
  assert.deepEqual(props('webhook'), ['url', 'headers']);
  assert.deepEqual(props('email'), ['smtp', 'starttls', 'username', 'password', 'from', 'to', 'language', 'ca_file']);
  assert.deepEqual(props('sms'), ['url', 'to', 'body', 'headers', 'max_per_day', 'cost_per_message', 'max_cost_per_day',
    'timezone', 'language', 'ca_file']);
});

test('a new channel\'s form becomes its body', () => {
  const v = formValues(null);
  assert.equal(v.starttls, true);
  assert.equal(v.url, '');
  assert.deepEqual(channelBody('feishu', 'lark', { ...v, url: ' https://open.feishu.cn/hook/x ', secret: 's3', language: 'en' }),
    { body: { name: 'lark', type: 'feishu', url: 'https://open.feishu.cn/hook/x', secret: 's3', language: 'en' } });
  assert.deepEqual(channelBody('feishu', 'lark', v), { error: { key: 'settings.err.required', vars: { field: 'url' } } });
  assert.deepEqual(channelBody('dingtalk', 'ding', { ...v, url: 'https://oapi.dingtalk.com/robot/send?access_token=t',
    at_mobiles: '13800000000, 13900000000\n' }).body.at_mobiles, ['13800000000', '13900000000']);
  assert.deepEqual(channelBody('email', 'mail', { ...v, smtp: 'smtp.example.org:25', starttls: false, from: 'v@example.org',
    to: 'a@example.org,b@example.org' }).body,
  { name: 'mail', type: 'email', smtp: 'smtp.example.org:25', starttls: false, from: 'v@example.org', to: ['a@example.org', 'b@example.org'] });
  assert.equal(channelBody('email', 'mail', { ...v, smtp: 'h:587', from: 'v@example.org' }).error.vars.field, 'to');
  const sms = channelBody('sms', 'phone', { ...v, url: 'https://sms.example.com/?to={{to}}', to: '+86 138', max_per_day: '20',
    cost_per_message: '0.05', headers: 'Authorization: Bearer k\n\nX-A:b' }).body;
  assert.deepEqual([sms.max_per_day, sms.cost_per_message, sms.headers], [20, 0.05, { Authorization: 'Bearer k', 'X-A': 'b' }]);
  assert.deepEqual(channelBody('sms', 'phone', { ...v, url: 'https://x', to: '1', max_per_day: '1.5' }).error,
    { key: 'settings.err.number', vars: { field: 'max_per_day' } });
  assert.deepEqual(channelBody('webhook', 'hook', { ...v, url: 'http://h/', headers: 'no colon' }).error,
    { key: 'settings.err.header', vars: { line: 'no colon' } });
  assert.deepEqual(channelBody('nope', 'x', v).error, { key: 'settings.err.type' });
  for (const bad of ['', 'a/b', 'x\u0001', 'y'.repeat(129)]) {
    assert.deepEqual(channelBody('webhook', bad, { ...v, url: 'http://h/' }).error, { key: 'settings.err.name' }, bad);
  }
  assert.ok(NAME_RE.test('lark bot 飞书'));
});

// Editing: the server never shows a secret, so an empty write-only field
// is left out of the body, and the server keeps the stored value.
test('an edited channel\'s empty secrets are left out, for the server to keep', () => {
  const view = { name: 'lark', type: 'feishu', url: 'https://open.feishu.cn/...', secret_set: true, language: 'zh' };
  const v = formValues(view);
  assert.equal(v.url, '', 'the URL is write-only: the form starts empty');
  assert.equal(v.secret, '');
  assert.equal(v.language, 'zh');
  assert.deepEqual(channelBody('feishu', 'lark', v, view), { body: { name: 'lark', type: 'feishu', language: 'zh' } });
  assert.deepEqual(channelBody('feishu', 'lark', { ...v, secret: 'new' }, view).body.secret, 'new');
  // Another type: nothing stored applies, the URL is needed again.
  assert.equal(channelBody('dingtalk', 'lark', v, null).error.vars.field, 'url');
  const sms = { name: 'p', type: 'sms', url: 'https://sms.example.com/...', body_set: true, header_names: ['Authorization'],
    to: ['+86 138'], max_per_day: 20 };
  const sv = formValues(sms);
  assert.deepEqual([sv.to, sv.max_per_day, sv.body, sv.headers], ['+86 138', '20', '', '']);
  assert.deepEqual(channelBody('sms', 'p', sv, sms).body, { name: 'p', type: 'sms', to: ['+86 138'], max_per_day: 20 });
  assert.deepEqual([storedHas(sms, 'url'), storedHas(sms, 'body'), storedHas(sms, 'headers'), storedHas(sms, 'secret')],
    [true, true, true, false]);
  assert.equal(formValues({ type: 'email', starttls: false }).starttls, false);
});

test('headers are "Name: value" lines', () => {
  assert.deepEqual(parseHeaders('A: 1\nB:two: three\n'), { headers: { A: '1', B: 'two: three' } });
  assert.deepEqual(parseHeaders(''), { headers: {} });
  assert.equal(parseHeaders(': x').error.key, 'settings.err.header');
  assert.equal(parseHeaders('bad name: x').error.key, 'settings.err.header');
});

test('the list: target, secret, delivery state, routed', () => {
  const view = {
    path: '/var/lib/vigil/config.json',
    channels: [
      { name: 'lark', type: 'feishu', url: 'https://open.feishu.cn/...', secret_set: true },
      { name: 'wx', type: 'wecom', url: 'https://qyapi.weixin.qq.com/...' },
      { name: 'mail', type: 'email', smtp: 'smtp.example.org:587', to: ['a@example.org', 'b@example.org'] },
      { name: 'hook', type: 'webhook', url: 'http://127.0.0.1:8080/...' },
      { type: 'webhook' }, null,
    ],
    routes: [{ match: { severity: 'critical' }, channels: ['wx'] }],
  };
  const notes = { channels: [
    { name: 'lark', failing: true, last_error: 'feishu https://open.feishu.cn/... refused: 19021 sign match fail',
      last_error_at: '2026-12-02T13:05:50Z', last_delivered_at: null },
    { name: 'wx', failing: false, last_error: '', last_delivered_at: '2026-12-02T13:00:00Z' },
  ] };
  const rows = channelRows(view, notes);
  assert.deepEqual(rows.map((r) => [r.name, r.target, r.secret, r.routed, r.state.tone, r.state.key]), [
    ['lark', 'https://open.feishu.cn/...', true, false, 'red', 'settings.state.failing'],
    ['wx', 'https://qyapi.weixin.qq.com/...', null, true, 'green', 'settings.state.ok'],
    ['mail', 'smtp.example.org:587 → a@example.org, b@example.org', false, false, 'grey', 'settings.state.none'],
    ['hook', 'http://127.0.0.1:8080/...', null, false, 'grey', 'settings.state.none'],
  ]);
  assert.equal(rows[0].state.lastError, 'feishu https://open.feishu.cn/... refused: 19021 sign match fail');
  assert.deepEqual(channelRows(null, null), []);
  assert.deepEqual(deliveryState('x', { channels: 'bad' }), { tone: 'grey', key: 'settings.state.none' });
  assert.equal(secretState({ type: 'dingtalk' }), false);
  assert.equal(targetOf({ type: 'slack' }), '');
  assert.equal(routeText(view.routes[0]), 'severity=critical → wx');
  assert.equal(routeText({ channels: ['a', 'b'] }), '* → a, b');
});

test('the URL: #settings&tab=notifications, the link of notification emails', () => {
  assert.deepEqual(parseSettingsHash('#settings&tab=notifications'), { tab: 'notifications' });
  assert.deepEqual(parseSettingsHash('#settings'), { tab: 'notifications' });
});

test('the Settings tab\'s strings exist, translated, in both languages', () => {
  const { en, zh } = ALL;
  const src = ['settings.js', 'settings.model.js'].map((f) => readFileSync(new URL(`../src/pages/${f}`, import.meta.url), 'utf8')).join('\n');
  const keys = new Set();
  for (const m of src.matchAll(/'((?:settings|nav)\.[\w.]+)'/g)) keys.add(m[1]);
  for (const c of CHANNEL_COLUMNS) keys.add(`settings.col.${c}`);
  for (const type of TYPES) keys.add(`settings.type.${type}`);
  for (const f of FIELDS) keys.add(`settings.field.${f.prop}`);
  for (const l of ['default', 'en', 'zh']) keys.add(`settings.lang.${l}`);
  for (const k of ['settings.col.', 'settings.field.', 'settings.type.', 'settings.lang.']) keys.delete(k);
  assert.ok(keys.size > 60, `found ${keys.size} keys`);
  for (const k of keys) {
    assert.ok(k in en, `English lacks ${k}`);
    assert.ok(k in zh, `Chinese lacks ${k}`);
    assert.notEqual(zh[k], en[k], `${k} is not translated`);
  }
  const table = Object.keys(en).filter((k) => k.startsWith('settings.'));
  for (const k of table) assert.ok(keys.has(k), `${k} is not used`);
});
