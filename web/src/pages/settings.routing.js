// The Settings tab's Recipients and Routes sections (settings.js shows them
// under the channels): the people and teams of config.json's
// notify.recipients (GET, PUT and DELETE /api/v1/notify/recipients[/<name>])
// with a form (name, person or team, Unix users, team, lead, channels as
// checkboxes of the configured channels, language, quiet hours), and the
// ordered routes (GET and PUT /api/v1/notify/routes, the whole list each
// time, as the order is kept): add, edit, remove, move up or down, a route's
// match as label=value rows, its channels and recipients. The data shaping
// is settings.model.js'.
//
// Names, labels and errors are the server's or the file's (untrusted): they
// reach the page only as text nodes or input values, never as HTML.

import * as api from '../api.js';
import { h, setText } from '../dom.js';
import { t } from '../i18n.js';
import { DataTable, columns } from '../table.js';
import {
  MATCH_KEYS, RECIPIENT_COLUMNS, RECIPIENT_KINDS, moveRoute, recipientBody, recipientForm, recipientRows, recipientsOf,
  routeBody, routeForm, routeText, withRoute,
} from './settings.model.js';

export const RECIPIENTS = '/api/v1/notify/recipients';
export const ROUTES = '/api/v1/notify/routes';
const recipientPath = (name) => `${RECIPIENTS}/${encodeURIComponent(name)}`;

// A labelled control, as the channel form lays them out.
function field(T, labelKey, control, hint = null) {
  return h('label', { class: 'field grow' }, T(labelKey, 'span', 'field-label'), control,
    hint ? T(hint, 'span', 'sil-hint') : null);
}

// A <select> of '' (its `noneKey` text) and `values`, keeping `value`.
function fillSelect(select, values, noneKey, value) {
  select.replaceChildren(h('option', { value: '' }, t(noneKey)), ...values.map((v) => h('option', { value: v }, v)));
  select.value = values.includes(value) ? value : '';
}

// Checkboxes of `names` (the configured channels, the recipients), `checked`
// ticked; one a stored object names that no longer exists is shown too, so
// saving does not drop it unseen (the server then says what is wrong).
function fillChecks(box, names, checked, testid) {
  const all = [...names, ...checked.filter((n) => !names.includes(n))];
  box.replaceChildren(...(all.length ? all.map((n) => h('label', { class: 'field inline settings-check' },
    h('input', { type: 'checkbox', value: n, checked: checked.includes(n) || null, 'data-testid': testid }), n))
    : [h('span', { class: 'sil-hint' }, t('settings.none'))]));
}

const checkedOf = (box) => [...box.querySelectorAll('input[type=checkbox]')].filter((c) => c.checked).map((c) => c.value);

export class RoutingSections {
  // `page`: the SettingsPage (its T, say, refresh and result line).
  constructor(page) {
    this.page = page;
    this.recipients = null; // GET /api/v1/notify/recipients' list, null before the first
    this.routes = null; // GET /api/v1/notify/routes' list
    this.channelNames = [];
    this.editingRecipient = null; // the stored recipient the form edits (null: a new one)
    this.editingRoute = -1; // the index of the route the form edits (-1: a new one)
    this.confirming = null; // 'r:<name>' or 'route:<i>' whose removal asks "sure?"
    this.busy = false;
    this.buildRecipients();
    this.buildRoutes();
    this.labelRecipient();
    this.els = [this.recipientList, this.recipientForm.el, this.routeList, this.routeForm.el];
  }

  async refresh() {
    const [r, routes] = await Promise.all([api.getJson(RECIPIENTS), api.getJson(ROUTES)]);
    this.recipients = recipientsOf(r?.data);
    this.routes = Array.isArray(routes?.data?.routes) ? routes.data.routes.filter((x) => x && typeof x === 'object') : [];
  }

  // -------------------------------------------------------------------------
  // Recipients

