// The Settings tab's data shaping (no DOM): the notification channels'
// form (which fields each type has, docs/notify.md), the body a form
// becomes for PUT /api/v1/notify/channels/<name> and POST
// /api/v1/notify/test, the list's rows from the channels' view
// (GET /api/v1/notify/channels: secrets left out) and the delivery log's
// per-channel state (GET /api/v1/notifications), the recipients' and
// routes' forms and lists (their bodies, a route moved up or down), and the
// tab's URL.
//
// Secrets (a bot's signing secret, an SMTP password, header values, an SMS
// body, and the URL, whose path or query often is the secret) are never
// sent back by the server. Editing a channel, a secret field left empty
// keeps the stored value: the body leaves the key out.

export const TYPES = ['feishu', 'dingtalk', 'wecom', 'slack', 'webhook', 'email', 'sms'];
// The channel list's columns (settings.col.<name>).
export const CHANNEL_COLUMNS = ['name', 'type', 'target', 'secret', 'delivery', 'actions'];

const BOTS = ['feishu', 'dingtalk', 'wecom', 'slack'];
// Every field of the form, in order: its config.json key (prop), its kind, the
// types that have it, and whether a new channel of those types needs it.
//   kind: text | secret (write-only string) | list (comma or line separated)
//         | headers ("Name: value" lines, write-only) | number | bool
//         | language (en, zh or the type's default)
export const FIELDS = [
  { prop: 'url', kind: 'secret', types: [...BOTS, 'webhook', 'sms'], required: true },
  { prop: 'secret', kind: 'secret', types: ['feishu', 'dingtalk'] },
  { prop: 'at_mobiles', kind: 'list', types: ['dingtalk'] },
  { prop: 'smtp', kind: 'text', types: ['email'], required: true },
  { prop: 'starttls', kind: 'bool', types: ['email'] },
  { prop: 'username', kind: 'text', types: ['email'] },
  { prop: 'password', kind: 'secret', types: ['email'] },
  { prop: 'from', kind: 'text', types: ['email'], required: true },
  { prop: 'to', kind: 'list', types: ['email', 'sms'], required: true },
  { prop: 'body', kind: 'secret', types: ['sms'] },
  { prop: 'headers', kind: 'headers', types: ['webhook', 'sms'] },
  { prop: 'max_per_day', kind: 'number', types: ['sms'], integer: true },
  { prop: 'cost_per_message', kind: 'number', types: ['sms'] },
  { prop: 'max_cost_per_day', kind: 'number', types: ['sms'] },
  { prop: 'timezone', kind: 'text', types: ['sms'] },
  { prop: 'language', kind: 'language', types: [...BOTS, 'email', 'sms'] },
  { prop: 'ca_file', kind: 'text', types: [...BOTS, 'email', 'sms'] },
];

export function fieldsFor(type) {
  return FIELDS.filter((f) => f.types.includes(type));
}

// The write-only kinds: what the server never shows.
export function isWriteOnly(field) {
  return field.kind === 'secret' || field.kind === 'headers';
}

// Channel names as the server takes them in the path: 1 to 128
// characters, no '/', no control characters.
// eslint-disable-next-line no-control-regex
export const NAME_RE = /^[^/\u0000-\u001f\u007f]{1,128}$/;

function splitList(text) {
  return String(text ?? '').split(/[\n,]/).map((s) => s.trim()).filter(Boolean);
}

// "Name: value" lines into {Name: value}; {error} naming the bad line.
export function parseHeaders(text) {
  const out = {};
  for (const raw of String(text ?? '').split('\n')) {
    const line = raw.trim();
    if (!line) continue;
    const colon = line.indexOf(':');
    const name = colon > 0 ? line.slice(0, colon).trim() : '';
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) return { error: { key: 'settings.err.header', vars: { line } } };
    out[name] = line.slice(colon + 1).trim();
  }
  return { headers: out };
}

// The form's values ({key: string | boolean}) as a channel body, or {error:
// {key, vars}} for what the page can tell before the server does. `stored`:
// the channel's view when editing one of the same type (its write-only
// fields may stay empty), else null.
export function channelBody(type, name, values, stored = null) {
  if (!TYPES.includes(type)) return { error: { key: 'settings.err.type' } };
  if (!NAME_RE.test(String(name ?? ''))) return { error: { key: 'settings.err.name' } };
  const body = { name, type };
  for (const f of fieldsFor(type)) {
    const v = values[f.prop];
    const text = typeof v === 'string' ? v.trim() : v;
    if (f.kind === 'bool') {
      if (v === false) body[f.prop] = false; // true is the default: left out
      continue;
    }
    if (text === '' || text == null) {
      const kept = stored && isWriteOnly(f) && storedHas(stored, f.prop);
      if (f.required && !kept) return { error: { key: 'settings.err.required', vars: { field: f.prop } } };
      continue;
    }
    if (f.kind === 'list') {
      body[f.prop] = splitList(text);
    } else if (f.kind === 'headers') {
      const parsed = parseHeaders(text);
      if (parsed.error) return parsed;
      body[f.prop] = parsed.headers;
    } else if (f.kind === 'number') {
      const n = Number(text);
      if (!Number.isFinite(n) || n < 0 || (f.integer && !Number.isInteger(n))) {
        return { error: { key: 'settings.err.number', vars: { field: f.prop } } };
      }
      body[f.prop] = n;
    } else {
      body[f.prop] = text;
    }
  }
  return { body };
}

