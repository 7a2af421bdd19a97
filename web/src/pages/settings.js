// The Settings tab (#settings&tab=notifications, the link notification
// emails carry): the notification channels of config.json
// (GET /api/v1/notify/channels, secrets left out by the server) with each
// one's type, where it sends, whether its secret is set and its delivery
// state from the delivery log (GET /api/v1/notifications: a failing channel
// in red with its last answer); a form to add or edit a channel by type
// (PUT /api/v1/notify/channels/<name>; a secret left empty keeps the stored
// one), Send test (POST /api/v1/notify/test, for a saved channel or what
// the form says) with its result, and Delete (asking first); below them the
// recipients and the ordered routes, edited the same way
// (settings.routing.js). Refreshed every 10 s while shown. The data shaping
// is settings.model.js'.
//
// Names, URLs, answers and errors are the server's (untrusted): they reach
// the page only as text nodes or input values, never as HTML.

import * as api from '../api.js';
import { h, retranslate, setText, translated } from '../dom.js';
import { t } from '../i18n.js';
import { registerPage } from '../registry.js';
import { DataTable, columns } from '../table.js';
import { CHANNEL_COLUMNS, FIELDS, TYPES, channelBody, channelRows, fieldsFor, formValues, isWriteOnly, storedHas } from './settings.model.js';
import { RoutingSections } from './settings.routing.js';
import strings from './settings.i18n.js';

const REFRESH_MS = 10000;
const CHANNELS = '/api/v1/notify/channels';
const TEST = '/api/v1/notify/test';

const channelPath = (name) => `${CHANNELS}/${encodeURIComponent(name)}`;

class SettingsPage {
  constructor() {
    this.visible = false;
    this.view = null; // GET /api/v1/notify/channels' data, null before the first
    this.error = null;
    this.api = null; // false once the server answered 404
    this.notifications = null; // /api/v1/notifications' data (delivery state)
    this.editing = null; // the view of the channel the form edits (null: a new one)
    this.confirming = null; // the name whose Delete asks "sure?"
    this.busy = null; // what a request on its way is for ('save', 'test', 'row:<name>')
    this.timer = null;
    this.i18n = [];
    this.said = new Map(); // element -> [key, vars] of what say() put there
    this.build();
  }

  T(key, tag = 'span', cls = null) {
    return translated(this.i18n, t, key, tag, cls);
  }

  // -------------------------------------------------------------------------
  // Layout

  build() {
    const T = this.T.bind(this);
    this.note = h('div', { class: 'note', hidden: true, role: 'alert', 'data-testid': 'settings-note' });
    this.count = h('span', { class: 'count' });
    this.path = h('span', { class: 'hint', 'data-testid': 'settings-path' });
    this.result = h('div', { class: 'sil-result', role: 'status', hidden: true, 'data-testid': 'settings-result' });
    this.empty = h('div', { class: 'jobs-empty', 'data-testid': 'settings-empty' });
    this.table = new DataTable({ T, tableClass: 'jobs-table settings-table', testid: 'settings-channels', hidden: true,
      columns: columns('settings.col.', CHANNEL_COLUMNS) });
    const add = h('button', { type: 'button', class: 'btn', 'data-testid': 'settings-add', onclick: () => this.openForm(null) },
      T('settings.add'));
    this.list = h('section', { class: 'card jobs-list settings-section', 'data-section': 'channels' },
      h('div', { class: 'jobs-head' }, h('h3', null, T('settings.title'), this.count), this.path, add),
      this.result, this.empty, this.table.el);
    this.buildForm();
    this.routing = new RoutingSections(this);
    this.el = h('div', { class: 'jobs-page settings-page', hidden: true }, this.note, this.list, this.form.el,
      ...this.routing.els);
  }