  buildRecipients() {
    const T = this.page.T.bind(this.page);
    this.recipientEmpty = h('div', { class: 'jobs-empty', 'data-testid': 'settings-recipients-empty' });
    this.recipientTable = new DataTable({ T, tableClass: 'jobs-table settings-table', testid: 'settings-recipients', hidden: true,
      columns: columns('settings.rcol.', RECIPIENT_COLUMNS) });
    const add = h('button', { type: 'button', class: 'btn', 'data-testid': 'settings-add-recipient',
      onclick: () => this.openRecipient(null) }, T('settings.addRecipient'));
    this.recipientList = h('section', { class: 'card jobs-list settings-section', 'data-section': 'recipients' },
      h('div', { class: 'jobs-head' }, h('h3', null, T('settings.recipients')), T('settings.recipientsHint', 'span', 'hint'), add),
      this.recipientEmpty, this.recipientTable.el);
    const f = {};
    f.title = h('h3', { class: 'sil-title', 'data-testid': 'settings-recipient-title' });
    f.name = h('input', { class: 'input', name: 'recipient-name', type: 'text', spellcheck: 'false', autocomplete: 'off' });
    f.kind = h('select', { class: 'input', name: 'recipient-kind', onchange: () => this.showKind() });
    for (const k of RECIPIENT_KINDS) f.kind.append(h('option', { value: k }, ''));
    f.users = h('input', { class: 'input', name: 'recipient-users', type: 'text', spellcheck: 'false', autocomplete: 'off' });
    f.team = h('select', { class: 'input', name: 'recipient-team' });
    f.lead = h('select', { class: 'input', name: 'recipient-lead' });
    f.channels = h('div', { class: 'filter-row settings-checks', 'data-testid': 'settings-recipient-channels' });
    f.language = h('select', { class: 'input', name: 'recipient-language' });
    for (const v of ['', 'en', 'zh']) f.language.append(h('option', { value: v }, ''));
    f.quietStart = h('input', { class: 'input', name: 'quiet-start', type: 'text', placeholder: '23:00', autocomplete: 'off' });
    f.quietEnd = h('input', { class: 'input', name: 'quiet-end', type: 'text', placeholder: '08:00', autocomplete: 'off' });
    f.quietZone = h('input', { class: 'input', name: 'quiet-zone', type: 'text', placeholder: 'Asia/Shanghai', autocomplete: 'off' });
    f.usersRow = field(T, 'settings.rfield.users', f.users, 'settings.form.listHint');
    f.teamRow = field(T, 'settings.rfield.team', f.team);
    f.leadRow = field(T, 'settings.rfield.lead', f.lead);
    f.error = h('div', { class: 'sil-error', role: 'alert', hidden: true, 'data-testid': 'settings-recipient-error' });
    f.submit = h('button', { type: 'submit', class: 'btn primary', 'data-testid': 'settings-recipient-save' }, T('settings.save'));
    const cancel = h('button', { type: 'button', class: 'btn', onclick: () => this.closeRecipient() }, T('settings.cancel'));
    f.el = h('section', { class: 'card jobs-list settings-form', hidden: true, 'data-testid': 'settings-recipient-form' },
      h('form', { class: 'sil-form', novalidate: true, onsubmit: (e) => { e.preventDefault(); this.saveRecipient(); } },
        f.title,
        h('div', { class: 'filter-row' }, field(T, 'settings.field.name', f.name), field(T, 'settings.rfield.kind', f.kind)),
        h('div', { class: 'filter-row' }, f.usersRow, f.teamRow, f.leadRow),
        h('div', { class: 'field' }, T('settings.rfield.channels', 'span', 'field-label'), f.channels),
        h('div', { class: 'filter-row' }, field(T, 'settings.field.language', f.language),
          field(T, 'settings.rfield.quietStart', f.quietStart), field(T, 'settings.rfield.quietEnd', f.quietEnd),
          field(T, 'settings.rfield.quietZone', f.quietZone)),
        T('settings.rform.quietHint', 'div', 'sil-hint'), f.error,
        h('div', { class: 'sil-buttons' }, cancel, f.submit)));
    this.recipientForm = f;
  }

