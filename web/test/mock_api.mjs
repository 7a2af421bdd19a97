// A stand-in for Vigil's HTTP API with Prometheus-standard JSON shapes and
// synthetic data (8 GPUs, GPU 3 hot, two hours of history), serving web/dist.
// For UI development and for the browser test's offline parts (the Jobs tab:
// /api/v1/jobs, the jobs' training_* series and /api/v1/series for them,
// the node's /api/v1/events, see jobsAt and nodeEventsAt below; the Alerts
// tab: /api/v1/alerts/records, /api/v1/rules and the silences, see
// alertsAt, rulesAt and silencesAt; the Settings tab: the notification
// channels and tests, see channelsAt);
// the rest of the browser test runs against vigil.
// Usage: [VIGIL_URL=http://127.0.0.1:9300] node test/mock_api.mjs [port] [distDir]
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.svg': 'image/svg+xml' };
const GPUS = 8;
const MODEL = 'NVIDIA H100 80GB HBM3';
const NODE = 'mock-node';
const HISTORY = 7200; // seconds of data before the mock started

function gpuLabels(name, i) {
  return { __name__: name, gpu: String(i), UUID: `GPU-${i}`, device: `nvidia${i}`,
    modelName: MODEL, Hostname: NODE, node: NODE };
}
function wave(t, i, base, amp) { return base + amp * Math.sin(t / 37 + i) + (amp / 3) * Math.sin(t / 7 + 2 * i); }

// value(t, i) per metric; i = GPU index or series index.
const METRICS = {
  DCGM_FI_DEV_GPU_UTIL: (t, i) => Math.min(100, wave(t, i, 94, 3)),
  DCGM_FI_DEV_FB_USED: () => 71234 + 529,
  DCGM_FI_DEV_FB_FREE: () => 81559 - 71234 - 529,
  DCGM_FI_DEV_GPU_TEMP: (t, i) => (i === 3 ? wave(t, i, 87, 1) : wave(t, i, 66, 1.5)),
  DCGM_FI_DEV_POWER_USAGE: (t, i) => wave(t, i, i === 3 ? 650 : 610, 25),
  vigil_gpu_temp_slowdown_celsius: () => 90,
  vigil_gpu_power_limit_watts: () => 700,
  DCGM_FI_DEV_PCIE_TX_THROUGHPUT: (t, i) => wave(t, i, 180000, 40000),
  DCGM_FI_DEV_PCIE_RX_THROUGHPUT: (t, i) => wave(t, i, 950000, 200000),
};

// ---------------------------------------------------------------------------
// Jobs (the /api/v1/jobs contract) and their training series, placed in time
// relative to the mock's start (t0, seconds): one running with loss, lr, grad
// norm and tokens/s; one crashed on CUDA OOM (samples/s, an event whose
// message holds markup); one killed inference job with a hostile name and no
// metrics; one completed (iterations/s); one stalled.
// GPUs (NVML's process list): the running job was seen on GPU 1 only, the
// crashed one on none (unknown: all of the node's GPUs are charted).
// Other training series: the running job has eval_loss, accuracy and
// training_step (never charted); the stalled one has 14 (12 charted, "and 2
// more"), one of them with a name that is not a metric name.
export const EVIL_JOB = '<img src=x onerror=alert(1)>';
export const EVIL_EVENT = 'CUDA out of memory. <script>window.__xss=3</script><img src=x onerror="window.__xss=4">';
export const EVIL_XID = 'GPU has fallen off the bus. <script>window.__xss=5</script><img src=x onerror="window.__xss=6">';
export const JOB_GPU_BYTES = 13207024435; // 12.3 GiB

function jobsAt(t0) {
  const ms = (s) => Math.round(s * 1000);
  const job = (o) => ({
    kind: 'training', framework: 'pytorch', launcher: '', trainer: '', reason: '', reason_text: '',
    exit_code: null, exit_signal: null, node: NODE, container_id: '', world_size: 1, end_time_ms: null,
    last_step: null, last_step_time_ms: null, processes: [], events: [], ...o,
    id: `${o.processes?.[0]?.pid ?? 1}-${ms(o.start)}`, start_time_ms: ms(o.start),
    end_time_ms: o.end != null ? ms(o.end) : null, log_query: `{job=${JSON.stringify(o.name)}}`,
  });
  const ranks = (pid, n, cmd) => Array.from({ length: n }, (_, i) => (
    { pid: pid + 1 + i, rank: i, local_rank: i, role: 'rank', cmdline: cmd }));
  return [
    job({ name: 'train', start: t0 - 1800, launcher: 'torchrun', trainer: 'transformers', state: 'running', world_size: 4,
      processes: [{ pid: 4242, rank: -1, local_rank: -1, role: 'launcher', cmdline: 'torchrun --nproc-per-node 4 train.py --bf16' },
        ...ranks(4242, 4, '/usr/bin/python3 -u train.py --bf16')],
      events: [{ t: t0 - 1200, event: 'loss_overflow', details: { rank: 0, attempted_loss_scale: 65536, loss_scale: 32768 } }],
      gpus: [{ gpu: '1', uuid: 'GPU-1', memory_bytes: JOB_GPU_BYTES }],
      series: {
        eval_loss: (t, s) => 0.6 + 2.0 * Math.exp(-(t - s) / 600),
        accuracy: (t, s) => 0.9 * (1 - Math.exp(-(t - s) / 700)),
        step: (t, s) => Math.floor((t - s) / 2),
        loss: (t, s) => 0.45 + 2.2 * Math.exp(-(t - s) / 500) + 0.04 * Math.sin(t / 13),
        learning_rate: (t, s) => 3e-4 * Math.min(1, (t - s) / 300) * (0.55 + 0.45 * Math.cos((t - s) / 4000)),
        grad_norm: (t) => 1.1 + 0.35 * Math.sin(t / 29) + 0.2 * Math.sin(t / 7),
        tokens_per_second: (t) => 52000 + 2500 * Math.sin(t / 41),
      } }),
    job({ name: 'finetune-llama', start: t0 - 3600, end: t0 - 1500, launcher: 'deepspeed', trainer: 'deepspeed', state: 'crashed',
      reason: 'cuda_oom', reason_text: 'CUDA out of memory. Tried to allocate 2.00 GiB', exit_code: 1, world_size: 8,
      container_id: 'c0ffee12ab34', gpus: [],
      processes: [{ pid: 7001, rank: -1, local_rank: -1, role: 'launcher', cmdline: 'deepspeed --num_gpus 8 finetune.py' },
        ...ranks(7001, 8, 'python -u finetune.py --deepspeed ds.json'),
        { pid: 7100, rank: -1, local_rank: -1, role: 'helper', cmdline: 'python -c "from multiprocessing.spawn import spawn_main"' }],
      events: [
        { t: t0 - 3000, event: 'loss_overflow', details: { rank: 0, attempted_loss_scale: 65536, loss_scale: 32768 } },
        { t: t0 - 1510, event: 'cuda_oom', details: { exception: 'torch.cuda.OutOfMemoryError', message: EVIL_EVENT, requested: '2.00 GiB' } }],
      series: {
        loss: (t, s) => 1.2 + 0.8 * Math.exp(-(t - s) / 300) + 0.05 * Math.sin(t / 11),
        learning_rate: () => 2e-5,
        samples_per_second: (t) => 38 + 3 * Math.sin(t / 23),
      } }),
    job({ name: EVIL_JOB, kind: 'inference', framework: '', start: t0 - 5400, end: t0 - 4000, state: 'killed',
      reason: 'signal', reason_text: 'killed by SIGTERM', exit_signal: 'SIGTERM',
      processes: [{ pid: 5150, rank: -1, local_rank: -1, role: 'rank', cmdline: 'python serve.py --port 8000 <b>bold</b>' }] }),
    job({ name: 'eval-resnet', framework: 'tensorflow', start: t0 - 7000, end: t0 - 6100, state: 'completed', exit_code: 0,
      reason: 'completed', processes: [{ pid: 3001, rank: -1, local_rank: -1, role: 'rank', cmdline: 'python eval.py' }],
      events: [{ t: t0 - 6105, event: 'completed', details: { message: 'Training completed.' } }],
      series: { iterations_per_second: (t) => 11 + Math.sin(t / 17) } }),
    job({ name: 'pretrain-moe', start: t0 - 900, launcher: 'mpirun', state: 'stalled', world_size: 2,
      reason_text: 'No output for 10 minutes', stall_after: t0 - 600,
      processes: [{ pid: 6001, rank: -1, local_rank: -1, role: 'launcher', cmdline: 'mpirun -np 2 python pretrain.py' },
        ...ranks(6001, 2, 'python pretrain.py')],
      series: { loss: (t, s) => 7 - (t - s) / 200, ...MANY } }),
  ];
}