  // The form of one channel: a type, a name and every type's fields, those
  // of other types hidden.
  buildForm() {
    const T = this.T.bind(this);
    const f = { fields: {} };
    f.title = h('h3', { class: 'sil-title', 'data-testid': 'settings-form-title' });
    f.type = h('select', { class: 'input', name: 'type', onchange: () => this.showFields() });
    for (const type of TYPES) {
      const o = T(`settings.type.${type}`, 'option');
      o.value = type;
      f.type.append(o);
    }
    f.name = h('input', { class: 'input', name: 'name', type: 'text', spellcheck: 'false', autocomplete: 'off' });
    const field = (labelKey, control, hint = null) => h('label', { class: 'field grow' },
      T(labelKey, 'span', 'field-label'), control, hint ? T(hint, 'span', 'sil-hint') : null);
    const rows = [h('div', { class: 'filter-row' }, field('settings.field.type', f.type), field('settings.field.name', f.name))];
    for (const def of FIELDS) {
      let control;
      if (def.kind === 'bool') {
        control = h('input', { type: 'checkbox', name: def.prop });
      } else if (def.kind === 'language') {
        control = h('select', { class: 'input', name: def.prop });
        for (const v of ['', 'en', 'zh']) {
          const o = T(`settings.lang.${v || 'default'}`, 'option');
          o.value = v;
          control.append(o);
        }
      } else if (def.kind === 'headers' || def.prop === 'body') {
        control = h('textarea', { class: 'input', name: def.prop, rows: 2, spellcheck: 'false' });
      } else {
        control = h('input', { class: 'input', name: def.prop, spellcheck: 'false', autocomplete: 'off',
          type: def.prop === 'secret' || def.prop === 'password' ? 'password' : 'text' });
      }
      const hint = def.kind === 'list' ? 'settings.form.listHint' : def.kind === 'headers' ? 'settings.form.headersHint' : null;
      const row = field(`settings.field.${def.prop}`, control, hint);
      row.dataset.field = def.prop;
      f.fields[def.prop] = { def, control, row };
      rows.push(row);
    }
    f.error = h('div', { class: 'sil-error', role: 'alert', hidden: true, 'data-testid': 'settings-form-error' });
    f.testResult = h('div', { class: 'sil-result', role: 'status', hidden: true, 'data-testid': 'settings-form-test' });
    f.submit = h('button', { type: 'submit', class: 'btn primary', 'data-testid': 'settings-save' });
    f.test = h('button', { type: 'button', class: 'btn', 'data-testid': 'settings-form-send-test', onclick: () => this.testForm() });
    f.cancel = h('button', { type: 'button', class: 'btn', 'data-testid': 'settings-cancel', onclick: () => this.closeForm() },
      T('settings.cancel'));
    f.el = h('section', { class: 'card jobs-list settings-form', hidden: true, 'data-testid': 'settings-form' },
      h('form', { class: 'sil-form', novalidate: true, onsubmit: (e) => { e.preventDefault(); this.save(); } },
        f.title, ...rows, T('settings.form.testHint', 'div', 'sil-hint'), f.error, f.testResult,
        h('div', { class: 'sil-buttons' }, f.cancel, f.test, f.submit)));
    this.form = f;
    this.labelForm();
  }

  // -------------------------------------------------------------------------
  // Page hooks (registry.js)

  show() {
    this.el.hidden = false;
    if (this.visible) return;
    this.visible = true;
    this.render();
    this.schedule(0);
  }

  hide() {
    this.visible = false;
    this.el.hidden = true;
    clearTimeout(this.timer);
  }

  relabel() {
    retranslate(this.i18n, t);
    for (const [el, [key, vars]] of this.said) setText(el, SettingsPage.text(key, vars));
    this.labelForm();
    this.routing.relabel();
    if (this.visible) this.render();
  }

  onVisibility(hidden) {
    if (hidden) clearTimeout(this.timer);
    else if (this.visible) this.schedule(0);
  }

  // -------------------------------------------------------------------------
  // Data

