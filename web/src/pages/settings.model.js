// The Settings tab's data shaping (no DOM): the notification channels'
// form (which fields each type has, docs/notify.md), the body a form
// becomes for PUT /api/v1/notify/channels/<name> and POST
// /api/v1/notify/test, the list's rows from the channels' view
// (GET /api/v1/notify/channels: secrets left out) and the delivery log's
// per-channel state (GET /api/v1/notifications), and the tab's URL.
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

// A route as text: "severity=critical → ding, slack" (every alert: "*").
export function routeText(r) {
  const match = Object.entries(r?.match ?? {}).map(([k, v]) => `${k}=${v}`).join(', ') || '*';
  return `${match} → ${(r?.channels ?? []).join(', ')}`;
}

// #settings&tab=notifications (the link notification emails carry).
export function parseSettingsHash(hash) {
  const params = new URLSearchParams(String(hash ?? '').replace(/^#settings&?/, ''));
  return { tab: params.get('tab') || 'notifications' };
}