// The stalled job's many other series: m00 ... m13, and one whose name is
// not a metric name (left out by the UI).
const MANY = Object.fromEntries([...Array.from({ length: 14 }, (_, i) => `m${String(i).padStart(2, '0')}`), 'bad name{x="1"}']
  .map((k, i) => [k, (t) => 1 + i + Math.sin(t / 20)]));

// The node's events (GET /api/v1/events): an Xid 79 on GPU 1 of the running
// job, with a hostile meaning, and an OOM kill of the crashed job's helper.
function nodeEventsAt(t0) {
  const jobs = jobsAt(t0);
  return [
    { t: t0 - 1520, source: 'kernel', gpu: '', job_id: jobs[1].id, event: 'oom_killed',
      details: { pid: 7100, process: 'python', message: 'Out of memory: Killed process 7100 (python)' } },
    { t: t0 - 300, source: 'kernel', gpu: '1', job_id: jobs[0].id, event: 'xid',
      details: { xid: 79, pci_bus_id: '0000:3B:00.0', meaning: EVIL_XID, meaning_zh: 'GPU 已从总线上掉线。<b>粗体</b>',
        action: 'Drain the node and reset the GPU; check power and cooling.', action_zh: '排空节点并重置 GPU；检查供电和散热。' } },
  ].map(({ t, ...e }) => ({ time_ms: Math.round(t * 1000), node: NODE, ...e }));
}

// Alerts (GET /api/v1/alerts/records and /api/v1/rules): firing, a GPU 3
// too hot (warning), the crashed job (critical), an idle GPU 1 muted by
// another alert (inhibited, not counted), a full disk whose mountpoint and
// summaries hold markup; pending, GPU 5's memory and the host's memory;
// resolved (with ?all=1), an Xid 79 on the running job's GPU 1 and a node
// down two hours ago. The header counts 3 firing, 1 critical.
export const EVIL_MOUNT = '<img src=x onerror=alert(1)>';
export const EVIL_SUMMARY = 'Disk <script>window.__xss=7</script><img src=x onerror="window.__xss=8"> full';
export const EVIL_SUMMARY_ZH = '磁盘 <b>已满</b><img src=x onerror="window.__xss=9">';

export function alertsAt(t0) {
  const jobs = jobsAt(t0);
  const iso = (s) => new Date(Math.round(s) * 1000).toISOString().replace(/\.000Z$/, 'Z');
  const a = (o) => {
    const { start, end, ...rest } = o;
    return {
      state: 'firing', value: null, threshold: 0, diagnosis: {}, ...rest,
      labels: { alertname: o.rule, severity: o.severity, node: NODE, ...o.labels },
      started_at: iso(start), resolved_at: end != null ? iso(end) : null,
      active_at_ms: Math.round(start * 1000), fired_at_ms: o.state === 'pending' ? 0 : Math.round(start * 1000),
      resolved_at_ms: end != null ? Math.round(end * 1000) : 0, last_eval_ms: Math.round(t0 * 1000), keep_firing_since_ms: 0,
    };
  };
  return [
    a({ id: 'a1crash', rule: 'job_crashed', severity: 'critical', start: t0 - 1500, value: 1,
      labels: { job: 'finetune-llama', run: jobs[1].id },
      summary: 'Job finetune-llama on mock-node crashed: CUDA out of memory. Tried to allocate 2.00 GiB',
      summary_zh: 'mock-node 上的任务 finetune-llama 崩溃：CUDA out of memory. Tried to allocate 2.00 GiB',
      log_excerpt: MOCK_LOG_EXCERPT }),
    a({ id: 'a2hot', rule: 'gpu_temperature_high', severity: 'warning', start: t0 - 720, value: 87, threshold: 85,
      labels: { gpu: '3', UUID: 'GPU-3', modelName: MODEL },
      summary: 'GPU 3 on mock-node at 87 °C (alert at 85 °C; it slows down at 90 °C)',
      summary_zh: 'mock-node 上的 GPU 3 温度 87 °C（告警阈值 85 °C，降频温度 90 °C）' }),
    a({ id: 'a3disk', rule: 'disk_near_full', severity: 'warning', start: t0 - 200, value: 93.46, threshold: 90,
      labels: { mountpoint: EVIL_MOUNT, device: '/dev/sda1' }, summary: EVIL_SUMMARY, summary_zh: EVIL_SUMMARY_ZH }),
    a({ id: 'a4idle', rule: 'gpu_idle_allocated', severity: 'warning', start: t0 - 900, value: 0, threshold: 1, inhibited: true,
      labels: { gpu: '1', UUID: 'GPU-1' },
      summary: 'GPU 1 on mock-node holds memory but computes nothing: 0% utilisation for 10m',
      summary_zh: 'mock-node 上的 GPU 1 占用显存但没有计算：利用率 0%，已持续 10 分' }),
    a({ id: 'b1mem', rule: 'gpu_memory_near_full', severity: 'warning', state: 'pending', start: t0 - 20, value: 91.2, threshold: 90,
      labels: { gpu: '5' }, summary: 'GPU 5 on mock-node memory 91.2% full (over 90%): out-of-memory risk',
      summary_zh: 'mock-node 上的 GPU 5 显存已用 91.2%（超过 90%）：有显存不足风险' }),
    a({ id: 'b2host', rule: 'host_memory_near_full', severity: 'warning', state: 'pending', start: t0 - 40, value: 92, threshold: 90,
      summary: 'Host memory on mock-node 92% used (over 90%): the OOM killer is near',
      summary_zh: 'mock-node 主机内存已用 92%（超过 90%）：可能触发 OOM killer' }),
    a({ id: 'c1xid', rule: 'gpu_xid', severity: 'critical', state: 'resolved', start: t0 - 300, end: t0 - 120, value: 1,
      labels: { gpu: '1', xid: '79', job: 'train', run: jobs[0].id },
      summary: 'GPU 1 on mock-node reported Xid 79', summary_zh: 'mock-node 上的 GPU 1 报告 Xid 79' }),
    a({ id: 'c2down', rule: 'node_down', severity: 'critical', state: 'resolved', start: t0 - 7300, end: t0 - 7000, value: 45, threshold: 30,
      labels: { node: 'gpu-7' }, summary: 'Node gpu-7 has not reported for 45 s', summary_zh: '节点 gpu-7 已 45 秒没有上报' }),
  ];
}

