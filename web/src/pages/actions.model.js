// The Actions tab's data shaping (no DOM): /api/v1/actions' entries and
// configured actions normalised, the entry a link names (#actions&id=N),
// each state as a badge, the countdown to a scheduled run (on the server's
// clock), whether an entry can still be cancelled, and a command as a
// person reads it. actions.js renders it.

export const STATES = ['scheduled', 'running', 'cancelled', 'ran', 'failed', 'dry_run', 'missed'];

const STATE_TONES = {
  scheduled: 'amber', running: 'blue', cancelled: 'grey', ran: 'green', failed: 'red', dry_run: 'blue', missed: 'grey',
};

const str = (v) => (typeof v === 'string' ? v : '');
const ms = (v) => (Number.isFinite(v) && v > 0 ? v : 0);
const strings = (v) => (Array.isArray(v) ? v.filter((s) => typeof s === 'string') : []);
const labelsOf = (v) => {
  const out = {};
  if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) if (typeof x === 'string') out[k] = x;
  return out;
};

// The answer's entries, newest first as sent: {id, action, on, state,
// dryRun, command, rule, labels, owner, createdMs, runAtMs, startedMs,
// finishedMs, cancelledBy, exitCode (null when none), output,
// outputTruncated, error}; entries without a positive integer id dropped.
export function entriesFrom(answer) {
  const list = answer?.data?.actions;
  if (!Array.isArray(list)) return [];
  return list.filter((e) => e && Number.isInteger(e.id) && e.id > 0).map((e) => ({
    id: e.id,
    action: str(e.action),
    on: str(e.on),
    state: str(e.state),
    dryRun: e.dry_run === true,
    command: strings(e.command),
    rule: str(e.alert?.rule),
    labels: labelsOf(e.alert?.labels),
    owner: str(e.alert?.owner),
    createdMs: ms(e.created_ms),
    runAtMs: ms(e.run_at_ms),
    startedMs: ms(e.started_ms),
    finishedMs: ms(e.finished_ms),
    cancelledBy: str(e.cancelled_by),
    exitCode: Number.isInteger(e.exit_code) ? e.exit_code : null,
    output: str(e.output),
    outputTruncated: e.output_truncated === true,
    error: str(e.error),
  }));
}

// The configured actions: [{name, on, dryRun, idleForMs, confirmWindowMs, command}].
export function configuredFrom(answer) {
  const list = answer?.data?.configured;
  if (!Array.isArray(list)) return [];
  return list.filter((a) => a && typeof a.name === 'string' && a.name).map((a) => ({
    name: a.name,
    on: str(a.on),
    dryRun: a.dry_run !== false,
    idleForMs: ms(a.idle_for_ms),
    confirmWindowMs: Number.isFinite(a.confirm_window_ms) ? a.confirm_window_ms : 0,
    command: strings(a.command),
  }));
}

// How far the server's clock is ahead of this browser's (ms), so countdowns
// end when the server runs the action.
export function clockOffset(answer, localNowMs) {
  const now = answer?.data?.now_ms;
  return Number.isFinite(now) ? now - localNowMs : 0;
}

// The id a link names (#actions&id=12), 0 for none.
export function highlightId(hash) {
  const m = /[#&]id=(\d+)(?:&|$)/.exec(String(hash ?? ''));
  const id = m ? Number(m[1]) : 0;
  return Number.isSafeInteger(id) ? id : 0;
}

export function actionsHash(id) {
  return id > 0 ? `#actions&id=${id}` : '#actions';
}

// The badge of a state: {tone, key}; unknown states grey, as written.
export function stateBadge(state) {
  return STATES.includes(state) ? { tone: STATE_TONES[state], key: `actions.state.${state}` } : { tone: 'grey', key: null, text: String(state ?? '') };
}

export function canCancel(entry) {
  return entry?.state === 'scheduled';
}

// Time left until a scheduled entry runs, as "1h 02m 05s", "4m 09s", "12s";
// "0s" once due. Null for an entry that is not waiting.
export function countdown(entry, serverNowMs) {
  if (entry?.state !== 'scheduled' || !entry.runAtMs) return null;
  const left = Math.max(0, Math.ceil((entry.runAtMs - serverNowMs) / 1000));
  const h = Math.floor(left / 3600), m = Math.floor((left % 3600) / 60), s = left % 60;
  const two = (n) => String(n).padStart(2, '0');
  if (h) return `${h}h ${two(m)}m ${two(s)}s`;
  if (m) return `${m}m ${two(s)}s`;
  return `${s}s`;
}

// A command as a shell would need it typed: words with spaces or quotes
// single-quoted. For reading only: Vigil runs the list without a shell.
export function commandText(argv) {
  return strings(argv).map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replaceAll("'", "'\\''")}'`)).join(' ');
}

// Where the entry's alert was: "job train-a · node gpu-07 · run 42-1".
export function whereText(entry) {
  return ['job', 'node', 'run'].filter((k) => entry?.labels?.[k]).map((k) => `${k} ${entry.labels[k]}`).join(' · ');
}

// The name a cancellation is signed with: trimmed, at most 128 characters.
export function signature(name) {
  return String(name ?? '').trim().slice(0, 128);
}