  renderRecipients() {
    const rows = recipientRows(this.recipients ?? [], this.routes ?? []);
    const empty = this.recipients === null ? t('loading') : rows.length ? '' : t('settings.noRecipients');
    setText(this.recipientEmpty, empty);
    this.recipientEmpty.hidden = !empty;
    this.recipientTable.el.hidden = rows.length === 0;
    const key = JSON.stringify([t('settings.edit'), rows, this.confirming]);
    this.recipientTable.update(key, () => rows.map((r) => this.recipientRow(r)));
  }

  recipientRow(r) {
    const who = r.kind === 'team'
      ? (r.lead ? t('settings.leadIs', { name: r.lead }) : '')
      : [r.users, r.team ? t('settings.inTeam', { name: r.team }) : ''].filter(Boolean).join(' · ');
    const id = `r:${r.name}`;
    return h('tr', { class: 'settings-row', 'data-recipient': r.name },
      h('td', { class: 'settings-name' }, r.name, r.routed ? h('div', { class: 'job-sub' }, t('settings.routed')) : null),
      h('td', { class: 'nowrap' }, t(`settings.kind.${r.kind}`)),
      h('td', null, who),
      h('td', null, r.channels || '–'),
      h('td', { class: 'nowrap' }, t(`settings.lang.${r.language || 'default'}`)),
      h('td', { class: 'nowrap' }, r.quiet || '–'),
      h('td', { class: 'nowrap settings-actions' }, this.rowActions(id, r.name, () => this.openRecipient(r.view),
        () => this.removeRecipient(r.name))));
  }

  // Edit and Delete, or the question Delete asks first.
  rowActions(id, name, edit, remove) {
    if (this.confirming === id) {
      return [h('span', { class: 'settings-confirm' }, t('settings.confirmDelete', { name })), ' ',
        h('button', { type: 'button', class: 'btn', 'data-testid': 'settings-remove-yes', onclick: remove }, t('settings.delete')), ' ',
        h('button', { type: 'button', class: 'btn', onclick: () => { this.confirming = null; this.page.render(); } }, t('settings.cancel'))];
    }
    return [h('button', { type: 'button', class: 'btn', 'data-testid': 'settings-edit', onclick: edit }, t('settings.edit')), ' ',
      h('button', { type: 'button', class: 'btn', 'data-testid': 'settings-remove',
        onclick: () => { this.confirming = id; this.page.render(); } }, t('settings.delete'))];
  }

  // The recipient form's texts and choices (relabel() calls it too).
  labelRecipient() {
    const f = this.recipientForm;
    setText(f.title, this.editingRecipient ? t('settings.rform.edit', { name: this.editingRecipient.name }) : t('settings.rform.new'));
    for (const o of f.kind.options) setText(o, t(`settings.kind.${o.value}`));
    for (const o of f.language.options) setText(o, t(`settings.lang.${o.value || 'default'}`));
    if (f.team.options[0]) setText(f.team.options[0], t('settings.noTeam'));
    if (f.lead.options[0]) setText(f.lead.options[0], t('settings.noLead'));
  }

  showKind() {
    const f = this.recipientForm;
    const team = f.kind.value === 'team';
    f.usersRow.hidden = team;
    f.teamRow.hidden = team;
    f.leadRow.hidden = !team;
  }

  openRecipient(view) {
    const f = this.recipientForm;
    const v = recipientForm(view);
    const all = this.recipients ?? [];
    this.editingRecipient = view;
    f.name.value = v.name;
    f.name.disabled = !!view; // a rename is a new recipient and a delete
    f.kind.value = v.kind;
    f.users.value = v.users;
    fillSelect(f.team, all.filter((r) => r.kind === 'team' && r.name !== v.name).map((r) => r.name), 'settings.noTeam', v.team);
    fillSelect(f.lead, all.filter((r) => r.kind !== 'team' && r.name !== v.name).map((r) => r.name), 'settings.noLead', v.lead);
    fillChecks(f.channels, this.channelNames, v.channels, 'settings-recipient-channel');
    f.language.value = v.language;
    f.quietStart.value = v.quietStart;
    f.quietEnd.value = v.quietEnd;
    f.quietZone.value = v.quietZone;
    f.error.hidden = true;
    f.el.hidden = false;
    this.labelRecipient();
    this.showKind();
    (view ? f.kind : f.name).focus();
  }

