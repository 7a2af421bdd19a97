// The Jobs tab's model, without the DOM (tested in node): job states and
// their badges, durations, the time axis of a job's charts and how often they
// refresh, sorting, the URL (#jobs&range=15m&id=<job id>), the Logs tab's
// link for a job, the PromQL of its charts and the series built from the
// answers (its GPUs only when known), its other training series, its events
// and the node's events.

import * as api from '../api.js';
import * as fmt from '../format.js';
import { logsHash, quote } from './logs.model.js';

const MIN_SPAN_S = 60; // a job that just started still gets a readable axis

// `unknown`: a remote node's job, running when its agent last reported.
export const STATES = ['running', 'stalled', 'completed', 'crashed', 'killed', 'exited', 'unknown'];
const TONES = { running: 'green', stalled: 'amber', crashed: 'red', killed: 'grey', completed: 'blue', exited: 'grey', unknown: 'grey' };

// A state's badge: its colour and its i18n key. Unknown states are grey and
// shown as the server wrote them.
export function stateBadge(state) {
  const known = STATES.includes(state);
  return { tone: known ? TONES[state] : 'grey', key: known ? `jobstate.${state}` : null, text: String(state ?? '') };
}

export function isActive(job) { return job?.state === 'running' || job?.state === 'stalled'; }

// A number from the server's JSON: NaN for null, absent or ''.
export const num = (v) => (v == null || v === '' ? NaN : Number(v));

// When the job's charts end: its end, or now while it runs; a job that is
// over but has no end time ends when it was last seen.
export function jobEndMs(job, nowMs) {
  const end = num(job.end_time_ms);
  if (Number.isFinite(end)) return end;
  if (isActive(job)) return nowMs;
  const seen = num(job.last_seen_ms);
  return Number.isFinite(seen) ? seen : nowMs;
}

export function jobDurationSec(job, nowMs) {
  const start = num(job.start_time_ms);
  if (!Number.isFinite(start)) return NaN;
  return Math.max(0, (jobEndMs(job, nowMs) - start) / 1000);
}

// The shared time axis of a job's charts: from its start to its end (or now),
// at a step giving about 150-300 points, start and end on the step. A running
// job's window ends at the last whole step (a later one would repeat the last
// sample into the future); a finished job's includes its end.
export function jobWindow(job, nowMs) {
  const live = isActive(job) && !Number.isFinite(num(job.end_time_ms));
  let startS = num(job.start_time_ms) / 1000;
  if (!Number.isFinite(startS)) startS = jobEndMs(job, nowMs) / 1000 - 3600; // no start time: its last hour
  const endS = Math.max(jobEndMs(job, nowMs) / 1000, startS + MIN_SPAN_S);
  const span = endS - startS;
  let step = api.pickStep(span);
  if (span / step > 300) step = Math.ceil(span / 240 / 3600) * 3600; // jobs longer than 10 days
  const start = Math.floor(startS / step) * step;
  let end = live ? Math.floor(endS / step) * step : Math.ceil(endS / step) * step;
  if (end <= start) end = start + step;
  return { start, end, step, live };
}

// How often a job's charts refresh: as the overview at the same step (2-30 s);
// a finished job's charts don't change.
export function chartRefreshMs(win) {
  return win.live ? Math.min(30000, Math.max(2000, win.step * 1000)) : null;
}

export const THROUGHPUT = ['tokens', 'samples', 'iterations'];

// Which throughput series to chart: those with at least one value, in the
// order tokens, samples, iterations. series: {tokens: [..], ...}.
export function throughputToShow(series) {
  return THROUGHPUT.filter((k) => (series?.[k] ?? []).some((v) => v != null && Number.isFinite(v)));
}

// Active jobs first, then the newest.
export function sortJobs(jobs) {
  return [...jobs].sort((a, b) => (isActive(b) - isActive(a)) || (num(b.start_time_ms) || 0) - (num(a.start_time_ms) || 0));
}