  schedule(ms) {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.tick(), ms);
  }

  async tick() {
    if (!this.visible || document.hidden || this.api === false) return;
    await this.refresh();
    if (this.visible && this.api !== false) this.schedule(REFRESH_MS);
  }

  async refresh() {
    try {
      const [view, notes] = await Promise.all([
        api.getJson(CHANNELS),
        api.getJson('/api/v1/notifications', { limit: 0 }).catch(() => null),
        this.routing.refresh(),
      ]);
      this.view = view?.data ?? { channels: [], routes: [] };
      this.notifications = notes?.data ?? null;
      this.error = null;
      this.api = true;
    } catch (e) {
      if (e.status === 404) this.api = false;
      this.error = e;
    }
    if (this.visible) this.render();
  }

  // -------------------------------------------------------------------------
  // Rendering

  render() {
    const missing = this.api === false;
    this.note.hidden = !missing;
    setText(this.note, missing ? t('settings.apiMissing') : '');
    this.list.hidden = missing;
    this.routing.recipientList.hidden = missing;
    this.routing.routeList.hidden = missing;
    const rows = channelRows(this.view, this.notifications);
    setText(this.count, rows.length ? String(rows.length) : '');
    setText(this.path, this.view?.path ? t('settings.hint', { path: this.view.path }) : '');
    let empty = '';
    if (this.error && !missing) empty = t('settings.loadFailed', { err: this.error.message });
    else if (this.view === null) empty = t('loading');
    else if (!rows.length) empty = t('settings.empty');
    setText(this.empty, empty);
    this.empty.hidden = !empty;
    this.table.el.hidden = rows.length === 0;
    const key = JSON.stringify([t('settings.edit'), rows, this.confirming, this.busy]);
    this.table.update(key, () => rows.map((r) => this.row(r)));
    this.routing.render(this.view);
  }

  row(r) {
    const s = r.state;
    const secret = r.secret === null ? '–' : t(r.secret ? 'settings.secret.set' : 'settings.secret.unset');
    const busy = this.busy === `row:${r.name}`;
    const actions = this.confirming === r.name
      ? [h('span', { class: 'settings-confirm' }, t('settings.confirmDelete', { name: r.name })), ' ',
        h('button', { type: 'button', class: 'btn', 'data-testid': 'settings-delete-yes', onclick: () => this.remove(r.name) },
          t('settings.delete')), ' ',
        h('button', { type: 'button', class: 'btn', onclick: () => { this.confirming = null; this.render(); } }, t('settings.cancel'))]
      : [h('button', { type: 'button', class: 'btn', 'data-testid': 'settings-edit', onclick: () => this.openForm(r.view) }, t('settings.edit')), ' ',
        h('button', { type: 'button', class: 'btn', 'data-testid': 'settings-send-test', disabled: busy || null,
          onclick: () => this.testSaved(r.name) }, t(busy ? 'settings.testing' : 'settings.test')), ' ',
        h('button', { type: 'button', class: 'btn', 'data-testid': 'settings-delete',
          onclick: () => { this.confirming = r.name; this.render(); } }, t('settings.delete'))];
    return h('tr', { class: `settings-row${s.tone === 'red' ? ' failing' : ''}`, 'data-name': r.name },
      h('td', { class: 'settings-name' }, r.name, r.routed ? h('div', { class: 'job-sub' }, t('settings.routed')) : null),
      h('td', { class: 'nowrap' }, TYPES.includes(r.type) ? t(`settings.type.${r.type}`) : r.type),
      h('td', { class: 'settings-target' }, h('code', null, r.target)),
      h('td', { class: 'nowrap settings-secret' }, secret),
      h('td', { class: 'settings-delivery' }, h('span', { class: `badge ${s.tone}` }, t(s.key)),
        s.tone === 'red' && s.lastError ? h('div', { class: 'rule-error settings-last-error' }, t('settings.lastError', { err: s.lastError })) : null),
      h('td', { class: 'nowrap settings-actions' }, actions));
  }

  // What the last save, delete or test did (the server's words verbatim in
  // `vars`), kept as a key so that a change of language relabels it.
  say(el, key, vars, ok) {
    this.said.set(el, [key, vars]);
    setText(el, SettingsPage.text(key, vars));
    // A form's error line is an alert (role), a result a status.
    el.className = `${el.getAttribute('role') === 'alert' ? 'sil-error' : 'sil-result'} ${ok ? 'ok' : 'bad'}`;
    el.hidden = false;
  }

  // -------------------------------------------------------------------------
  // The form

  // Texts that depend on what the form edits (relabel() calls it).
  labelForm() {
    const f = this.form;
    setText(f.title, this.editing ? t('settings.form.edit', { name: this.editing.name }) : t('settings.form.new'));
    setText(f.submit, t(this.busy === 'save' ? 'settings.saving' : 'settings.save'));
    setText(f.test, t(this.busy === 'test' ? 'settings.testing' : 'settings.test'));
    this.showFields();
  }

  // The fields of the picked type; a stored secret's field says it is set.
  showFields() {
    const f = this.form;
    const type = f.type.value;
    const own = new Set(fieldsFor(type).map((d) => d.prop));
    const stored = this.editing && this.editing.type === type ? this.editing : null;
    for (const { def, control, row } of Object.values(f.fields)) {
      row.hidden = !own.has(def.prop);
      if (!isWriteOnly(def)) continue;
      // What the server shows of it: the URL cut to its host, the headers' names.
      const shown = def.prop === 'url' ? stored?.url : def.prop === 'headers' ? stored?.header_names?.join(', ') : '';
      control.placeholder = storedHas(stored, def.prop) ? [shown, `(${t('settings.form.kept')})`].filter(Boolean).join(' ') : '';
    }
  }

  openForm(view) {
    const f = this.form;
    this.editing = view;
    const values = formValues(view);
    f.type.value = view?.type && TYPES.includes(view.type) ? view.type : TYPES[0];
    f.name.value = view?.name ?? '';
    f.name.disabled = !!view; // a rename is a new channel and a delete
    for (const { def, control } of Object.values(f.fields)) {
      if (def.kind === 'bool') control.checked = values[def.prop];
      else control.value = values[def.prop];
    }
    f.error.hidden = true;
    f.testResult.hidden = true;
    f.el.hidden = false;
    this.labelForm();
    (view ? f.type : f.name).focus();
  }

  closeForm() {
    this.form.el.hidden = true;
    this.editing = null;
  }

  // The form as a channel body, or null after showing why not.
  formBody() {
    const f = this.form;
    const values = {};
    for (const { def, control } of Object.values(f.fields)) values[def.prop] = def.kind === 'bool' ? control.checked : control.value;
    const type = f.type.value;
    const stored = this.editing && this.editing.type === type ? this.editing : null;
    const built = channelBody(type, f.name.value.trim(), values, stored);
    if (built.error) {
      this.say(f.error, built.error.key, built.error.vars, false);
      return null;
    }
    f.error.hidden = true;
    return built.body;
  }

  // Sends the form's channel with `send(body)` while its buttons say so
  // (`what`: 'save' or 'test'); a refusal goes into `el`, verbatim.
  async sendForm(what, el, send) {
    const body = this.formBody();
    if (!body || this.busy) return;
    this.busy = what;
    this.labelForm();
    try {
      await send(body);
    } catch (e) {
      this.say(el, 'settings.result.failed', { err: e.message }, false);
    } finally {
      this.busy = null;
      this.labelForm();
    }
  }

  save() {
    return this.sendForm('save', this.form.error, async (body) => {
      await api.sendJson('PUT', channelPath(body.name), body);
      this.closeForm();
      this.say(this.result, 'settings.result.saved', { name: body.name }, true);
      await this.refresh();
    });
  }

  // A message's text; a form error's `field` (a config.json key) by its label.
  static text(key, vars) {
    return t(key, vars?.field ? { ...vars, field: t(`settings.field.${vars.field}`) } : vars);
  }

  // A test's answer as say()'s key, vars and tone.
  static testResult(name, answer) {
    const d = answer?.data ?? {};
    return d.delivered === true
      ? ['settings.result.delivered', { name }, true]
      : ['settings.result.refused', { name, answer: String(d.answer ?? '') }, false];
  }

  testForm() {
    return this.sendForm('test', this.form.testResult, async (body) => {
      const answer = await api.sendJson('POST', TEST, { channel_config: body });
      this.say(this.form.testResult, ...SettingsPage.testResult(body.name, answer));
    });
  }

  async testSaved(name) {
    if (this.busy) return;
    this.busy = `row:${name}`;
    this.render();
    try {
      const answer = await api.sendJson('POST', TEST, { channel: name });
      this.say(this.result, ...SettingsPage.testResult(name, answer));
    } catch (e) {
      this.say(this.result, 'settings.result.failed', { err: e.message }, false);
    } finally {
      this.busy = null;
      await this.refresh();
    }
  }

  async remove(name) {
    this.confirming = null;
    try {
      await api.sendJson('DELETE', channelPath(name));
      if (this.editing?.name === name) this.closeForm();
      this.say(this.result, 'settings.result.deleted', { name }, true);
    } catch (e) {
      this.say(this.result, 'settings.result.failed', { err: e.message }, false);
    }
    await this.refresh();
  }
}

registerPage({
  id: 'settings',
  hash: 'settings',
  label: 'nav.settings',
  strings,
  rangePicker: false, // nothing here is about a time range
  create: () => new SettingsPage(),
});