  closeRecipient() {
    this.recipientForm.el.hidden = true;
    this.editingRecipient = null;
  }

  async saveRecipient() {
    const f = this.recipientForm;
    const built = recipientBody({ name: f.name.value, kind: f.kind.value, users: f.users.value, team: f.team.value,
      lead: f.lead.value, channels: checkedOf(f.channels), language: f.language.value, quietStart: f.quietStart.value,
      quietEnd: f.quietEnd.value, quietZone: f.quietZone.value });
    if (built.error) return this.page.say(f.error, built.error.key, built.error.vars, false);
    await this.send(f.error, async () => {
      await api.sendJson('PUT', recipientPath(built.body.name), built.body);
      this.closeRecipient();
      this.page.say(this.page.result, 'settings.result.recipientSaved', { name: built.body.name }, true);
    });
  }

  removeRecipient(name) {
    this.confirming = null;
    return this.send(this.page.result, async () => {
      await api.sendJson('DELETE', recipientPath(name));
      if (this.editingRecipient?.name === name) this.closeRecipient();
      this.page.say(this.page.result, 'settings.result.recipientDeleted', { name }, true);
    });
  }

  // Runs one change; a refusal goes into `el` verbatim; then the page
  // reloads what the server holds.
  async send(el, change) {
    if (this.busy) return;
    this.busy = true;
    try {
      await change();
    } catch (e) {
      this.page.say(el, 'settings.result.failed', { err: e.message }, false);
    } finally {
      this.busy = false;
    }
    await this.page.refresh();
  }

  // -------------------------------------------------------------------------
  // Routes

  buildRoutes() {
    const T = this.page.T.bind(this.page);
    this.routeItems = h('ol', { class: 'settings-routes', 'data-testid': 'settings-routes' });
    const add = h('button', { type: 'button', class: 'btn', 'data-testid': 'settings-add-route', onclick: () => this.openRoute(-1) },
      T('settings.addRoute'));
    this.routeList = h('section', { class: 'card jobs-list settings-section', 'data-section': 'routes' },
      h('div', { class: 'jobs-head' }, h('h3', null, T('settings.routes')), T('settings.routesHint', 'span', 'hint'), add),
      this.routeItems);
    const f = {};
    f.title = h('h3', { class: 'sil-title', 'data-testid': 'settings-route-title' });
    f.match = h('div', { class: 'settings-match', 'data-testid': 'settings-route-match' });
    f.keys = h('datalist', { id: 'settings-match-keys' }, ...MATCH_KEYS.map((k) => h('option', { value: k })));
    const addRow = h('button', { type: 'button', class: 'btn', 'data-testid': 'settings-route-add-label', onclick: () => this.addMatchRow('', '') },
      T('settings.addLabel'));
    f.channels = h('div', { class: 'filter-row settings-checks', 'data-testid': 'settings-route-channels' });
    f.recipients = h('div', { class: 'filter-row settings-checks', 'data-testid': 'settings-route-recipients' });
    f.error = h('div', { class: 'sil-error', role: 'alert', hidden: true, 'data-testid': 'settings-route-error' });
    const submit = h('button', { type: 'submit', class: 'btn primary', 'data-testid': 'settings-route-save' }, T('settings.save'));
    const cancel = h('button', { type: 'button', class: 'btn', onclick: () => this.closeRoute() }, T('settings.cancel'));
    f.el = h('section', { class: 'card jobs-list settings-form', hidden: true, 'data-testid': 'settings-route-form' },
      h('form', { class: 'sil-form', novalidate: true, onsubmit: (e) => { e.preventDefault(); this.saveRoute(); } },
        f.title, T('settings.routeForm.matchHint', 'div', 'sil-hint'), f.match, f.keys, h('div', null, addRow),
        h('div', { class: 'field' }, T('settings.routeForm.channels', 'span', 'field-label'), f.channels),
        h('div', { class: 'field' }, T('settings.routeForm.recipients', 'span', 'field-label'), f.recipients),
        f.error, h('div', { class: 'sil-buttons' }, cancel, submit)));
    this.routeForm = f;
  }

