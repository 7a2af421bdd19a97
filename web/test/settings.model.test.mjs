// Unit tests of the Settings tab's model (pages/settings.model.js, no DOM):
// each type's fields (docs/notify.md), a form into a channel body (a new
// channel's required fields, an edited one's secrets left out so the server
// keeps them, lists, headers, numbers, STARTTLS), a stored channel's view
// into the form (write-only fields empty), the list's rows (target, secret
// set or not, a failing channel with its last answer, routed), routes as
// text, recipients (a form into a body, empty fields left out, quiet
// hours; the list's rows) and routes (match rows, where to, moved up and
// down, replaced, removed), the URL, and that every string the tab uses exists, translated, in
// both languages, and every one of its table is used. Run from unit.test.mjs.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import {
  CHANNEL_COLUMNS, FIELDS, NAME_RE, RECIPIENT_COLUMNS, RECIPIENT_KINDS, TYPES, channelBody, channelRows, deliveryState,
  fieldsFor, formValues, moveRoute, parseHeaders, parseSettingsHash, recipientBody, recipientForm, recipientRows,
  recipientsOf, routeBody, routeForm, routeText, secretState, storedHas, targetOf, withRoute,
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

test('a recipient\'s form becomes its body, empty fields left out', () => {
  const person = { ...recipientForm(null), name: ' alice ', users: 'alice, al\n', team: 'vision', channels: ['alice-dm'],
    language: 'zh', quietStart: '23:00', quietEnd: '08:00', quietZone: 'Asia/Shanghai' };
  assert.deepEqual(recipientBody(person).body, { name: 'alice', users: ['alice', 'al'], team: 'vision', channels: ['alice-dm'],
    language: 'zh', quiet_hours: { start: '23:00', end: '08:00', timezone: 'Asia/Shanghai' } });
  // A team has a lead, not users nor a team; nothing set: nothing written.
  assert.deepEqual(recipientBody({ ...person, kind: 'team', lead: 'alice', language: '', quietStart: '', quietEnd: '', quietZone: '' }).body,
    { name: 'alice', kind: 'team', lead: 'alice', channels: ['alice-dm'] });
  assert.deepEqual(recipientBody({ ...recipientForm(null), name: 'bob' }).body, { name: 'bob', channels: [] });
  assert.deepEqual(recipientBody({ ...person, quietEnd: '' }), { error: { key: 'settings.err.quiet' } });
  assert.deepEqual(recipientBody({ ...person, quietStart: '25:00' }), { error: { key: 'settings.err.quiet' } });
  assert.deepEqual(recipientBody({ ...person, name: 'a/b' }), { error: { key: 'settings.err.name' } });
  // A stored recipient back into the form, and its body unchanged.
  const stored = recipientBody(person).body;
  assert.deepEqual(recipientBody(recipientForm(stored)).body, stored);
  assert.equal(recipientForm({ name: 'v', kind: 'team', team: 'x', lead: 'alice' }).team, '');
});

test('the recipients\' rows say who they are and whether a route names them', () => {
  const list = recipientsOf({ recipients: [
    { name: 'alice', users: ['alice', 'al'], team: 'vision', channels: ['dm', 'sms'], language: 'zh',
      quiet_hours: { start: '23:00', end: '08:00', timezone: 'Asia/Shanghai' } },
    { name: 'vision', kind: 'team', lead: 'alice', channels: ['room'] }, null, { name: 3 }] });
  assert.equal(list.length, 2);
  const rows = recipientRows(list, [{ match: {}, recipients: ['vision'] }]);
  assert.deepEqual(rows.map((r) => [r.name, r.kind, r.users, r.team, r.lead, r.channels, r.language, r.quiet, r.routed]), [
    ['alice', 'person', 'alice, al', 'vision', '', 'dm, sms', 'zh', '23:00–08:00 Asia/Shanghai', false],
    ['vision', 'team', '', '', 'alice', 'room', '', '', true]]);
  assert.deepEqual(RECIPIENT_KINDS, ['person', 'team']);
  assert.equal(RECIPIENT_COLUMNS.length, 7);
});

