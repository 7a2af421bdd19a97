// A stand-in for Vigil's HTTP API with Prometheus-standard JSON shapes and
// synthetic data (8 GPUs, GPU 3 hot), serving web/dist. For UI development
// and for the browser test's offline mode; the real test runs against vigil.
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

function gpuLabels(name, i) {
  return { __name__: name, gpu: String(i), UUID: `GPU-${i}`, device: `nvidia${i}`,
    modelName: MODEL, Hostname: 'mock-node' };
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

function seriesFor(query) {
  if (query in METRICS) {
    return Array.from({ length: GPUS }, (_, i) => ({ metric: gpuLabels(query, i), f: (t) => METRICS[query](t, i) }));
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

export function startMock(port = 0, dist = path.join(here, '..', 'dist')) {
  const started = Date.now() / 1000;
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
    if (url.pathname === '/api/v1/query_range') {
      const start = Number(url.searchParams.get('start')), end = Number(url.searchParams.get('end'));
      const step = Number(url.searchParams.get('step'));
      const result = seriesFor(q).map((s) => {
        const values = [];
        for (let t = start; t <= end; t += step) if (t >= started - 120) values.push([t, String(s.f(t))]);
        return { metric: s.metric, values };
      });
      return json(200, { status: 'success', data: { resultType: 'matrix', result } });
    }
    if (url.pathname === '/api/v1/query') {
      const t = Date.now() / 1000;
      const result = seriesFor(q).map((s) => ({ metric: s.metric, value: [t, String(s.f(t))] }));
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
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const server = await startMock(Number(process.argv[2] ?? 0), process.argv[3]);
  console.log(`mock API on http://127.0.0.1:${server.address().port}`);
}