// Whether the stored channel's view says the write-only `key` is set.
export function storedHas(view, key) {
  if (!view) return false;
  if (key === 'url') return typeof view.url === 'string' && view.url !== '';
  if (key === 'headers') return Array.isArray(view.header_names) && view.header_names.length > 0;
  return view[`${key}_set`] === true;
}

// The form's starting values for a stored channel's view (write-only
// fields empty: their placeholders say they are set), or a new channel's.
export function formValues(view) {
  const values = {};
  for (const f of FIELDS) {
    const v = view?.[f.prop];
    if (f.kind === 'bool') values[f.prop] = v !== false;
    else if (isWriteOnly(f) || v == null) values[f.prop] = '';
    else if (Array.isArray(v)) values[f.prop] = v.join(', ');
    else values[f.prop] = String(v);
  }
  return values;
}

// Where a channel sends: its URL (cut to scheme and host by the server),
// its mail server, or its numbers.
export function targetOf(c) {
  if (c.type === 'email') return [c.smtp, ...(Array.isArray(c.to) ? [c.to.join(', ')] : [])].filter(Boolean).join(' → ');
  return typeof c.url === 'string' ? c.url : '';
}

// Whether a channel's type keeps a secret of its own, and whether it is set
// (null: the type has none; its URL is its secret).
export function secretState(c) {
  if (c.type === 'feishu' || c.type === 'dingtalk') return c.secret_set === true;
  if (c.type === 'email') return c.password_set === true;
  return null;
}

// The delivery state of each channel from /api/v1/notifications' data:
// {tone, key, lastError, lastErrorAt, lastDeliveredAt}.
export function deliveryState(name, notifications) {
  const list = Array.isArray(notifications?.channels) ? notifications.channels : [];
  const ch = list.find((x) => x && x.name === name);
  if (!ch) return { tone: 'grey', key: 'settings.state.none' };
  const base = { lastError: typeof ch.last_error === 'string' ? ch.last_error : '',
    lastErrorAt: ch.last_error_at ?? null, lastDeliveredAt: ch.last_delivered_at ?? null };
  if (ch.failing) return { ...base, tone: 'red', key: 'settings.state.failing' };
  if (ch.last_delivered_at) return { ...base, tone: 'green', key: 'settings.state.ok' };
  return { ...base, tone: 'grey', key: 'settings.state.none' };
}

// The list's rows: the view's channels (in config.json's order) with their
// delivery state and whether a route names them.
export function channelRows(view, notifications) {
  const routes = Array.isArray(view?.routes) ? view.routes : [];
  return (Array.isArray(view?.channels) ? view.channels : []).filter((c) => c && typeof c.name === 'string').map((c) => ({
    name: c.name,
    type: String(c.type ?? ''),
    target: targetOf(c),
    secret: secretState(c),
    routed: routes.some((r) => Array.isArray(r?.channels) && r.channels.includes(c.name)),
    state: deliveryState(c.name, notifications),
    view: c,
  }));
}

// A route as text: "severity=critical → ding, slack" (every alert: "*"),
// its recipients after its channels.
export function routeText(r) {
  const match = Object.entries(r?.match ?? {}).map(([k, v]) => `${k}=${v}`).join(', ') || '*';
  const to = [...(Array.isArray(r?.channels) ? r.channels : []), ...(Array.isArray(r?.recipients) ? r.recipients : [])];
  return `${match} → ${to.join(', ')}`;
}

// ---------------------------------------------------------------------------
// Recipients (GET/PUT/DELETE /api/v1/notify/recipients[/<name>]) and routes
// (GET/PUT /api/v1/notify/routes): config.json's objects as they are (they
// hold no secret), edited by a form, sent whole.

export const RECIPIENT_KINDS = ['person', 'team'];
// The recipient list's columns (settings.rcol.<name>).
export const RECIPIENT_COLUMNS = ['name', 'kind', 'who', 'channels', 'language', 'quiet', 'actions'];
// Labels a route usually matches on (the key field suggests them; any
// alert label works).
export const MATCH_KEYS = ['severity', 'alertname', 'node', 'job', 'gpu', 'modelName'];
const CLOCK_RE = /^([01]\d|2[0-3]):[0-5]\d$/;

const list = (v) => (Array.isArray(v) ? v.filter((x) => typeof x === 'string') : []);

// The recipients of a view, well-formed ones only.
export function recipientsOf(view) {
  return (Array.isArray(view?.recipients) ? view.recipients : []).filter((r) => r && typeof r.name === 'string');
}

