// Client for Vigil's HTTP API: /api/v1/status and the Prometheus-compatible
// /api/v1/query and /api/v1/query_range (same JSON shapes as Prometheus),
// and the requests that change something (sendJson: silences).

export class ApiError extends Error {
  constructor(message, status) {
    super(message);
    this.status = status;
  }
}

export async function getJson(path, params, signal) {
  const qs = params ? '?' + new URLSearchParams(params).toString() : '';
  let res;
  try {
    res = await fetch(path + qs, { signal, headers: { Accept: 'application/json' }, cache: 'no-store' });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(e.message || 'network error', 0);
  }
  let body = null;
  try { body = await res.json(); } catch { /* a non-JSON error page */ }
  if (!res.ok || (body && body.status === 'error')) {
    throw new ApiError((body && body.error) || `HTTP ${res.status}`, res.status);
  }
  return body;
}

// A request that changes something (POST, DELETE): the body as JSON, with
// Content-Type: application/json (the server takes nothing else there, so
// that a page on another origin cannot make a browser send it: see
// src/api/alert_routes.cc). Answers the JSON body; an ApiError with the
// server's own message (`error`) when it refuses.
export async function sendJson(method, path, body) {
  let res;
  try {
    res = await fetch(path, {
      method, cache: 'no-store', credentials: 'same-origin',
      headers: { Accept: 'application/json', 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    throw new ApiError(e.message || 'network error', 0);
  }
  let answer = null;
  try { answer = await res.json(); } catch { /* a non-JSON error page */ }
  if (!res.ok || (answer && answer.status === 'error')) {
    throw new ApiError((answer && typeof answer.error === 'string' && answer.error) || `HTTP ${res.status}`, res.status);
  }
  return answer;
}

// Steps that give a readable chart (~150-240 points) at every range, so a
// 7-day window costs about as much as a 5-minute one.
const STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600];
export function pickStep(rangeSec) {
  const want = rangeSec / 240;
  return STEPS.find((s) => s >= want) ?? 3600;
}

// The window for a range ending now, aligned to the step so consecutive
// refreshes evaluate the same timestamps and charts don't jitter.
export function windowFor(rangeSec, nowMs = Date.now()) {
  const step = pickStep(rangeSec);
  const end = Math.floor(nowMs / 1000 / step) * step;
  return { start: end - rangeSec, end, step };
}

export async function queryRange(query, win, signal) {
  const body = await getJson('/api/v1/query_range',
    { query, start: win.start, end: win.end, step: win.step }, signal);
  return body?.data?.result ?? [];
}

export async function queryInstant(query, signal) {
  const body = await getJson('/api/v1/query', { query }, signal);
  const data = body?.data;
  if (!data || data.resultType !== 'vector') return [];
  return data.result ?? [];
}

// The shared x axis of a window: start, start+step, ..., end.
export function timeAxis(win) {
  const xs = [];
  for (let t = win.start; t <= win.end; t += win.step) xs.push(t);
  return xs;
}

// One matrix series' values on the window's axis; missing steps are null so
// the chart shows a gap instead of a made-up line.
export function alignValues(series, win, xs) {
  const out = new Array(xs.length).fill(null);
  for (const [t, v] of series.values ?? []) {
    const i = Math.round((Number(t) - win.start) / win.step);
    const n = Number(v);
    if (i >= 0 && i < out.length && Number.isFinite(n)) out[i] = n;
  }
  return out;
}

// Element-wise sum of aligned arrays; null where all inputs are null.
export function sumAligned(arrays, len) {
  const out = new Array(len).fill(null);
  for (const a of arrays) {
    for (let i = 0; i < len; i++) {
      if (a[i] != null) out[i] = (out[i] ?? 0) + a[i];
    }
  }
  return out;
}

export function lastValue(arr) {
  for (let i = arr.length - 1; i >= 0; i--) if (arr[i] != null) return arr[i];
  return NaN;
}