// Silences (GET/POST /api/v1/silences, GET/DELETE /api/v1/silence/<id>),
// kept per mock: an active one on another node (the brief's example) whose
// comment and author hold markup, a pending one whose matcher value does,
// an expired one. None mutes a fixture alert; one added (POST) that matches
// an active record marks it "silenced": true, as the server does. POST and
// DELETE refuse what alert_routes.cc refuses: a foreign Origin (403), a
// body that is not application/json (415), a bad silence (400, the
// server's messages; a regex that does not compile is named with its
// value, markup and all).
export const EVIL_SIL_COMMENT = 'fan swap <script>window.__xss=12</script><img src=x onerror="window.__xss=13">';
export const EVIL_SIL_AUTHOR = '<b>mallory</b><img src=x onerror="window.__xss=14">';
export const EVIL_SIL_VALUE = '<img src=x onerror="window.__xss=15">';

function silencesAt(t0) {
  const ms = (s) => Math.round(s * 1000);
  const m = (name, value, isRegex = false, isEqual = true) => ({ name, value, isRegex, isEqual });
  return [
    { id: 'a0c0ffee00000001', matchers: [m('node', 'gpu-07'), m('alertname', 'gpu_.*', true)],
      startsAt: ms(t0 - 600), endsAt: ms(t0 + 4 * 3600 - 600), createdAt: ms(t0 - 600), createdBy: EVIL_SIL_AUTHOR, comment: EVIL_SIL_COMMENT },
    { id: 'b0c0ffee00000002', matchers: [m('job', EVIL_SIL_VALUE), m('gpu', '7', false, false)],
      startsAt: ms(t0 + 3600), endsAt: ms(t0 + 7200), createdAt: ms(t0 - 1200), createdBy: 'bob', comment: 'after the upgrade' },
    { id: 'c0c0ffee00000003', matchers: [m('alertname', 'job_stalled'), m('job', 'sweep-.*', true, false)],
      startsAt: ms(t0 - 86400), endsAt: ms(t0 - 3 * 3600), createdAt: ms(t0 - 86400), createdBy: 'carol', comment: '' },
  ].map((x) => ({ ...x, updatedAt: x.createdAt }));
}

const iso = (ms) => new Date(ms).toISOString().replace(/\.000Z$/, 'Z');
function silenceJson(x, now) {
  const state = now >= x.endsAt ? 'expired' : now < x.startsAt ? 'pending' : 'active';
  return { id: x.id, status: { state }, matchers: x.matchers, startsAt: iso(x.startsAt), endsAt: iso(x.endsAt),
    updatedAt: iso(x.updatedAt), createdAt: iso(x.createdAt), createdBy: x.createdBy, comment: x.comment };
}

function matcherMatches(m, labels) {
  const v = labels[m.name] ?? '';
  let hit;
  if (m.isRegex) {
    try { hit = new RegExp(`^(?:${m.value})$`).test(v); } catch { hit = false; }
  } else {
    hit = v === m.value;
  }
  return m.isEqual ? hit : !hit;
}

// The server's checks of a POST body (alert_routes.cc ParsePostableSilence,
// silence.cc), enough of them for the UI: a silence, or a 400's message.
function parseSilence(body, now) {
  let j;
  try { j = JSON.parse(body); } catch { j = null; }
  if (!j || typeof j !== 'object' || Array.isArray(j)) return { error: 'the body must be a JSON object' };
  const known = ['matchers', 'startsAt', 'endsAt', 'duration', 'createdBy', 'comment', 'id'];
  for (const k of Object.keys(j)) {
    if (!known.includes(k)) return { error: `unknown key "${k}" (a silence has matchers, startsAt, endsAt or duration, createdBy, comment)` };
  }
  if (!Array.isArray(j.matchers) || !j.matchers.length) return { error: 'a silence needs at least one matcher' };
  const matchers = [];
  for (const [i, m] of j.matchers.entries()) {
    if (typeof m?.name !== 'string' || typeof m?.value !== 'string') return { error: `matchers[${i}] needs a name and a value` };
    if (!/^[A-Za-z_]\w*$/.test(m.name)) {
      return { error: `matchers[${i}]: "${m.name}" is not a label name (letters, digits and _, not starting with a digit)` };
    }
    const x = { name: m.name, value: m.value, isRegex: m.isRegex === true, isEqual: m.isEqual !== false };
    if (x.isRegex) {
      try { new RegExp(x.value); } catch {
        return { error: `matchers[${i}]: the regular expression of matcher ${x.name} (${x.value}) does not compile: missing ): ${x.value}` };
      }
    }
    matchers.push(x);
  }
  if (!matchers.some((m) => !matcherMatches(m, {}))) {
    return { error: 'at least one matcher must not match the empty string (such as node="n1"): this silence would mute every alert' };
  }
  if (j.endsAt != null) return { error: 'the mock takes duration only' };
  const d = String(j.duration ?? '');
  const unit = { ms: 1, s: 1000, m: 60000, h: 3600000, d: 86400000 };
  if (!/^(?:\d{1,9}(?:ms|s|m|h|d))+$/.test(d)) {
    return { error: `duration: "${d}" is not a duration such as "2h", "90m", "1h30m" or "7d"` };
  }
  let ms = 0;
  for (const [, n, u] of d.matchAll(/(\d+)(ms|s|m|h|d)/g)) ms += Number(n) * unit[u];
  if (ms <= 0) return { error: 'duration: the duration must be more than 0' };
  return { silence: { id: Array.from({ length: 16 }, () => '0123456789abcdef'[Math.floor(Math.random() * 16)]).join(''),
    matchers, startsAt: now, endsAt: now + ms, createdAt: now, updatedAt: now,
    createdBy: String(j.createdBy ?? ''), comment: String(j.comment ?? '') } };
}

// A crash's log lines as alerts quote them (Alert::log_excerpt), one of
// them hostile: shown as text.
export const MOCK_LOG_EXCERPT = ['  File "train.py", line 61, in main', '    loss.backward()',
  'torch.OutOfMemoryError: CUDA out of memory. <b>Tried</b> to allocate 2.00 GiB'];