// The list's rows: who a person is (their Unix users, their team) or a team
// (its lead), their channels, language and quiet hours, and whether a route
// names them.
export function recipientRows(recipients, routes) {
  return recipients.map((r) => {
    const team = r.kind === 'team';
    const q = r.quiet_hours;
    return {
      name: r.name,
      kind: team ? 'team' : 'person',
      users: list(r.users).join(', '),
      team: team ? '' : String(r.team ?? ''),
      lead: team ? String(r.lead ?? '') : '',
      channels: list(r.channels).join(', '),
      language: r.language === 'en' || r.language === 'zh' ? r.language : '',
      quiet: q && typeof q === 'object' && q.start && q.end
        ? `${q.start}–${q.end}${q.timezone ? ` ${q.timezone}` : ''}` : '',
      routed: (Array.isArray(routes) ? routes : []).some((x) => list(x?.recipients).includes(r.name)),
      view: r,
    };
  });
}

// The form's starting values for a stored recipient (null: a new one).
export function recipientForm(r) {
  const q = r?.quiet_hours ?? {};
  return {
    name: r?.name ?? '',
    kind: r?.kind === 'team' ? 'team' : 'person',
    users: list(r?.users).join(', '),
    team: r?.kind === 'team' ? '' : String(r?.team ?? ''),
    lead: r?.kind === 'team' ? String(r?.lead ?? '') : '',
    channels: list(r?.channels),
    language: r?.language === 'en' || r?.language === 'zh' ? r.language : '',
    quietStart: String(q.start ?? ''),
    quietEnd: String(q.end ?? ''),
    quietZone: String(q.timezone ?? ''),
  };
}

// The form's values as a recipient body ({body}) or {error: {key, vars}};
// empty fields are left out, so config.json holds only what was set. The
// server's parser checks the rest (teams, leads, channels exist).
export function recipientBody(v) {
  const name = String(v.name ?? '').trim();
  if (!NAME_RE.test(name)) return { error: { key: 'settings.err.name' } };
  const body = { name };
  if (v.kind === 'team') {
    body.kind = 'team';
    if (v.lead) body.lead = v.lead;
  } else {
    const users = splitList(v.users);
    if (users.length) body.users = users;
    if (v.team) body.team = v.team;
  }
  body.channels = list(v.channels);
  if (v.language) body.language = v.language;
  const start = String(v.quietStart ?? '').trim(), end = String(v.quietEnd ?? '').trim();
  const zone = String(v.quietZone ?? '').trim();
  if (start || end || zone) {
    if (!CLOCK_RE.test(start) || !CLOCK_RE.test(end)) return { error: { key: 'settings.err.quiet' } };
    body.quiet_hours = { start, end, ...(zone ? { timezone: zone } : {}) };
  }
  return { body };
}

// A route's form values: its match as [label, value] rows, its channels and
// recipients (null: a new route, matching critical alerts).
export function routeForm(r) {
  const match = Object.entries(r?.match ?? {}).map(([k, val]) => [k, String(val)]);
  return { match: r ? match : [['severity', 'critical']], channels: list(r?.channels), recipients: list(r?.recipients) };
}

// The form's values as a route ({route}) or {error}: each row needs a label
// and a value, a label once; a route sends somewhere.
export function routeBody(v) {
  const match = {};
  for (const [rawKey, rawValue] of v.match ?? []) {
    const key = String(rawKey ?? '').trim(), value = String(rawValue ?? '').trim();
    if (!key && !value) continue;
    if (!key || !value) return { error: { key: 'settings.err.matchRow' } };
    if (key in match) return { error: { key: 'settings.err.matchTwice', vars: { label: key } } };
    match[key] = value;
  }
  const channels = list(v.channels), recipients = list(v.recipients);
  if (!channels.length && !recipients.length) return { error: { key: 'settings.err.routeTo' } };
  const route = { match };
  if (channels.length) route.channels = channels;
  if (recipients.length) route.recipients = recipients;
  return { route };
}

// `routes` with route `i` moved by `delta` (-1: up, 1: down); the same list
// when it cannot move.
export function moveRoute(routes, i, delta) {
  const j = i + delta;
  if (i < 0 || i >= routes.length || j < 0 || j >= routes.length) return routes;
  const out = routes.slice();
  [out[i], out[j]] = [out[j], out[i]];
  return out;
}

// `routes` with route `i` replaced by `route` (i < 0 or past the end: added
// at the end), or removed when `route` is null.
export function withRoute(routes, i, route) {
  const out = routes.slice();
  if (route === null) out.splice(i, 1);
  else if (i >= 0 && i < out.length) out[i] = route;
  else out.push(route);
  return out;
}

// #settings&tab=notifications (the link notification emails carry).
export function parseSettingsHash(hash) {
  const params = new URLSearchParams(String(hash ?? '').replace(/^#settings&?/, ''));
  return { tab: params.get('tab') || 'notifications' };
}