  renderRoutes() {
    const routes = this.routes ?? [];
    if (!routes.length) {
      this.routeItems.replaceChildren(h('li', { class: 'jobs-empty' }, t(this.routes === null ? 'loading' : 'settings.noRoutes')));
      return;
    }
    this.routeItems.replaceChildren(...routes.map((r, i) => this.routeItem(r, i, routes.length)));
  }

  routeItem(r, i, n) {
    const id = `route:${i}`;
    const move = (delta, key, testid) => h('button', { type: 'button', class: 'btn', 'data-testid': testid,
      disabled: i + delta < 0 || i + delta >= n || null, onclick: () => this.putRoutes(moveRoute(this.routes, i, delta)) }, t(key));
    return h('li', { class: 'settings-route', 'data-route': String(i) },
      h('code', null, routeText(r)), ' ',
      h('span', { class: 'nowrap settings-actions' }, move(-1, 'settings.up', 'settings-route-up'), ' ',
        move(1, 'settings.down', 'settings-route-down'), ' ',
        this.rowActions(id, t('settings.routeN', { n: i + 1 }), () => this.openRoute(i),
          () => { this.confirming = null; return this.putRoutes(withRoute(this.routes, i, null)); })));
  }

  addMatchRow(key, value) {
    const row = h('div', { class: 'filter-row settings-match-row' },
      h('input', { class: 'input', name: 'match-key', type: 'text', list: 'settings-match-keys', spellcheck: 'false',
        autocomplete: 'off', placeholder: t('settings.routeForm.label'), value: key }),
      h('span', null, '='),
      h('input', { class: 'input', name: 'match-value', type: 'text', spellcheck: 'false', autocomplete: 'off',
        placeholder: t('settings.routeForm.value'), value }),
      h('button', { type: 'button', class: 'btn', 'data-testid': 'settings-route-drop-label', onclick: () => row.remove() }, '×'));
    this.routeForm.match.append(row);
  }

  openRoute(i) {
    const f = this.routeForm;
    this.editingRoute = i;
    const v = routeForm(i >= 0 ? this.routes[i] : null);
    f.match.replaceChildren();
    for (const [k, val] of v.match) this.addMatchRow(k, val);
    fillChecks(f.channels, this.channelNames, v.channels, 'settings-route-channel');
    fillChecks(f.recipients, (this.recipients ?? []).map((r) => r.name), v.recipients, 'settings-route-recipient');
    setText(f.title, i >= 0 ? t('settings.routeForm.edit', { n: i + 1 }) : t('settings.routeForm.new'));
    f.error.hidden = true;
    f.el.hidden = false;
  }

  closeRoute() {
    this.routeForm.el.hidden = true;
    this.editingRoute = -1;
  }

  saveRoute() {
    const f = this.routeForm;
    const match = [...f.match.querySelectorAll('.settings-match-row')]
      .map((row) => [row.querySelector('[name=match-key]').value, row.querySelector('[name=match-value]').value]);
    const built = routeBody({ match, channels: checkedOf(f.channels), recipients: checkedOf(f.recipients) });
    if (built.error) return this.page.say(f.error, built.error.key, built.error.vars, false);
    return this.putRoutes(withRoute(this.routes ?? [], this.editingRoute, built.route), f.error, () => this.closeRoute());
  }

  // PUT /api/v1/notify/routes with the whole list; `then` once saved.
  putRoutes(routes, el = this.page.result, then = null) {
    return this.send(el, async () => {
      await api.sendJson('PUT', ROUTES, { routes });
      then?.();
      this.page.say(this.page.result, 'settings.result.routesSaved', null, true);
    });
  }

  // -------------------------------------------------------------------------

  render(view) {
    this.channelNames = (Array.isArray(view?.channels) ? view.channels : []).map((c) => c?.name).filter((n) => typeof n === 'string');
    this.renderRecipients();
    this.renderRoutes();
  }

  relabel() {
    this.labelRecipient();
    const f = this.routeForm;
    if (!f.el.hidden) setText(f.title, this.editingRoute >= 0 ? t('settings.routeForm.edit', { n: this.editingRoute + 1 })
      : t('settings.routeForm.new'));
  }
}
