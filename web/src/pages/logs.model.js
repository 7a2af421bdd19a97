// The log explorer's model (no DOM, tested in node): LogQL built from the
// filter controls, highlight splitting, histogram shaping, paging cursors and
// the explorer's URL state. docs/log-api.md describes the query language.
// The Jobs tab links here with logsHash() and quotes its PromQL with quote().

export const LEVELS = ['unknown', 'trace', 'debug', 'info', 'warn', 'error', 'fatal'];
export const FLAGS = ['truncated', 'partial', 'converted'];
export const PAGE = 500; // lines per page ("load older" asks for the next one)

// A LogQL double-quoted string (Go escapes): quotes, backslashes and control
// characters escaped, everything else verbatim (the server reads UTF-8).
export function quote(s) {
  let out = '"';
  for (const ch of String(s)) {
    const c = ch.codePointAt(0);
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (c < 0x20 || c === 0x7f) out += '\\u' + c.toString(16).padStart(4, '0');
    else out += ch;
  }
  return out + '"';
}

// Regex metacharacters of RE2, escaped so a value matches literally.
export function reEscape(s) {
  return String(s).replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');
}

// The label filters, in selector order: a job run's id (`run`) comes from
// the Jobs tab's link, so one run of a sweep shows alone.
export const LABEL_FILTERS = ['node', 'job', 'run', 'container'];

// filters: {node, job, run, container: strings ('' = any), levels: [] (none =
// any), search: string, regex: bool}. The stream selector narrows by label
// (the store skips whole blocks with it); the search is a line filter.
export function buildQuery(f) {
  const m = [];
  for (const k of LABEL_FILTERS) {
    if (f[k]) m.push(`${k}=${quote(f[k])}`);
  }
  const levels = LEVELS.filter((l) => (f.levels ?? []).includes(l));
  if (levels.length === 1) m.push(`level=${quote(levels[0])}`);
  else if (levels.length > 1 && levels.length < LEVELS.length) m.push(`level=~${quote(levels.join('|'))}`);
  let q = `{${m.join(', ')}}`;
  if (f.search) q += ` ${f.regex ? '|~' : '|='} ${quote(f.search)}`;
  return q;
}

// ---------------------------------------------------------------------------
// Highlights

// RE2 patterns that JavaScript's backtracking engine could take exponential
// time on (a quantified group holding a quantifier, like (a+)+): the server
// matched them in linear time, but the page skips highlighting them rather
// than risk freezing the tab.
function risky(src) {
  return /\([^()]*[+*}][^()]*\)\s*[+*{]/.test(src) || /\\[1-9]/.test(src);
}

// A matcher for highlights, or null when the search can't be highlighted.
// Keyword: case-sensitive substring, as |= is. Regex: RE2 syntax read as a
// JavaScript RegExp; a leading (?i) (RE2's flag syntax) becomes the i flag.
export function makeMatcher(search, regex) {
  if (!search) return null;
  if (!regex) return { kind: 'text', needle: String(search) };
  let src = String(search), flags = 'g';
  const m = /^\(\?([imsU]+)\)/.exec(src);
  if (m) {
    src = src.slice(m[0].length);
    if (m[1].includes('i')) flags += 'i';
    if (m[1].includes('s')) flags += 's';
    if (m[1].includes('m')) flags += 'm';
  }
  if (risky(src)) return null;
  for (const f of [flags + 'u', flags]) {
    try { return { kind: 're', re: new RegExp(src, f) }; } catch { /* try without u */ }
  }
  return null;
}

const MAX_MARKS = 200; // per line: a pathological match count stays cheap
const MAX_SCAN = 65536; // characters of a line searched for highlights

// Splits text into [{text, hit}] segments, hit = a match to highlight. The
// segments concatenate back to the text exactly.
export function splitHighlights(text, matcher) {
  text = String(text);
  if (!matcher || text === '') return [{ text, hit: false }];
  const ranges = [];
  const scan = text.length > MAX_SCAN ? text.slice(0, MAX_SCAN) : text;
  if (matcher.kind === 'text') {
    const n = matcher.needle;
    for (let i = scan.indexOf(n); i >= 0 && ranges.length < MAX_MARKS; i = scan.indexOf(n, i + n.length)) {
      ranges.push([i, i + n.length]);
    }
  } else {
    const re = matcher.re;
    re.lastIndex = 0;
    let m;
    while (ranges.length < MAX_MARKS && (m = re.exec(scan)) !== null) {
      if (m[0].length === 0) { re.lastIndex++; continue; } // empty matches mark nothing
      ranges.push([m.index, m.index + m[0].length]);
    }
  }
  if (ranges.length === 0) return [{ text, hit: false }];
  const out = [];
  let at = 0;
  for (const [a, b] of ranges) {
    if (a > at) out.push({ text: text.slice(at, a), hit: false });
    out.push({ text: text.slice(a, b), hit: true });
    at = b;
  }
  if (at < text.length) out.push({ text: text.slice(at), hit: false });
  return out;
}