// A crash's diagnosis (docs/diagnosis.md "JSON") as the inbox shows it: the
// cause, its evidence, the suggestion with the job's values, and the log
// templates out of rank, one of them hostile.
export const MOCK_CRASH_DIAGNOSIS = {
  summary: 'Probable cause: CUDA out of memory (95%)', summary_zh: '可能原因：CUDA 显存不足（95%）',
  causes: [{ id: 'cuda_oom', title: 'CUDA out of memory', title_zh: 'CUDA 显存不足', confidence: 0.95,
    evidence: [{ signal: 'event:cuda_oom', text: 'log: cuda_oom', text_zh: '日志：cuda_oom' }] }],
  suggestions: [{ text: 'Halve the batch size', text_zh: '将批大小减半', parameter: 'batch_size', current: '16', suggested: '8' }],
  log_templates: [
    { template: 'Epoch <*> step <*> loss <*>', count: 312, severity: 'info', new: false },
    { template: 'torch.OutOfMemoryError: CUDA out of memory. <b>Tried</b> <*>', count: 1, severity: 'error', new: true },
  ],
};

// The inbox (GET /api/v1/inbox, POST /api/v1/inbox/read; alert/inbox.h):
// three items for alice and the lab, one everyone's (held back, with
// hostile text), read marks per recipient as the server keeps them.
export function inboxAt(t0) {
  const ms = t0 * 1000;
  const alert = (rule, severity, extra = {}) => ({ rule, severity, state: 'firing', labels: { node: 'mock-node', gpu: '1' },
    summary: `${rule} on GPU 1`, summary_zh: `GPU 1 ${rule}`, ...extra });
  return [
    { id: 3, kind: 'firing', at_ms: ms - 60000, recipients: ['alice', 'lab'],
      alert: alert('job_crashed', 'critical', { labels: { node: 'mock-node', job: 'train', run: 'r1' },
        description: 'Ran 2h on 8 GPUs; final loss 1.23', description_zh: '在 8 块 GPU 上运行 2 小时；最终 loss 1.23',
        steps: 'Read the exception on the job\'s page.', steps_zh: '在任务页面查看异常。', log_excerpt: MOCK_LOG_EXCERPT,
        diagnosis: MOCK_CRASH_DIAGNOSIS }) },
    { id: 2, kind: 'held_back', at_ms: ms - 120000, recipients: [], note: 'ops-sms: capped: 10 messages today <b>x</b>',
      alert: alert('gpu_temperature_high', 'warning', { summary: '<img src=x onerror="window.pwned=1">hot' }) },
    { id: 1, kind: 'resolved', at_ms: ms - 180000, recipients: ['lab'], alert: alert('node_disk_full', 'warning') },
  ];
}

function inboxView(items, reads, q) {
  const who = q.get('recipient') ?? '';
  const inView = (i) => who === '' || i.recipients.length === 0 || i.recipients.includes(who);
  const read = (i) => reads.has(`${who}/${i.id}`);
  const view = items.filter(inView);
  const listed = view.filter((i) => (!q.get('severity') || i.alert.severity === q.get('severity'))
    && (q.get('unread') !== '1' || !read(i)) && (!Number(q.get('before')) || i.id < Number(q.get('before'))));
  const unread = view.filter((i) => !read(i));
  const by = (sev) => unread.filter((i) => i.alert.severity === sev).length;
  return { status: 'success', data: {
    items: listed.map((i) => ({ ...i, note: i.note ?? '', at: new Date(i.at_ms).toISOString(), read: read(i) })),
    counts: { total: view.length, unread: unread.length, unread_by_severity: { critical: by('critical'), warning: by('warning'), info: by('info') } },
    recipients: [{ name: 'alice', kind: 'person', team: 'lab' }, { name: 'lab', kind: 'team', lead: 'bob' }],
  } };
}

// A change from a page of another origin, or not as JSON: alert_routes.cc's answer.
function refuseForeign(req) {
  const origin = req.headers.origin;
  if (origin != null && origin !== `http://${req.headers.host}`) {
    return [403, 'forbidden', `a page from another origin ("${origin}") may not change silences`];
  }
  const type = req.headers['content-type'];
  if ((type != null || req.method === 'POST') && (type ?? '').split(';')[0].trim().toLowerCase() !== 'application/json') {
    return [415, 'bad_data', 'send the body as JSON, with Content-Type: application/json'];
  }
  return null;
}

const readBody = (req) => new Promise((resolve, reject) => {
  const parts = [];
  req.on('data', (c) => parts.push(c));
  req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
  req.on('error', reject);
});

// Notification settings (GET/PUT/DELETE /api/v1/notify/channels[/<name>],
// POST /api/v1/notify/test) and the delivery log's channel states
// (GET /api/v1/notifications): the channels as config.json would hold them,
// shown as the server shows them (secrets left out, the URL cut to scheme and
// host); a secret a PUT leaves out is kept, as notify_settings.cc does. A
// test is delivered unless the URL has "refuse" in it. PUT, DELETE and POST
// refuse what the server refuses (refuseForeign), and DELETE a routed
// channel (409).
export const EVIL_ANSWER = 'feishu https://open.feishu.cn/... refused: 19021 sign match fail <img src=x onerror="window.__xss=16">';
const WRITE_ONLY = ['secret', 'password', 'body', 'headers', 'url'];
function channelsAt() {
  return {
    channels: [{ name: 'lark', type: 'feishu', url: 'https://open.feishu.cn/open-apis/bot/v2/hook/MOCKTOKEN', secret: 'MOCKSECRET' }],
    routes: [{ match: { severity: 'critical' }, channels: ['lark'] }],
    recipients: [{ name: 'alice', users: ['alice'], team: 'vision', channels: ['lark'], language: 'zh' },
      { name: 'vision', kind: 'team', lead: 'alice', channels: [] },
      { name: EVIL_NAME, channels: [] }],
  };
}
export const EVIL_NAME = '<img src=x onerror="window.__xss=17">';

