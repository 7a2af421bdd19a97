// A job's efficiency section, without the DOM (tested in node): the report
// of GET /api/v1/jobs/efficiency (docs/jobs.md "Efficiency") as the bar's
// segments (GPU busy, input-bound, communication, idle: shares of the job's
// GPU time) and the facts under it (GPU-hours, idle GPU-hours, cost, SM and
// tensor activity). What the server did not report stays '–', never 0.

// The classes in the bar's order, with their i18n key and colour.
export const EFF_CLASSES = [
  { field: 'gpu_busy', label: 'jobs.eff.busy', tone: 'green' },
  { field: 'input_bound', label: 'jobs.eff.input', tone: 'amber' },
  { field: 'communication', label: 'jobs.eff.communication', tone: 'blue' },
  { field: 'idle', label: 'jobs.eff.idle', tone: 'grey' },
];

const finite = (v) => typeof v === 'number' && Number.isFinite(v);

export function sharePct(v) {
  return finite(v) ? `${Math.round(Math.max(0, Math.min(1, v)) * 100)}%` : '–';
}

export function gpuHours(v) {
  return finite(v) ? v.toFixed(Math.abs(v) < 10 ? 2 : 1) : '–';
}

export function money(v, currency) {
  return finite(v) ? `${v.toFixed(2)} ${String(currency ?? '')}`.trim() : '–';
}

// The API's answer's report, or null when it is not one.
export function efficiencyOf(body) {
  const e = body?.data?.efficiency;
  return e && typeof e === 'object' ? e : null;
}

// {segments: [{field, label, tone, share, pct, hours}], facts: [[labelKey,
// text | {key, params}]], partial, measured} or null without shares (no GPU,
// no samples). Segments with no share are left out of the bar but kept in
// the legend (a reader checks "communication 0 %").
export function efficiencyView(e) {
  const shares = e?.shares;
  if (!shares || typeof shares !== 'object') return null;
  const total = finite(e.gpu_hours) ? e.gpu_hours : NaN;
  const segments = EFF_CLASSES.map((c) => {
    const share = finite(shares[c.field]) ? Math.max(0, Math.min(1, shares[c.field])) : 0;
    return { ...c, share, pct: sharePct(share), hours: gpuHours(share * total) };
  });
  const cost = e.cost && typeof e.cost === 'object' ? e.cost : null;
  const facts = [
    ['jobs.eff.gpuHours', gpuHours(total)],
    ['jobs.eff.idleHours', gpuHours(e.idle_gpu_hours)],
    ['jobs.eff.cost', cost
      ? { key: 'jobs.eff.costValue', params: { total: money(cost.total, cost.currency), idle: money(cost.idle, cost.currency) } }
      : { key: 'jobs.eff.notPriced', params: {} }],
    ['jobs.eff.sm', finite(e.sm_active) ? sharePct(e.sm_active) : { key: 'jobs.eff.notReported', params: {} }],
    ['jobs.eff.tensor', finite(e.tensor_active) ? sharePct(e.tensor_active) : { key: 'jobs.eff.notReported', params: {} }],
  ];
  const measured = finite(e.measured) ? e.measured : NaN;
  return { segments, facts, partial: e.final !== true, measured };
}

// A fact's text: a plain string, or an i18n key with its parameters.
export function factText(v, t) {
  return typeof v === 'string' ? v : t(v.key, v.params);
}

// The coverage note: shown when under 90 % of the job's GPU time has
// samples (the shares rest on the rest).
export function measuredNote(view) {
  return view && Number.isFinite(view.measured) && view.measured < 0.9 ? sharePct(view.measured) : '';
}

// The report's URL parameters for a job of the jobs list.
export function efficiencyParams(job) {
  const p = { id: String(job?.id ?? '') };
  if (job?.node) p.node = String(job.node);
  return p;
}