test('a route\'s form becomes a route; the list keeps its order, moved, replaced, removed', () => {
  assert.deepEqual(routeForm(null), { match: [['severity', 'critical']], channels: [], recipients: [] });
  const r = { match: { severity: 'critical', modelName: 'NVIDIA H100 80GB HBM3' }, channels: ['room'], recipients: ['alice'] };
  assert.deepEqual(routeForm(r).match, [['severity', 'critical'], ['modelName', 'NVIDIA H100 80GB HBM3']]);
  assert.deepEqual(routeBody(routeForm(r)), { route: r });
  assert.deepEqual(routeBody({ match: [[' job ', ' train '], ['', '']], channels: [], recipients: ['alice'] }),
    { route: { match: { job: 'train' }, recipients: ['alice'] } });
  assert.deepEqual(routeBody({ match: [], channels: ['room'], recipients: [] }), { route: { match: {}, channels: ['room'] } });
  assert.deepEqual(routeBody({ match: [['job', '']], channels: ['room'] }), { error: { key: 'settings.err.matchRow' } });
  assert.deepEqual(routeBody({ match: [['job', 'a'], ['job', 'b']], channels: ['room'] }),
    { error: { key: 'settings.err.matchTwice', vars: { label: 'job' } } });
  assert.deepEqual(routeBody({ match: [['job', 'a']], channels: [], recipients: [] }), { error: { key: 'settings.err.routeTo' } });
  const routes = ['a', 'b', 'c'];
  assert.deepEqual(moveRoute(routes, 0, 1), ['b', 'a', 'c']);
  assert.deepEqual(moveRoute(routes, 2, -1), ['a', 'c', 'b']);
  assert.equal(moveRoute(routes, 0, -1), routes);
  assert.equal(moveRoute(routes, 2, 1), routes);
  assert.deepEqual(withRoute(routes, 1, 'B'), ['a', 'B', 'c']);
  assert.deepEqual(withRoute(routes, -1, 'd'), ['a', 'b', 'c', 'd']);
  assert.deepEqual(withRoute(routes, 1, null), ['a', 'c']);
  assert.deepEqual(routes, ['a', 'b', 'c'], 'the list itself unchanged');
  assert.equal(routeText(r), 'severity=critical, modelName=NVIDIA H100 80GB HBM3 → room, alice');
});

test('the URL: #settings&tab=notifications, the link of notification emails', () => {
  assert.deepEqual(parseSettingsHash('#settings&tab=notifications'), { tab: 'notifications' });
  assert.deepEqual(parseSettingsHash('#settings'), { tab: 'notifications' });
});

test('the Settings tab\'s strings exist, translated, in both languages', () => {
  const { en, zh } = ALL;
  const src = ['settings.js', 'settings.model.js', 'settings.routing.js'].map((f) => readFileSync(new URL(`../src/pages/${f}`, import.meta.url), 'utf8')).join('\n');
  const keys = new Set();
  for (const m of src.matchAll(/'((?:settings|nav)\.[\w.]+)'/g)) keys.add(m[1]);
  for (const c of CHANNEL_COLUMNS) keys.add(`settings.col.${c}`);
  for (const type of TYPES) keys.add(`settings.type.${type}`);
  for (const f of FIELDS) keys.add(`settings.field.${f.prop}`);
  for (const l of ['default', 'en', 'zh']) keys.add(`settings.lang.${l}`);
  for (const c of RECIPIENT_COLUMNS) keys.add(`settings.rcol.${c}`);
  for (const k of RECIPIENT_KINDS) keys.add(`settings.kind.${k}`);
  for (const k of ['settings.col.', 'settings.field.', 'settings.type.', 'settings.lang.', 'settings.rcol.']) keys.delete(k);
  assert.ok(keys.size > 60, `found ${keys.size} keys`);
  for (const k of keys) {
    assert.ok(k in en, `English lacks ${k}`);
    assert.ok(k in zh, `Chinese lacks ${k}`);
    assert.notEqual(zh[k], en[k], `${k} is not translated`);
  }
  const table = Object.keys(en).filter((k) => k.startsWith('settings.'));
  for (const k of table) assert.ok(keys.has(k), `${k} is not used`);
});