// A LogQL stream selector of equality matchers ({job="a", node="b"}) as
// {label: value}; null for anything else (regex matchers, line filters).
export function parseSelector(q) {
  const s = String(q ?? '').trim();
  if (!s.startsWith('{') || !s.endsWith('}')) return null;
  const out = {};
  const re = /\s*([A-Za-z_]\w*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(,|$)/y;
  const body = s.slice(1, -1);
  re.lastIndex = 0;
  while (re.lastIndex < body.length) {
    const m = re.exec(body);
    if (!m) return null;
    let v;
    try { v = JSON.parse(`"${m[2]}"`); } catch { return null; }
    out[m[1]] = v;
    if (m[3] === '') break;
  }
  return out;
}

// The Logs tab's URL for a job: its node, job and container filters (from
// its log_query, or its name and node), and the shortest range of the
// picker that reaches back to its start. ranges: [[key, seconds], ...].
export function logsLinkFor(job, nowMs, ranges) {
  const sel = parseSelector(job.log_query);
  const f = { node: '', job: '', run: '', container: '', levels: [], search: '', regex: false };
  if (sel && Object.keys(sel).every((k) => ['node', 'job', 'run', 'container'].includes(k)) && Object.keys(sel).length) {
    Object.assign(f, sel);
  } else {
    f.job = job.name ?? '';
    f.node = job.node ?? '';
  }
  const back = (nowMs - (num(job.start_time_ms) || nowMs)) / 1000;
  const range = ranges.find(([, s]) => s >= back) ?? ranges[ranges.length - 1];
  return logsHash(range[0], f);
}

export function jobsHash(range, id) {
  const p = new URLSearchParams();
  p.set('range', range);
  if (id) p.set('id', id);
  return `#jobs&${p.toString()}`;
}

export function jobIdFromHash(hash) {
  return new URLSearchParams(String(hash).replace(/^#/, '')).get('id') ?? '';
}

// A PromQL selector for a job's training series: the server's
// series_selector (its run and node, so two runs of one script stay apart),
// else its name and node.
const SELECTOR = /^\{[a-z_]+="(?:[^"\\]|\\.)*"(?:, [a-z_]+="(?:[^"\\]|\\.)*")*\}$/;
export function trainingSelector(job) {
  if (typeof job.series_selector === 'string' && SELECTOR.test(job.series_selector)) return job.series_selector;
  const m = [`job=${quote(job.name ?? '')}`];
  if (job.node) m.push(`node=${quote(job.node)}`);
  return `{${m.join(', ')}}`;
}

// The GPUs the job's processes were seen on (NVML's process list): their
// indexes as strings (the `gpu` label of DCGM_FI_DEV_* series), in numeric
// order, and the newest total of its memory on them in bytes (null when no
// GPU says). gpus: [] when not known (no NVML, or never seen).
export function jobGpus(job) {
  const list = Array.isArray(job?.gpus) ? job.gpus : [];
  const seen = new Set();
  let mem = null;
  for (const g of list) {
    const id = g?.gpu;
    if (id == null || id === '' || typeof id === 'object') continue;
    const key = String(id);
    if (seen.has(key)) continue;
    seen.add(key);
    const b = num(g.memory_bytes);
    if (Number.isFinite(b) && b >= 0) mem = (mem ?? 0) + b;
  }
  const gpus = [...seen].sort((a, b) => Number(a) - Number(b) || a.localeCompare(b));
  return { gpus, memoryBytes: mem };
}

// "0, 1 (12.3 GiB)"; '' when the GPUs are not known.
export function gpuSummary(job) {
  const { gpus, memoryBytes } = jobGpus(job);
  if (!gpus.length) return '';
  return gpus.join(', ') + (memoryBytes != null ? ` (${fmt.bytes(memoryBytes)})` : '');
}

// The series of a per-GPU metric to chart: only the job's GPUs when they
// are known, else every GPU of the node.
export function gpuFilter(series, gpus) {
  if (!gpus?.length) return series;
  const want = new Set(gpus.map(String));
  return series.filter((s) => s?.metric?.gpu != null && want.has(String(s.metric.gpu)));
}

// The training series the job's charts show by name, and those never charted.
export const CANONICAL_TRAINING = ['training_loss', 'training_learning_rate', 'training_grad_norm',
  ...THROUGHPUT.map((k) => `training_${k}_per_second`)];
const NOT_CHARTED = ['training_step', 'training_epoch'];
export const MAX_EXTRA = 12;
const METRIC_NAME = /^[A-Za-z_:][A-Za-z0-9_:]*$/;

// A selector for every training series of a job (/api/v1/series match[]).
export function trainingSeriesSelector(job) {
  return `{__name__=~"training_.+", ${trainingSelector(job).slice(1)}`;
}

// The job's other training series (TensorBoard tags, MLflow keys, ...) from
// /api/v1/series' answer (label sets): their names, sorted, at most `max`,
// and how many more there are. Names are the server's (untrusted): only
// valid metric names starting with training_ are kept, so they can go into
// a query.
export function extraTrainingNames(labelSets, max = MAX_EXTRA) {
  const names = new Set();
  for (const ls of Array.isArray(labelSets) ? labelSets : []) {
    const n = ls?.__name__;
    if (typeof n !== 'string' || !n.startsWith('training_') || n === 'training_' || !METRIC_NAME.test(n)) continue;
    if (CANONICAL_TRAINING.includes(n) || NOT_CHARTED.includes(n)) continue;
    names.add(n);
  }
  const all = [...names].sort();
  return { names: all.slice(0, max), more: Math.max(0, all.length - max) };
}

// An extra chart's title: the series' name without training_.
export function extraTitle(name) {
  return String(name).replace(/^training_/, '');
}

// A node event's meaning and suggested action in the page's language
// (details.meaning_zh / action_zh in Chinese when present, else English).
export function nodeEventTexts(ev, language) {
  const d = ev?.details && typeof ev.details === 'object' ? ev.details : {};
  const pick = (k) => {
    const zh = d[`${k}_zh`];
    if (language === 'zh' && zh != null && zh !== '') return String(zh);
    const en = d[k];
    if (en != null && en !== '') return String(en);
    return zh != null && zh !== '' ? String(zh) : '';
  };
  return { meaning: pick('meaning'), action: pick('action') };
}

// The node events' window for the page's range: the last `seconds` to now, in ms.
export function eventsWindow(seconds, nowMs) {
  const end = Math.round(nowMs);
  return { start_ms: end - Math.round(seconds * 1000), end_ms: end };
}

// The event's one-line text: its message, else its exception, else its
// details as key=value.
export function eventText(ev) {
  const d = ev?.details ?? {};
  if (d.message != null && d.message !== '') return String(d.message);
  if (d.exception != null && d.exception !== '') return String(d.exception);
  return Object.entries(d).map(([k, v]) => `${k}=${v}`).join(' ');
}

// How alarming an event is: the colour of its marker.
export function eventTone(kind) {
  if (kind === 'completed') return 'blue';
  if (kind === 'loss_overflow' || kind === 'nan_loss') return 'amber';
  return 'red';
}

// Numbers of any magnitude in 4 significant digits: 2.345, 0.0003, 5.2e-7.
export function sig(v) {
  if (!Number.isFinite(v)) return '–';
  const a = Math.abs(v);
  if (a !== 0 && (a < 1e-3 || a >= 1e6)) return v.toExponential(2).replace('e+', 'e');
  return String(Number(v.toPrecision(4)));
}

// Axis labels of the training charts.
export function axisSig(v) {
  if (!Number.isFinite(v)) return '';
  const a = Math.abs(v);
  if (a !== 0 && a < 1e-2) return v.toExponential(0); // 34 px of axis: "3e-4"
  return fmt.compact(v);
}


// ---------------------------------------------------------------------------
// What the list and a job's header show

// "pytorch · deepspeed", or '–'.
export function frameworkText(job) {
  return [job.framework, job.launcher].filter(Boolean).join(' · ') || '–';
}

export function ranksText(job) {
  return Number.isFinite(num(job.world_size)) ? String(job.world_size) : '–';
}

// Whether the jobs come from several nodes (a server agents report to):
// then each row says whose it is.
export function severalNodes(jobs) {
  return new Set(jobs.map((j) => String(j.node ?? ''))).size > 1;
}

// Why a job ended, as parts to join with ': ': the kind of event that ended
// it (translated by the caller) and the server's text, once when the text
// starts with the kind ("CUDA out of memory: CUDA out of memory. Tried ...").
export function endReason(kindText, reasonText) {
  const why = [kindText, reasonText].filter(Boolean).map(String);
  if (why.length === 2 && why[1].toLowerCase().startsWith(why[0].toLowerCase())) why.shift();
  return why;
}

// A job's events with a time, oldest first.
export function jobEvents(job) {
  return (Array.isArray(job?.events) ? job.events : [])
    .filter((e) => Number.isFinite(num(e?.time_ms)))
    .sort((a, b) => num(a.time_ms) - num(b.time_ms));
}

// The node's events from GET /api/v1/events' data, oldest first.
export function nodeEventsFrom(data) {
  const evs = data?.events;
  return (Array.isArray(evs) ? evs : []).filter((e) => e && Number.isFinite(num(e.time_ms)))
    .sort((a, b) => num(a.time_ms) - num(b.time_ms));
}

// Where an event's marker sits on the strip under the charts: 0 (the
// window's start) to 1 (its end), clamped.
export function eventPosition(ev, win) {
  const span = win.end - win.start;
  return Math.max(0, Math.min(1, (num(ev.time_ms) / 1000 - win.start) / span));
}

// ---------------------------------------------------------------------------
// A job's charts: their queries, when to fetch them again, their series

export const TRAINING_CHARTS = ['loss', 'lr', 'grad', ...THROUGHPUT];

// The range queries of a job's charts: its training series (averaged over
// its streams: stdout and stderr, one log per rank) and its node's GPUs.
export function chartQueries(job) {
  const sel = trainingSelector(job);
  const node = job.node ? `{node=${quote(job.node)}}` : '';
  return {
    loss: `avg(training_loss${sel})`,
    lr: `avg(training_learning_rate${sel})`,
    grad: `avg(training_grad_norm${sel})`,
    tokens: `avg(training_tokens_per_second${sel})`,
    samples: `avg(training_samples_per_second${sel})`,
    iterations: `avg(training_iterations_per_second${sel})`,
    util: `DCGM_FI_DEV_GPU_UTIL${node}`,
    used: `DCGM_FI_DEV_FB_USED${node}`,
    free: `DCGM_FI_DEV_FB_FREE${node}`,
  };
}

// The query of one of the job's other training series (a valid metric name).
export function extraQuery(job, name) {
  return `avg(${name}${trainingSelector(job)})`;
}

// What decides a fetch of the charts: another job, a longer step, the job's
// end. A running job's charts otherwise follow their own timer.
export function chartWindowKey(job, win) {
  return `${job.id}|${win.start}|${win.step}|${win.live ? 'live' : win.end}`;
}

export function hasValues(a) { return (a ?? []).some((x) => x != null); }

// The training charts that show: those with values (loss, lr, grad norm,
// then the throughputs that have values).
export function trainingChartsToShow(training) {
  const shown = new Set(['loss', 'lr', 'grad'].filter((k) => hasValues(training[k])));
  for (const k of throughputToShow(training)) shown.add(k);
  return shown;
}

// The series of a job's charts on the window's axis. res: the answers of
// chartQueries() by key, plus res.extra (one answer per extra.names);
// extra: extraTrainingNames()'s. The GPU charts hold the job's own GPUs when
// known, else every GPU of its node; memory in GiB, and the largest total
// seen (NaN when none).
export function buildJobView(job, win, res, extra = { names: [], more: 0 }) {
  const xs = api.timeAxis(win);
  const align = (s) => api.alignValues(s, win, xs);
  const empty = () => new Array(xs.length).fill(null);
  const first = (k) => (res[k]?.[0] ? align(res[k][0]) : empty());
  const training = {};
  for (const k of TRAINING_CHARTS) training[k] = first(k);
  const extras = extra.names.map((name, i) => ({ name, ys: res.extra?.[i]?.[0] ? align(res.extra[i][0]) : empty() }));
  const own = jobGpus(job).gpus;
  const byGpu = (k) => {
    const m = new Map();
    for (const s of gpuFilter(res[k] ?? [], own)) if (s.metric?.gpu != null) m.set(String(s.metric.gpu), align(s));
    return m;
  };
  const util = byGpu('util'), used = byGpu('used'), free = byGpu('free');
  const gpus = own.length ? own : [...new Set([...util.keys(), ...used.keys()])]
    .sort((a, b) => Number(a) - Number(b) || a.localeCompare(b));
  const gib = (v) => (v == null ? null : v / 1024); // MiB to GiB
  let totalGiB = NaN;
  const mem = gpus.map((g) => {
    const u = used.get(g) ?? empty(), f = free.get(g) ?? empty();
    u.forEach((v, i) => {
      if (v != null && f[i] != null) totalGiB = Math.max(Number.isFinite(totalGiB) ? totalGiB : 0, (v + f[i]) / 1024);
    });
    return u.map(gib);
  });
  return { win, xs, training, extras, more: extra.more, ownGpus: own.length > 0, gpus,
    util: gpus.map((g) => util.get(g) ?? empty()), mem, totalGiB };
}