// Recipients and routes (GET/PUT/DELETE /api/v1/notify/recipients[/<name>],
// GET/PUT /api/v1/notify/routes), refused as notify_routing.cc refuses them:
// an unknown channel or recipient (400), a delete while a route or a team's
// lead names it (409). Returns null for other paths.
function routing(settings, method, path, j) {
  const fail = (code, type, error) => [code, { status: 'error', errorType: type, error }];
  const names = settings.channels.map((c) => c.name);
  if (path === '/api/v1/notify/routes' && method === 'PUT') {
    if (!Array.isArray(j?.routes)) return fail(400, 'bad_data', 'the body must be {"routes": [...]}');
    for (const [i, r] of j.routes.entries()) {
      const c = (r.channels ?? []).find((x) => !names.includes(x));
      if (c) return fail(400, 'bad_data', `config.json: notify.routes[${i}]: unknown channel "${c}"`);
      const p = (r.recipients ?? []).find((x) => !settings.recipients.some((y) => y.name === x));
      if (p) return fail(400, 'bad_data', `config.json: notify.routes[${i}]: unknown recipient "${p}"`);
    }
    settings.routes = j.routes;
    return [200, { status: 'success', data: { saved: true } }];
  }
  if (!path.startsWith('/api/v1/notify/recipients/')) return null;
  const name = decodeURIComponent(path.slice('/api/v1/notify/recipients/'.length));
  const at = settings.recipients.findIndex((r) => r.name === name);
  if (method === 'DELETE') {
    if (at < 0) return fail(404, 'not_found', `config.json has no recipient "${name}"`);
    const route = settings.routes.findIndex((r) => (r.recipients ?? []).includes(name));
    if (route >= 0) return fail(409, 'conflict', `notify.routes[${route}] sends alerts to "${name}": change or remove that route first, then delete the recipient`);
    const team = settings.recipients.find((r) => r.lead === name);
    if (team) return fail(409, 'conflict', `notify.recipients "${team.name}" has "${name}" as its lead: give the team another lead (or none) first, then delete the person`);
    settings.recipients.splice(at, 1);
    return [200, { status: 'success', data: { name, deleted: true } }];
  }
  if (!j || typeof j !== 'object') return fail(400, 'bad_data', 'the body must be one recipient');
  const c = (j.channels ?? []).find((x) => !names.includes(x));
  if (c) return fail(400, 'bad_data', `config.json: notify.recipients "${name}": unknown channel "${c}"`);
  const r = { ...j, name };
  if (at >= 0) settings.recipients[at] = r; else settings.recipients.push(r);
  return [200, { status: 'success', data: { name, saved: true } }];
}
const cutUrl = (u) => u.replace(/^([a-z]+:\/\/)(?:[^/?#@]*@)?([^/?#]*)[/?#].*$/i, '$1$2/...');
function channelView(c) {
  const out = {};
  for (const [k, v] of Object.entries(c)) {
    if (['secret', 'password', 'body'].includes(k)) out[`${k}_set`] = v !== '';
    else if (k === 'headers') out.header_names = Object.keys(v);
    else if (k === 'url') out.url = cutUrl(v);
    else out[k] = v;
  }
  return out;
}
// A body merged with the stored channel of its name and type; {error} as the parser would say it.
function mergeChannel(stored, body, at) {
  const c = { ...body };
  for (const k of ['secret_set', 'password_set', 'body_set', 'header_names']) delete c[k];
  if (stored && stored.type === c.type) {
    for (const k of WRITE_ONLY) if (c[k] === undefined && stored[k] !== undefined) c[k] = stored[k];
    if (stored.url && c.url === cutUrl(stored.url)) c.url = stored.url;
  }
  if (!['webhook', 'slack', 'feishu', 'dingtalk', 'wecom', 'email', 'sms'].includes(c.type)) {
    return { error: `config.json: notify.channels[${at}].type "${c.type}" is not supported` };
  }
  if (c.type !== 'email' && !/^https?:\/\//.test(c.url ?? '')) {
    return { error: `config.json: notify.channels[${at}].url must be an http:// URL` };
  }
  return { channel: c };
}

// /api/v1/rules: Prometheus' shape, Vigil's `vigil` block; a few levels.
export function rulesAt(t0) {
  const active = alertsAt(t0).filter((x) => x.state !== 'resolved');
  const rule = (name, severity, o) => ({
    name, query: o.query, duration: o.duration ?? 0, keepFiringFor: o.keepFiringFor ?? 0, labels: { severity },
    annotations: { summary: 'x', summary_zh: 'x' },
    alerts: active.filter((x) => x.rule === name && x.severity === severity).map((x) => ({ labels: x.labels, state: x.state })),
    state: o.state ?? 'inactive', health: o.health ?? 'ok', ...(o.lastError ? { lastError: o.lastError } : {}),
    evaluationTime: 0.0003, lastEvaluation: new Date(t0 * 1000).toISOString(), type: 'alerting',
    vigil: { enabled: o.enabled ?? true, comparison: o.cmp ?? '>', threshold: o.thr ?? 0, clear: o.clear ?? 0,
      relative_to: o.rel ?? '', unit: o.unit ?? '', per_series: o.perSeries ?? [], overrides: o.overrides ?? [] },
  });
  const slowdown = 'vigil_gpu_temp_slowdown_celsius > 0';
  return { status: 'success', data: { groups: [{ name: 'vigil-presets', file: 'presets', interval: 1, limit: 0, rules: [
    rule('gpu_underutilized', 'warning', { query: 'job GPU utilisation < 80', duration: 900, cmp: '<', thr: 80, clear: 85, unit: '%', enabled: false }),
    rule('gpu_temperature_high', 'warning', { query: `DCGM_FI_DEV_GPU_TEMP >= on(node, gpu) (${slowdown}) - 5`, duration: 60,
      cmp: '>=', thr: -5, clear: -8, rel: slowdown, unit: '°C', state: 'firing' }),
    rule('gpu_temperature_high', 'critical', { query: `DCGM_FI_DEV_GPU_TEMP >= on(node, gpu) (${slowdown}) + 0`, duration: 30,
      cmp: '>=', thr: 0, clear: -3, rel: slowdown, unit: '°C',
      overrides: [{ gpu_model: '*A100*', threshold: 85 }],
      perSeries: [{ where: 'node gpu-01 gpu 1 (NVIDIA A100-SXM4-80GB)', threshold: 85 },
        { where: 'node gpu-01 gpu 0 (<img src=x onerror="window.__xss=11">)', threshold: 92 }] }),
    rule('gpu_xid', 'critical', { query: 'increase(vigil_gpu_xid_errors_total{xid=~"48|79"}[5m]) > 0', keepFiringFor: 900 }),
    rule('disk_near_full', 'warning', { query: '100 * (1 - node_filesystem_avail_bytes / node_filesystem_size_bytes) > 90',
      duration: 300, thr: 90, clear: 88, unit: '%', state: 'firing', health: 'err',
      lastError: 'rule disk_near_full: <b>bad</b> <img src=x onerror="window.__xss=10">' }),
    rule('job_crashed', 'critical', { query: 'job crashed or killed', state: 'firing' }),
  ] }] } };
}

// The API's view of a job: times in ms, events as {time_ms, event, details}.
function jobJson(j, now) {
  const { series, stall_after: stall, events, start, end, t, ...rest } = j;
  const stepEnd = end ?? stall ?? now;
  return { ...rest, last_seen_ms: Math.round((end ?? now) * 1000),
    last_step: series ? Math.floor((stepEnd - start) / 2) : null,
    last_step_time_ms: series ? Math.round(stepEnd * 1000) : null,
    events: events.map((e) => ({ time_ms: Math.round(e.t * 1000), event: e.event, details: e.details })) };
}

// A job's efficiency report (GET /api/v1/jobs/efficiency, docs/jobs.md
// "Efficiency"): the running job's GPU (1) busy 62 %, input-bound 30 %, idle
// 8 %, SM activity reported, the tensor pipe's not; a job without GPUs has
// no shares.
function efficiencyJson(j, now) {
  const end = j.end ?? now;
  const gpuHours = (j.gpus?.length ?? 0) * (end - j.start) / 3600;
  const shares = j.gpus?.length ? { gpu_busy: 0.62, input_bound: 0.3, communication: 0, idle: 0.08 } : null;
  return { start_ms: Math.round(j.start * 1000), end_ms: Math.round(end * 1000), step_ms: 15000,
    gpus: j.gpus?.length ?? 0, gpu_hours: gpuHours, measured: shares ? 1 : 0, shares,
    idle_gpu_hours: shares ? 0.08 * gpuHours : null, sm_active: shares ? 0.41 : null, tensor_active: null,
    cost: { price_per_gpu_hour: 2.5, currency: 'USD', total: 2.5 * gpuHours, idle: shares ? 0.2 * gpuHours : null },
    final: j.end != null, summary: '', summary_zh: '' };
}

// metric{l="v", ...} and avg/max/min/sum(metric{...}): the name and the
// equality matchers (enough for the UI's own queries).
function parseQuery(query) {
  const m = /^\s*(?:(avg|max|min|sum)\s*\(\s*)?([A-Za-z_:][\w:]*)\s*(?:\{([^}]*)\})?\s*\)?\s*$/.exec(query);
  if (!m) return null;
  const matchers = {};
  for (const mm of (m[3] ?? '').matchAll(/([A-Za-z_]\w*)\s*=\s*"((?:[^"\\]|\\.)*)"/g)) matchers[mm[1]] = JSON.parse(`"${mm[2]}"`);
  return { agg: m[1] ?? null, name: m[2], matchers };
}

const matches = (labels, matchers) => Object.entries(matchers).every(([k, v]) => (labels[k] ?? '') === v);

function jobSeries(name, matchers, t0) {
  const key = name.replace(/^training_/, '');
  const out = [];
  for (const j of jobsAt(t0)) {
    const f = j.series?.[key];
    if (!f) continue;
    const labels = { __name__: name, job: j.name, node: NODE, source: `/var/log/${j.name}.log`, stream: 'stdout' };
    if (!matches(labels, matchers)) continue;
    const last = j.end ?? j.stall_after ?? Infinity;
    out.push({ metric: labels, f: (t) => (t >= j.start && t <= last ? f(t, j.start) : null) });
  }
  return out;
}

function seriesFor(query, t0) {
  const p = parseQuery(query);
  if (p && p.name in METRICS) {
    return Array.from({ length: GPUS }, (_, i) => ({ metric: gpuLabels(p.name, i), f: (t) => METRICS[p.name](t, i) }))
      .filter((s) => matches(s.metric, p.matchers));
  }
  if (p && p.name.startsWith('training_')) {
    const ss = jobSeries(p.name, p.matchers, t0);
    // An aggregation of the job's series: one series without labels.
    return p.agg && ss.length ? [{ metric: {}, f: ss[0].f }] : ss;
  }
  if (query.startsWith('sum by (mode)')) {
    const modes = { user: 0.9, system: 0.25, iowait: 0.05, softirq: 0.02, idle: 0.78 };
    return Object.entries(modes).map(([mode, v], i) => ({ metric: { mode }, f: (t) => Math.max(0, wave(t, i, v, v / 4)) }));
  }
  if (query === 'node_cpu_seconds_total{mode="idle"}') {
    return [0, 1].map((cpu) => ({ metric: { __name__: 'node_cpu_seconds_total', cpu: String(cpu), mode: 'idle' }, f: (t) => t }));
  }
  if (query === 'node_memory_MemAvailable_bytes') return [{ metric: { __name__: query }, f: (t) => wave(t, 0, 9e9, 4e8) }];
  if (query === 'node_memory_MemTotal_bytes') return [{ metric: { __name__: query }, f: () => 16.7e9 }];
  const m = /^rate\((node_\w+)/.exec(query);
  if (m) return [{ metric: { device: 'sda' }, f: (t) => Math.max(0, wave(t, 1, 4e6, 3e6)) }];
  return [];
}

// The optional actions (GET /api/v1/actions, POST /api/v1/actions/{id}/cancel;
// alert/actions.h): one scheduled to run in ten minutes, one that ran with
// hostile output, a dry run. Cancel is stateful, 409 once not scheduled.
export function actionsAt(t0) {
  const ms = t0 * 1000;
  const base = { on: 'job_finished', dry_run: false, command: ['/usr/local/bin/stop-instance', '--id', 'i-123'],
    started_ms: null, finished_ms: null, cancelled_by: '', exit_code: null, output: '', output_truncated: false, error: '', timeout_ms: 300000 };
  const alert = (job, run) => ({ id: `fp-${run}`, rule: 'job_finished', owner: 'alice',
    labels: { alertname: 'job_finished', job, node: 'mock-node', run, severity: 'info' } });
  return [
    { ...base, id: 3, action: 'stop-instance', state: 'scheduled', alert: alert('train', 'r3'), created_ms: ms - 60000, run_at_ms: ms + 600000 },
    { ...base, id: 2, action: 'rehearse', state: 'dry_run', dry_run: true, alert: alert('eval', 'r2'), created_ms: ms - 3600000,
      run_at_ms: ms - 3000000, started_ms: ms - 3000000, finished_ms: ms - 3000000,
      output: 'dry run: would have run /usr/local/bin/stop-instance --id i-123' },
    { ...base, id: 1, action: 'stop-instance', state: 'failed', alert: alert('<img src=x onerror="window.pwned=1">', 'r1'),
      created_ms: ms - 7200000, run_at_ms: ms - 6600000, started_ms: ms - 6600000, finished_ms: ms - 6590000, exit_code: 2,
      output: '<b>no such instance</b>\n', error: 'exited with status 2' },
  ];
}

function actionsView(entries, q) {
  const id = Number(q.get('id') ?? 0);
  return { status: 'success', data: { now_ms: Date.now(), actions: entries.filter((e) => !id || e.id === id),
    configured: [{ name: 'stop-instance', on: 'job_finished', match: {}, command: ['/usr/local/bin/stop-instance', '--id', 'i-123'],
      dry_run: false, confirm_window_ms: 600000, timeout_ms: 300000 },
    { name: 'rehearse', on: 'job_finished', match: { job: 'eval*' }, command: ['/bin/true'], dry_run: true,
      confirm_window_ms: 600000, timeout_ms: 300000 }] } };
}

export function startMock(port = 0, dist = path.join(here, '..', 'dist')) {
  const started = Date.now() / 1000;
  const t0 = Math.floor(started);
  const silences = silencesAt(t0);
  const inbox = inboxAt(t0);
  const inboxReads = new Set(); // "<recipient>/<id>"
  const actions = actionsAt(t0);
  const settings = channelsAt();
  // Every POST and DELETE of silences, and every change of the notification
  // settings, as received (the browser test reads them).
  const changes = [];
  const server = createServer(async (req, res) => {
    const url = new URL(req.url, 'http://x');
    const json = (code, body) => { res.writeHead(code, { 'Content-Type': 'application/json' }); res.end(JSON.stringify(body)); };
    const q = url.searchParams.get('query') ?? '';
    if (url.pathname === '/healthz') { res.writeHead(200); return res.end('ok\n'); }
    if (url.pathname === '/api/v1/status') {
      return json(200, { version: '0.1.0-mock', node: 'mock-node', home: '/tmp/mock', uptime_seconds: Math.round(Date.now() / 1000 - started),
        gpu: { state: 'ok', driver_version: '550.54.15', cuda_version: '12.4', responsive: true,
          gpus: Array.from({ length: GPUS }, (_, i) => ({ gpu: String(i), modelName: MODEL })) } });
    }
    if (url.pathname === '/api/v1/jobs') {
      const now = Date.now() / 1000;
      return json(200, { status: 'success', data: { jobs: jobsAt(t0).map((j) => jobJson(j, now)) } });
    }
    if (url.pathname === '/api/v1/jobs/efficiency') {
      const now = Date.now() / 1000;
      const j = jobsAt(t0).find((x) => `${x.processes?.[0]?.pid ?? 1}-${Math.round(x.start * 1000)}` === url.searchParams.get('id'));
      if (!j) return json(404, { status: 'error', errorType: 'not_found', error: 'no such job' });
      return json(200, { status: 'success', data: { job_id: url.searchParams.get('id'), node: NODE, name: j.name,
        efficiency: efficiencyJson(j, now) } });
    }
    if (url.pathname === '/api/v1/alerts/records') {
      const all = ['1', 'true'].includes(url.searchParams.get('all') ?? '');
      const limit = Number(url.searchParams.get('limit') ?? 500);
      const now = Date.now();
      const inEffect = silences.filter((x) => now >= x.startsAt && now < x.endsAt);
      const recs = alertsAt(t0).map((r) => (r.state !== 'resolved' && inEffect.some((x) => x.matchers.every((m) => matcherMatches(m, r.labels)))
        ? { ...r, silenced: true } : r));
      const rank = { critical: 0, warning: 1, info: 2 };
      // Active (firing, then pending; the most severe and newest first), then the resolved, newest first.
      const active = recs.filter((x) => x.state !== 'resolved').sort((x, y) => (x.state === 'firing' ? 0 : 1) - (y.state === 'firing' ? 0 : 1)
        || rank[x.severity] - rank[y.severity] || y.active_at_ms - x.active_at_ms);
      const history = recs.filter((x) => x.state === 'resolved').sort((x, y) => y.resolved_at_ms - x.resolved_at_ms).slice(0, limit);
      return json(200, all ? [...active, ...history] : active);
    }
    if (url.pathname === '/api/v1/rules') return json(200, rulesAt(t0));
    if (url.pathname === '/api/v1/inbox') return json(200, inboxView(inbox, inboxReads, url.searchParams));
    if (url.pathname === '/api/v1/actions') return json(200, actionsView(actions, url.searchParams));
    const cancel = /^\/api\/v1\/actions\/(\d+)\/cancel$/.exec(url.pathname);
    if (cancel && req.method === 'POST') {
      const body = await readBody(req);
      changes.push({ method: req.method, path: url.pathname, headers: req.headers, body });
      const refused = refuseForeign(req);
      if (refused) return json(refused[0], { status: 'error', errorType: refused[1], error: refused[2] });
      const e = actions.find((x) => x.id === Number(cancel[1]));
      if (!e) return json(404, { status: 'error', errorType: 'not_found', error: `no action has the id ${cancel[1]}` });
      if (e.state !== 'scheduled') {
        return json(409, { status: 'error', errorType: 'conflict', error: `action ${e.id} cannot be cancelled: it is ${e.state}` });
      }
      Object.assign(e, { state: 'cancelled', cancelled_by: JSON.parse(body || '{}').by ?? 'someone', finished_ms: Date.now() });
      return json(200, { status: 'success', data: e });
    }
    if (url.pathname === '/api/v1/inbox/read' && req.method === 'POST') {
      const body = await readBody(req);
      changes.push({ method: req.method, path: url.pathname, headers: req.headers, body });
      const refused = refuseForeign(req);
      if (refused) return json(refused[0], { status: 'error', errorType: refused[1], error: refused[2] });
      const j = JSON.parse(body);
      const who = j.recipient ?? '';
      const ids = j.ids ?? inbox.filter((i) => who === '' || !i.recipients.length || i.recipients.includes(who)).map((i) => i.id);
      for (const id of ids) (j.read === false ? inboxReads.delete(`${who}/${id}`) : inboxReads.add(`${who}/${id}`));
      return json(200, { status: 'success', data: { changed: ids.length } });
    }
    if (url.pathname === '/api/v1/silences' || url.pathname.startsWith('/api/v1/silence/')) {
      const now = Date.now();
      const fail = (code, type, error) => json(code, { status: 'error', errorType: type, error });
      const one = url.pathname.startsWith('/api/v1/silence/') ? decodeURIComponent(url.pathname.slice('/api/v1/silence/'.length)) : null;
      if (req.method === 'GET' && one == null) {
        return json(200, [...silences].sort((a, b) => b.createdAt - a.createdAt).map((x) => silenceJson(x, now)));
      }
      if (req.method === 'GET' || req.method === 'DELETE') {
        const x = silences.find((y) => y.id === one);
        if (req.method === 'DELETE') {
          const body = await readBody(req);
          changes.push({ method: req.method, path: url.pathname, headers: req.headers, body });
          const refused = refuseForeign(req);
          if (refused) return fail(...refused);
        }
        if (!x) return fail(404, 'not_found', `no silence has the id "${String(one).slice(0, 64)}" (GET /api/v1/silences lists them)`);
        if (req.method === 'DELETE' && now < x.endsAt) {
          if (now < x.startsAt) x.startsAt = now;
          x.endsAt = now;
          x.updatedAt = now;
        }
        return json(200, silenceJson(x, now));
      }
      if (req.method === 'POST' && one == null) {
        const body = await readBody(req);
        changes.push({ method: req.method, path: url.pathname, headers: req.headers, body });
        const refused = refuseForeign(req);
        if (refused) return fail(...refused);
        const parsed = parseSilence(body, now);
        if (parsed.error) return fail(400, 'bad_data', parsed.error);
        silences.push(parsed.silence);
        return json(200, { silenceID: parsed.silence.id });
      }
      return fail(405, 'bad_data', 'method not allowed');
    }
    if (url.pathname === '/api/v1/notifications') {
      return json(200, { status: 'success', data: { counts: { pending: 1, delivered: 3, failed: 0, capped: 0, superseded: 0 },
        channels: [{ name: 'lark', failing: true, counts: {}, last_error: EVIL_ANSWER, last_error_at: '2026-12-02T13:05:50Z',
          last_delivered_at: null }], entries: [] } });
    }
    if (url.pathname === '/api/v1/notify/channels' && req.method === 'GET') {
      return json(200, { status: 'success', data: { path: '/tmp/mock/config.json', channels: settings.channels.map(channelView),
        routes: settings.routes } });
    }
    if (url.pathname === '/api/v1/notify/recipients' && req.method === 'GET') {
      return json(200, { status: 'success', data: { path: '/tmp/mock/config.json', recipients: settings.recipients } });
    }
    if (url.pathname === '/api/v1/notify/routes' && req.method === 'GET') {
      return json(200, { status: 'success', data: { path: '/tmp/mock/config.json', routes: settings.routes } });
    }
    if (url.pathname.startsWith('/api/v1/notify/')) {
      const fail = (code, type, error) => json(code, { status: 'error', errorType: type, error });
      const body = await readBody(req);
      changes.push({ method: req.method, path: url.pathname, headers: req.headers, body });
      const refused = refuseForeign(req);
      if (refused) return fail(...refused);
      let j = null;
      try { j = body ? JSON.parse(body) : null; } catch { /* refused below */ }
      const routed = routing(settings, req.method, url.pathname, j);
      if (routed) return json(...routed);
      if (url.pathname === '/api/v1/notify/test' && req.method === 'POST') {
        const named = typeof j?.channel === 'string' ? settings.channels.find((c) => c.name === j.channel) : null;
        if (typeof j?.channel === 'string' && !named) return fail(404, 'not_found', `config.json has no channel "${j.channel}"`);
        let c = named;
        if (!c) {
          if (typeof j?.channel_config?.name !== 'string') return fail(400, 'bad_data', 'channel_config needs a "name"');
          const merged = mergeChannel(settings.channels.find((x) => x.name === j.channel_config.name), j.channel_config, 0);
          if (merged.error) return fail(400, 'bad_data', merged.error);
          c = merged.channel;
        }
        const delivered = !/refuse/.test(c.url ?? '');
        return json(200, { status: 'success', data: { channel: c.name, type: c.type, delivered,
          answer: delivered ? 'delivered' : `${c.type} ${cutUrl(c.url)} answered HTTP 500` } });
      }
      const name = decodeURIComponent(url.pathname.slice('/api/v1/notify/channels/'.length));
      const at = settings.channels.findIndex((c) => c.name === name);
      if (req.method === 'DELETE') {
        if (at < 0) return fail(404, 'not_found', `config.json has no channel "${name}"`);
        const route = settings.routes.findIndex((r) => r.channels.includes(name));
        if (route >= 0) {
          return fail(409, 'conflict', `notify.routes[${route}] sends alerts to "${name}": change or remove that route first, then delete the channel`);
        }
        settings.channels.splice(at, 1);
        return json(200, { status: 'success', data: { name, deleted: true } });
      }
      if (req.method === 'PUT') {
        if (!j || typeof j !== 'object') return fail(400, 'bad_data', 'the body must be one channel');
        const merged = mergeChannel(at >= 0 ? settings.channels[at] : null, { ...j, name }, at >= 0 ? at : settings.channels.length);
        if (merged.error) return fail(400, 'bad_data', merged.error);
        if (at >= 0) settings.channels[at] = merged.channel; else settings.channels.push(merged.channel);
        return json(200, { status: 'success', data: { name, saved: true } });
      }
      return fail(405, 'bad_data', 'method not allowed');
    }
    if (url.pathname === '/api/v1/events') {
      const from = Number(url.searchParams.get('start_ms')), to = Number(url.searchParams.get('end_ms'));
      if (!Number.isFinite(from) || !Number.isFinite(to)) return json(400, { status: 'error', errorType: 'bad_data', error: 'start_ms and end_ms are required' });
      const events = nodeEventsAt(t0).filter((e) => e.time_ms >= from && e.time_ms <= to);
      return json(200, { status: 'success', data: { events } });
    }
    // Label sets of the training series matching {__name__=~"training_.+", job="...", node="..."}.
    if (url.pathname === '/api/v1/series') {
      const sel = url.searchParams.getAll('match[]');
      if (!sel.length) return json(400, { status: 'error', errorType: 'bad_data', error: 'no match[] parameter provided' });
      const data = [];
      for (const m of sel) {
        if (!/^\{__name__=~"training_\.\+", /.test(m)) continue;
        const matchers = parseQuery(`x${m.replace(/__name__=~"training_\.\+", /, '')}`)?.matchers;
        if (!matchers) continue;
        for (const j of jobsAt(t0)) {
          for (const key of Object.keys(j.series ?? {})) {
            const labels = { __name__: `training_${key}`, job: j.name, node: NODE, source: `/var/log/${j.name}.log`, stream: 'stdout' };
            if (matches(labels, matchers)) data.push(labels);
          }
        }
      }
      return json(200, { status: 'success', data });
    }
    if (url.pathname === '/api/v1/query_range') {
      const start = Number(url.searchParams.get('start')), end = Number(url.searchParams.get('end'));
      const step = Number(url.searchParams.get('step'));
      const now = Date.now() / 1000;
      const result = seriesFor(q, t0).map((s) => {
        const values = [];
        for (let t = start; t <= end; t += step) {
          if (t < started - HISTORY || t > now) continue;
          const v = s.f(t);
          if (v != null) values.push([t, String(v)]);
        }
        return { metric: s.metric, values };
      }).filter((s) => s.values.length);
      return json(200, { status: 'success', data: { resultType: 'matrix', result } });
    }
    if (url.pathname === '/api/v1/query') {
      const t = Date.now() / 1000;
      const result = seriesFor(q, t0).map((s) => ({ metric: s.metric, value: [t, String(s.f(t))] }));
      return json(200, { status: 'success', data: { resultType: 'vector', result } });
    }
    // The log API has no synthetic stand-in: with VIGIL_URL set it is passed
    // through to a running vigil, so the log explorer shows real lines.
    if (url.pathname.startsWith('/api/v1/logs/')) {
      if (!process.env.VIGIL_URL) return json(404, { status: 'error', errorType: 'not_found', error: 'set VIGIL_URL to pass the log API through' });
      try {
        const up = await fetch(new URL(req.url, process.env.VIGIL_URL), { headers: { 'Last-Event-ID': req.headers['last-event-id'] ?? '' } });
        res.writeHead(up.status, { 'Content-Type': up.headers.get('content-type') ?? 'application/json' });
        return res.end(Buffer.from(await up.arrayBuffer()));
      } catch (e) {
        return json(502, { status: 'error', errorType: 'unavailable', error: String(e.message) });
      }
    }
    const file = url.pathname === '/' ? 'index.html' : url.pathname.slice(1);
    if (file.includes('..')) return json(404, {});
    try {
      const body = await readFile(path.join(dist, file));
      res.writeHead(200, { 'Content-Type': TYPES[path.extname(file)] ?? 'application/octet-stream',
        'Cache-Control': file.startsWith('assets/app-') ? 'public, max-age=31536000, immutable' : 'no-cache',
        ETag: '"mock"',
        'Content-Security-Policy': "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'" });
      res.end(body);
    } catch {
      res.writeHead(404); res.end('not found');
    }
  });
  server.changes = changes;
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const server = await startMock(Number(process.argv[2] ?? 0), process.argv[3]);
  console.log(`mock API on http://127.0.0.1:${server.address().port}`);
}