// ---------------------------------------------------------------------------
// Histogram

const HIST_STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1200, 1800, 3600, 7200, 10800];

// 40-90 bars whatever the range: 5 s bars for 5 minutes, 2 h for 7 days.
export function histogramStep(rangeSec) {
  const want = rangeSec / 90;
  return HIST_STEPS.find((s) => s >= want) ?? 10800;
}

// The histogram endpoint's data as bars: [{t (s), counts: [per LEVELS],
// total}], in LEVELS order whatever order the server lists levels in, plus
// the largest bar and the total per level.
export function shapeHistogram(data) {
  const start = nsToSec(data?.start ?? '0');
  const step = nsToSec(data?.step ?? '0');
  const idx = LEVELS.map((l) => (data?.levels ?? []).indexOf(l));
  const totals = Object.fromEntries(LEVELS.map((l) => [l, 0]));
  let max = 0, all = 0;
  const bars = (data?.buckets ?? []).map((b, i) => {
    const counts = idx.map((j) => (j >= 0 && Number.isFinite(Number(b[j])) ? Number(b[j]) : 0));
    const total = counts.reduce((a, c) => a + c, 0);
    counts.forEach((c, k) => { totals[LEVELS[k]] += c; });
    max = Math.max(max, total);
    all += total;
    return { t: start + i * step, counts, total };
  });
  return { start, step, bars, max, totals, total: all };
}

// ---------------------------------------------------------------------------
// Times and paging

// "1796016118912000000" (ns since the epoch, a string: JSON numbers lose
// nanoseconds) to seconds and milliseconds.
export function nsToSec(ns) {
  const s = String(ns);
  if (!/^\d+$/.test(s)) return 0;
  return s.length > 9 ? Number(s.slice(0, -9)) + Number(s.slice(-9)) / 1e9 : Number(s) / 1e9;
}
export function nsToMs(ns) { return nsToSec(ns) * 1000; }

function bigNs(ns) { try { return BigInt(ns); } catch { return 0n; } }

// Orders entries as they are shown: by time, then store append order.
export function compareEntries(a, b) {
  const ta = bigNs(a.ts), tb = bigNs(b.ts);
  if (ta !== tb) return ta < tb ? -1 : 1;
  const sa = bigNs(a.seq), sb = bigNs(b.seq);
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

// The request for the page before the shown entries (sorted oldest first).
// Many lines can share one timestamp (a batch read at once), so the page ends
// just after the oldest timestamp and asks for as many more as are shown at
// it; the caller drops what it already has (by seq).
export function olderPage(shown, page = PAGE) {
  if (shown.length === 0) return null;
  const oldest = shown[0].ts;
  let atOldest = 0;
  while (atOldest < shown.length && shown[atOldest].ts === oldest) atOldest++;
  return { end: (bigNs(oldest) + 1n).toString(), limit: Math.min(5000, page + atOldest), strictEnd: oldest };
}

// ---------------------------------------------------------------------------
// URL state: #logs&range=1h&job=train&level=warn,error&q=loss&re=1

export function parseLogsHash(hash) {
  const p = new URLSearchParams(String(hash).replace(/^#/, ''));
  const levels = (p.get('level') ?? '').split(',').filter((l) => LEVELS.includes(l));
  return {
    node: p.get('node') ?? '', job: p.get('job') ?? '', run: p.get('run') ?? '',
    container: p.get('container') ?? '',
    levels, search: p.get('q') ?? '', regex: p.get('re') === '1',
  };
}

export function logsHash(range, f) {
  const p = new URLSearchParams();
  p.set('range', range);
  for (const k of LABEL_FILTERS) if (f[k]) p.set(k, f[k]);
  if (f.levels?.length) p.set('level', f.levels.join(','));
  if (f.search) p.set('q', f.search);
  if (f.regex) p.set('re', '1');
  return `#logs&${p.toString()}`;
}
