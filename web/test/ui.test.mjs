// Browser test of the built-in UI: the real vigil binary on the fake NVML
// (8 x H100, GPU 3 hot), driven in Debian's chromium by playwright-core.
// For the log explorer a child shell writes hostile, multiline and numbered
// lines to a file through its stdout, which vigil's discovery finds. The Jobs
// tab is tested against mock_api.mjs (its jobs fixture) with the bundle of
// web/src built for the test, so it runs without vigil too.
//
// Env: VIGIL_BIN (vigil binary), VIGIL_FAKE_NVML (libnvidia-ml-fake.so),
// VIGIL_SOURCE_DIR (repo root, for the scenario), optional VIGIL_CHROMIUM
// (default /usr/bin/chromium) and VIGIL_WEB_ARTIFACTS (screenshots; default
// a temp dir). Without VIGIL_BIN and VIGIL_FAKE_NVML only the Jobs test runs
// (the others are skipped, saying so). Run: node --test web/test/ui.test.mjs
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { EVIL_EVENT, EVIL_JOB, EVIL_XID, startMock } from './mock_api.mjs';

const env = process.env;
const SOURCE = env.VIGIL_SOURCE_DIR ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CHROMIUM = env.VIGIL_CHROMIUM ?? '/usr/bin/chromium';
const ARTIFACTS = env.VIGIL_WEB_ARTIFACTS ?? path.join(tmpdir(), 'vigil-web-artifacts');
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
  '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const GPUS = 8;
const HAVE_VIGIL = !!(env.VIGIL_BIN && env.VIGIL_FAKE_NVML);
const NEEDS_VIGIL = { skip: HAVE_VIGIL ? false : 'VIGIL_BIN and VIGIL_FAKE_NVML are not set' };

let vigil = null, vigilLog = '', base = '', home = '';
let writer = null, logDir = '', logFile = '';
// The job name comes from the writer's script name (docs/discovery.md).
const JOB = `vigilwebui${process.pid}`;
const EVIL = '<script>window.__xss=1</script><img src=x onerror="window.__xss=2">';
const NUMBERED = 30;
const BULK = 600; // more than a page (500): the oldest lines need "load older"
const userDirs = [];

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitFor(what, fn, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  let last = null;
  while (Date.now() < deadline) {
    try { const v = await fn(); if (v) return v; } catch (e) { last = e; }
    if (vigil?.exitCode != null) throw new Error(`vigil exited (${vigil.exitCode}) while waiting for ${what}:\n${vigilLog}`);
    await sleep(250);
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${last.message}` : ''}\n${vigilLog.slice(-2000)}`);
}

async function launch(locale) {
  const dir = mkdtempSync(path.join(tmpdir(), 'vigil-chromium-'));
  userDirs.push(dir);
  return chromium.launchPersistentContext(dir, {
    executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true, locale,
    viewport: { width: 1440, height: 900 }, colorScheme: 'light',
  });
}

// A job that writes to a file through its stdout, then sleeps holding it.
function startLogWriter() {
  logDir = mkdtempSync(path.join(tmpdir(), 'vigil-web-logs-'));
  logFile = path.join(logDir, 'job.log');
  const script = path.join(logDir, `${JOB}.sh`);
  writeFileSync(script, [
    `exec >'${logFile}' 2>&1`,
    "echo 'INFO starting step 1'",
    `echo '${EVIL}'`,
    "printf 'Traceback (most recent call last):\\n  File \"train.py\", line 3, in <module>\\n    main()\\nRuntimeError: CUDA error: out of memory\\n'",
    `i=1; while [ $i -le ${BULK} ]; do echo "INFO bulk row $i"; i=$((i+1)); done`,
    `i=1; while [ $i -le ${NUMBERED} ]; do echo "WARN numbered line $i"; i=$((i+1)); done`,
    "echo 'ERROR step failed: loss is NaN'",
    'sleep 300',
    ''].join('\n'));
  writer = spawn('sh', [script], { detached: true, stdio: 'ignore' });
}

before(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  if (!HAVE_VIGIL) return;
  home = mkdtempSync(path.join(tmpdir(), 'vigil-web-home-'));
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  vigil = spawn(env.VIGIL_BIN, ['up', '--foreground', '--home', home, '--listen', `127.0.0.1:${port}`], {
    env: { ...env, VIGIL_NVML_LIBRARY: env.VIGIL_FAKE_NVML,
      VIGIL_FAKE_NVML_SCENARIO: path.join(SOURCE, 'tests/fake_nvml/scenarios/h100x8.scenario'),
      // Ten scenario seconds per second: GPU 3 is past 85 C (5 C under its
      // slowdown) within the test's first seconds.
      VIGIL_FAKE_NVML_SPEED: '10' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const keep = (d) => { vigilLog = (vigilLog + d).slice(-20000); };
  vigil.stdout.on('data', keep);
  vigil.stderr.on('data', keep);
  await waitFor('/healthz', async () => (await fetch(`${base}/healthz`)).ok, 20000);
  startLogWriter();
  // Charts need a few samples; the query API must answer with every GPU.
  await waitFor('8 GPUs with data in /api/v1/query_range', async () => {
    const now = Math.floor(Date.now() / 1000);
    const r = await fetch(`${base}/api/v1/query_range?query=DCGM_FI_DEV_GPU_UTIL&start=${now - 60}&end=${now}&step=1`);
    if (r.status === 404) throw new Error('/api/v1/query_range is not served by this vigil');
    const body = await r.json();
    return body.data?.result?.length === GPUS && body.data.result.every((s) => s.values.length >= 3);
  }, 30000);
});

after(async () => {
  // The writer's process group: the shell and its sleep.
  if (writer && writer.exitCode == null) { try { process.kill(-writer.pid, 'SIGTERM'); } catch { /* gone */ } }
  if (vigil && vigil.exitCode == null) {
    vigil.kill('SIGTERM');
    await Promise.race([new Promise((r) => vigil.once('exit', r)), sleep(10000)]);
    if (vigil.exitCode == null) vigil.kill('SIGKILL');
  }
  for (const d of [home, logDir, ...userDirs]) if (d) rmSync(d, { recursive: true, force: true });
});

test('serves the UI with a strict CSP and cacheable assets', NEEDS_VIGIL, async () => {
  const r = await fetch(`${base}/`);
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type'), /^text\/html/);
  const csp = r.headers.get('content-security-policy');
  assert.match(csp, /script-src 'self'/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
  const html = await r.text();
  const js = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
  const css = /href="(\/assets\/[^"]+\.css)"/.exec(html)?.[1];
  assert.ok(js && css, html);
  const rj = await fetch(base + js);
  assert.match(rj.headers.get('content-type'), /^text\/javascript/);
  assert.match(rj.headers.get('cache-control'), /immutable/);
  const rc = await fetch(base + css);
  assert.match(rc.headers.get('content-type'), /^text\/css/);
  const etag = r.headers.get('etag');
  assert.equal((await fetch(`${base}/`, { headers: { 'If-None-Match': etag } })).status, 304);
});

test('overview: 8 GPU cards with live charts, range picker, Chinese, screenshots', NEEDS_VIGIL, async () => {
  const ctx = await launch('en-US');
  try {
    const page = ctx.pages()[0] ?? await ctx.newPage();
    const errors = [];
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    page.on('pageerror', (e) => errors.push(e.message));
    const windows = [];
    page.on('request', (req) => {
      const u = new URL(req.url());
      if (u.pathname === '/api/v1/query_range') {
        windows.push(Number(u.searchParams.get('end')) - Number(u.searchParams.get('start')));
      }
    });

    await page.goto(base + '/');
    const fcp = await page.evaluate(() => new Promise((resolve) => {
      const e = performance.getEntriesByName('first-contentful-paint')[0];
      if (e) return resolve(e.startTime);
      new PerformanceObserver((l) => resolve(l.getEntries()[0].startTime)).observe({ type: 'paint', buffered: true });
    }));
    console.log(`first contentful paint: ${fcp.toFixed(0)} ms`);
    assert.ok(fcp < 2500, `first paint took ${fcp} ms`);

    // Every GPU card, each of its charts with data points.
    await page.waitForFunction((n) => {
      const cards = document.querySelectorAll('article.gpu');
      return cards.length === n && [...cards].every((c) => {
        const charts = c.querySelectorAll('.chart');
        return charts.length === 3 && [...charts].every((ch) => Number(ch.dataset.points) >= 2);
      });
    }, GPUS, { timeout: 20000 });
    const cards = await page.$$eval('article.gpu', (els) => els.map((e) => ({
      gpu: e.dataset.gpu, flag: e.dataset.flag, text: e.textContent,
      points: [...e.querySelectorAll('.chart')].map((c) => Number(c.dataset.points)),
    })));
    assert.deepEqual(cards.map((c) => c.gpu), ['0', '1', '2', '3', '4', '5', '6', '7']);
    for (const c of cards) {
      assert.match(c.text, /NVIDIA H100 80GB HBM3/);
      assert.match(c.text, /slowdown 90°/);
      assert.match(c.text, /limit 700 W/);
    }
    console.log('chart points per GPU:', cards.map((c) => `${c.gpu}:${c.points.join('/')}`).join(' '));
    // GPU 3 runs within 5 C of its slowdown temperature; the others do not.
    await page.waitForSelector('article.gpu[data-gpu="3"].hot', { timeout: 15000 });
    assert.deepEqual(await page.$$eval('article.gpu.hot, article.gpu.throttle', (e) => e.map((x) => x.dataset.gpu)), ['3']);

    const status = await page.textContent('[data-testid=status]');
    assert.match(status, /8 GPUs detected/);
    assert.match(status, /driver 550\.54\.15/);
    const sys = await page.$$eval('.panel .chart', (els) => els.map((e) => Number(e.dataset.points)));
    assert.equal(sys.length, 4);
    assert.ok(sys[0] >= 2 && sys[1] >= 2, `system charts: ${sys}`); // CPU and memory always have data

    // Range picker: the next requests ask for the new window.
    assert.ok(windows.includes(900), `default window 15m: ${[...new Set(windows)]}`);
    for (const [key, secs] of [['1h', 3600], ['5m', 300]]) {
      windows.length = 0;
      await page.click(`button[data-range="${key}"]`);
      await waitFor(`query_range with a ${key} window`, () => windows.includes(secs), 10000);
      assert.equal(await page.getAttribute(`button[data-range="${key}"]`, 'aria-pressed'), 'true');
      assert.match(page.url(), new RegExp(`#range=${key}$`));
    }
    await page.waitForFunction(() => [...document.querySelectorAll('article.gpu .chart')]
      .every((c) => Number(c.dataset.points) >= 2), null, { timeout: 10000 });
    await sleep(2500); // one more live refresh at the new range
    await page.screenshot({ path: path.join(ARTIFACTS, 'overview-en.png'), fullPage: true });

    // Chinese: every fixed string changes, and the choice is remembered.
    await page.click('button.lang');
    assert.equal(await page.getAttribute('html', 'lang'), 'zh-CN');
    assert.match(await page.textContent('[data-testid=status]'), /检测到 8 块 GPU/);
    assert.match(await page.textContent('section.system h2'), /系统/);
    assert.match(await page.textContent('article.gpu[data-gpu="3"] .flag'), /接近过热降频/);
    assert.equal(await page.textContent('button[data-range="1h"]'), '1 小时');
    await page.reload();
    await page.waitForFunction(() => document.querySelectorAll('article.gpu').length === 8);
    assert.equal(await page.getAttribute('html', 'lang'), 'zh-CN');
    await page.waitForFunction(() => [...document.querySelectorAll('article.gpu .chart')]
      .every((c) => Number(c.dataset.points) >= 2), null, { timeout: 10000 });
    await page.screenshot({ path: path.join(ARTIFACTS, 'overview-zh.png'), fullPage: true });
    await page.click('button.lang');
    assert.equal(await page.getAttribute('html', 'lang'), 'en');

    // Dark scheme for the record.
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.reload();
    await page.waitForFunction(() => [...document.querySelectorAll('article.gpu .chart')]
      .every((c) => Number(c.dataset.points) >= 2), null, { timeout: 10000 });
    await page.screenshot({ path: path.join(ARTIFACTS, 'overview-dark.png'), fullPage: true });

    assert.deepEqual(errors, [], 'no console errors (CSP violations show here)');
    console.log(`screenshots in ${ARTIFACTS}`);
  } finally {
    await ctx.close();
  }
});

test('follows the browser language and renders untrusted strings as text', NEEDS_VIGIL, async () => {
  const ctx = await launch('zh-CN');
  try {
    const page = ctx.pages()[0] ?? await ctx.newPage();
    const evil = '<img src=x onerror="window.__xss=1">';
    // A hostname or model name is whatever the machine says it is.
    await page.route('**/api/v1/status', async (route) => {
      const res = await route.fetch();
      const body = await res.json();
      body.node = evil;
      for (const g of body.gpu.gpus) g.modelName = evil;
      await route.fulfill({ response: res, json: body });
    });
    await page.goto(base + '/');
    await page.waitForFunction(() => document.querySelectorAll('article.gpu').length === 8);
    assert.equal(await page.getAttribute('html', 'lang'), 'zh-CN');
    assert.match(await page.textContent('section.system h2'), /系统/);
    await sleep(500);
    assert.equal(await page.textContent('.node'), evil);
    assert.equal(await page.evaluate(() => window.__xss), undefined);
    assert.equal(await page.$$eval('img', (e) => e.length), 0);
  } finally {
    await ctx.close();
  }
});

test('logs: filters, hostile text, search highlights, context, histogram, volume, live tail, Chinese', NEEDS_VIGIL, async () => {
  const lines = BULK + NUMBERED + 4;
  const sel = `{job="${JOB}"}`;
  await waitFor(`${lines} lines of ${JOB} in the log store`, async () => {
    const r = await fetch(`${base}/api/v1/logs/query?${new URLSearchParams({ query: sel, limit: 1000 })}`);
    return (await r.json()).data?.entries?.length >= lines;
  }, 30000);

  const ctx = await launch('en-US');
  try {
    const page = ctx.pages()[0] ?? await ctx.newPage();
    const errors = [];
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    page.on('pageerror', (e) => errors.push(e.message));
    // Volume control that sampled lines away must show, not stay silent.
    await page.route('**/api/v1/logs/sources', async (route) => {
      const res = await route.fetch();
      const body = await res.json();
      for (const s of body.data) if (s.labels.job === JOB) { s.sampled_lines = 1234; s.filtered_lines = 5; }
      await route.fulfill({ response: res, json: body });
    });

    // The Logs tab, next to the overview; the range carries over.
    await page.goto(`${base}/#range=1h`);
    await page.click('a.tab[data-page="logs"]');
    await page.waitForSelector('.logs-page:not([hidden])');
    assert.match(page.url(), /#logs&range=1h/);
    assert.equal(await page.getAttribute('button[data-range="1h"]', 'aria-pressed'), 'true');
    await page.waitForSelector(`select[data-filter="job"] option[value="${JOB}"]`, { state: 'attached', timeout: 10000 });
    await page.selectOption('select[data-filter="job"]', JOB);
    assert.equal(await page.textContent('[data-testid=logql]'), sel);
    // One page: the newest 500 lines, oldest first, newest at the bottom.
    // (The list may still show the unfiltered page for a moment: wait for the job's own.)
    await page.waitForFunction(() => {
      const rows = document.querySelectorAll('.log-list .log-text');
      return rows.length === 500 && rows[rows.length - 1].textContent === 'ERROR step failed: loss is NaN';
    }, null, { timeout: 15000 });
    assert.match(page.url(), new RegExp(`job=${JOB}`));
    const newest = await page.$$eval('.log-list .log-text', (els) => [els[0].textContent, els.at(-1).textContent]);
    assert.deepEqual(newest, [`INFO bulk row ${lines - 500 - 2}`, 'ERROR step failed: loss is NaN']);
    // The rest, older: all these lines share a timestamp (read in one go),
    // which paging by time must not lose or repeat.
    await page.click('[data-testid=load-older]');
    await page.waitForFunction((n) => document.querySelectorAll('.log-list .log-row').length === n, lines, { timeout: 10000 });
    const seqs = await page.$$eval('.log-list .log-row', (rows) => rows.map((r) => r.dataset.seq));
    assert.equal(new Set(seqs).size, lines, 'no line twice');
    assert.ok(await page.isHidden('[data-testid=load-older]'), 'nothing older in the range');
    const bulk = await page.$$eval('.log-list .log-text', (els) => els.map((e) => e.textContent).filter((x) => x.startsWith('INFO bulk')));
    assert.deepEqual(bulk, Array.from({ length: BULK }, (_, i) => `INFO bulk row ${i + 1}`));

    // Hostile text shows as text and runs nothing.
    const texts = await page.$$eval('[data-testid=log-list] .log-text', (els) => els.map((e) => e.textContent));
    assert.ok(texts.includes(EVIL), 'the hostile line is shown verbatim');
    assert.equal(await page.$$eval('[data-testid=log-list] img, [data-testid=log-list] script', (e) => e.length), 0);
    assert.equal(await page.evaluate(() => window.__xss), undefined);
    // Oldest first; the traceback keeps its newlines; levels are coloured.
    assert.equal(texts[0], 'INFO starting step 1');
    const tb = await page.$eval('.log-row[data-level="error"] .log-text', (e) => ({
      text: e.textContent, ws: getComputedStyle(e).whiteSpace, h: e.getBoundingClientRect().height,
      lh: parseFloat(getComputedStyle(e).lineHeight) }));
    assert.match(tb.text, /^Traceback \(most recent call last\):\n {2}File "train.py", line 3, in <module>\n/);
    assert.equal(tb.ws, 'pre-wrap');
    assert.ok(tb.h >= 3.5 * tb.lh, `traceback rendered on its 4 lines (${tb.h}px)`);
    const colours = await page.$$eval('.log-row .log-level', (els) => new Set(els.map((e) => getComputedStyle(e).color)).size);
    assert.ok(colours >= 3, `levels in ${colours} colours`);

    // Histogram and volume control.
    await page.waitForFunction((n) => Number(document.querySelector('[data-testid=log-histogram]')?.dataset.total) >= n, lines);
    const canvas = await page.$eval('.hist-canvas', (c) => ({ w: c.width, h: c.height }));
    assert.ok(canvas.w > 100 && canvas.h > 50, `histogram canvas ${JSON.stringify(canvas)}`);
    await page.waitForFunction(() => /1,234/.test(document.querySelector('[data-testid=log-volume]')?.textContent));
    assert.match(await page.textContent('[data-testid=log-volume]'), /Sources: 1 .*dropped 1,234 lines by sampling and 5 by filters/);
    assert.ok(await page.$('[data-testid=log-volume].warn'));

    // Keyword search with highlights.
    await page.fill('input[name=search]', 'numbered line 1');
    await page.press('input[name=search]', 'Enter');
    await page.waitForFunction(() => document.querySelectorAll('.log-list .log-row').length === 11);
    const marks = await page.$$eval('.log-list .log-row', (rows) => rows.map((r) => [...r.querySelectorAll('mark')].map((m) => m.textContent)));
    assert.ok(marks.every((m) => m.length === 1 && m[0] === 'numbered line 1'), JSON.stringify(marks));
    assert.equal(await page.textContent('[data-testid=logql]'), `${sel} |= "numbered line 1"`);
    // Regex search.
    await page.selectOption('select[name=mode]', 'regex');
    await page.fill('input[name=search]', 'line (7|2[89])$');
    await page.press('input[name=search]', 'Enter');
    await page.waitForFunction(() => document.querySelectorAll('.log-list .log-row').length === 3);
    assert.deepEqual(await page.$$eval('.log-list mark', (m) => m.map((x) => x.textContent)), ['line 7', 'line 28', 'line 29']);

    // Context of a line: its neighbours, the line itself highlighted.
    await page.selectOption('select[name=mode]', 'text');
    await page.fill('input[name=search]', '');
    await page.press('input[name=search]', 'Enter');
    await page.waitForFunction(() => document.querySelectorAll('.log-list .log-row').length === 500);
    await page.click('.log-list .log-row:has-text("WARN numbered line 15")');
    await page.waitForSelector('[data-testid=context-panel]:not([hidden]) .log-row.focus');
    const around = await page.$$eval('[data-testid=context-list] .log-row', (rows) =>
      rows.map((r) => ({ text: r.querySelector('.log-text').textContent, focus: r.classList.contains('focus') })));
    const at = around.findIndex((r) => r.focus);
    assert.equal(around[at].text, 'WARN numbered line 15');
    assert.equal(around[at - 1].text, 'WARN numbered line 14');
    assert.equal(around[at + 1].text, 'WARN numbered line 16');
    assert.equal(around.length, 21, 'ten lines either side');
    await page.screenshot({ path: path.join(ARTIFACTS, 'logs-context-en.png') });
    await page.keyboard.press('Escape');
    assert.ok(await page.$('[data-testid=context-panel][hidden]'));

    // Live tail: a line written now appears at the bottom.
    const late = `late-line-${Date.now()}`;
    appendFileSync(logFile, `${late}\n`);
    await page.waitForFunction((s) => {
      const rows = document.querySelectorAll('.log-list .log-row .log-text');
      return rows.length && rows[rows.length - 1].textContent === s;
    }, late, { timeout: 15000 });
    assert.match(await page.textContent('.results-head .count'), /1 from live tail/);
    // Paused, it stops following.
    await page.click('[data-testid=live-toggle]');
    assert.equal(await page.getAttribute('[data-testid=live-toggle]', 'aria-pressed'), 'false');
    await page.screenshot({ path: path.join(ARTIFACTS, 'logs-en.png'), fullPage: true });

    // Chinese.
    await page.click('button.lang');
    assert.equal(await page.textContent('a.tab[data-page="logs"]'), '日志');
    assert.equal(await page.textContent('a.tab[data-page="overview"]'), '概览');
    assert.match(await page.textContent('.log-filters'), /作业/);
    assert.equal(await page.textContent('button.chip[data-level="error"]'), '错误');
    assert.equal(await page.textContent('[data-testid=live-toggle]'), '继续实时跟踪');
    assert.match(await page.textContent('[data-testid=log-volume]'), /1 个日志源.*采样丢弃 1,234 行/);
    assert.equal(await page.textContent('.log-row[data-level="error"] .log-level'), '错误');
    await page.screenshot({ path: path.join(ARTIFACTS, 'logs-zh.png'), fullPage: true });

    assert.equal(await page.evaluate(() => window.__xss), undefined);
    assert.deepEqual(errors, [], 'no console errors (CSP violations show here)');
  } finally {
    await ctx.close();
  }
});

// The Jobs tab against the mock's fixture (mock_api.mjs jobsAt): five jobs
// in every colour of state, a crashed job with samples/s and an event whose
// message holds markup (GPUs unknown), a killed inference job named like an
// <img> with no metrics, a running job with loss, lr, grad norm, tokens/s,
// eval_loss and accuracy on GPU 1, a stalled one with 14 other series; the
// node's events (an Xid 79 with a hostile meaning, an OOM kill).
test('jobs: list, one job\'s charts on one axis, events, logs link, hostile text, empty states, Chinese', async () => {
  const dist = mkdtempSync(path.join(tmpdir(), 'vigil-web-dist-'));
  userDirs.push(dist);
  const built = spawnSync(process.execPath, [path.join(SOURCE, 'web/build.mjs'), '--outdir', dist], { encoding: 'utf8' });
  assert.equal(built.status, 0, built.stderr);
  const mock = await startMock(0, dist);
  const mbase = `http://127.0.0.1:${mock.address().port}`;
  const ctx = await launch('en-US');
  try {
    const page = ctx.pages()[0] ?? await ctx.newPage();
    const errors = [], dialogs = [];
    // A 404 from /api/v1/events (an older server, routed below) is the
    // browser's console error, not the page's.
    page.on('console', (m) => {
      if (m.type() !== 'error') return;
      if (m.location()?.url?.includes('/api/v1/events') && /404/.test(m.text())) return;
      errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss().catch(() => {}); });
    // The mock has no log API: an empty one, so the Logs tab opens cleanly.
    const ok = (data) => ({ status: 200, contentType: 'application/json', body: JSON.stringify({ status: 'success', data }) });
    await page.route('**/api/v1/logs/**', (route) => {
      const u = new URL(route.request().url());
      if (u.pathname.endsWith('/tail')) return route.fulfill({ status: 200, contentType: 'text/event-stream', body: '' });
      if (u.pathname.endsWith('/query')) return route.fulfill(ok({ streams: {}, entries: [], truncated: false }));
      if (u.pathname.endsWith('/histogram')) return route.fulfill(ok({ start: '0', step: '0', levels: [], buckets: [] }));
      return route.fulfill(ok([]));
    });

    // The tab, between the overview and the logs; the range carries over in
    // links but the picker hides (a job's charts span its life).
    await page.goto(`${mbase}/#range=1h`);
    assert.deepEqual(await page.$$eval('a.tab', (a) => a.map((x) => x.dataset.page)), ['overview', 'jobs', 'logs']);
    await page.click('a.tab[data-page="jobs"]');
    await page.waitForSelector('.jobs-page:not([hidden]) .job-row');
    assert.match(page.url(), /#jobs&range=1h$/);
    assert.ok(await page.isHidden('.controls .segmented'));
    const rows = await page.$$eval('.job-row', (rs) => rs.map((r) => {
      const b = r.querySelector('.badge');
      return { name: r.querySelector('.job-link').textContent, state: b.dataset.state, tone: b.className,
        colour: getComputedStyle(b).color, text: r.textContent };
    }));
    // Active jobs first, then the newest.
    assert.deepEqual(rows.map((r) => r.name), ['pretrain-moe', 'train', 'finetune-llama', EVIL_JOB, 'eval-resnet']);
    assert.deepEqual(rows.map((r) => `${r.state}:${r.tone}`), ['stalled:badge amber', 'running:badge green',
      'crashed:badge red', 'killed:badge grey', 'completed:badge blue']);
    assert.equal(new Set(rows.map((r) => r.colour)).size, 5, 'five states, five colours');
    assert.match(rows[2].text, /crashed.*pytorch · deepspeed.*8.*35m.*CUDA out of memory\. Tried to allocate 2\.00 GiB/);
    assert.match(rows[1].text, /running.*pytorch · torchrun.*4/);
    // The hostile name is text: no element made, nothing run.
    assert.equal(await page.$$eval('img, .jobs-page script, .jobs-page b', (e) => e.length), 0);

    // The node's events in the page's range, newest first: an Xid 79 whose
    // meaning holds markup (shown verbatim), an OOM kill; each with its job.
    await page.waitForSelector('[data-testid=node-events]:not([hidden]) .nev-row');
    assert.match(await page.textContent('[data-testid=node-events] .jobs-head'), /Node events\s*last 1h\s*2/);
    const nev = await page.$$eval('[data-testid=node-events-table] tbody tr', (rs) => rs.map((r) => ({
      gpu: r.children[1].textContent, kind: r.children[2].textContent, text: r.children[3].textContent,
      meaning: r.querySelector('.nev-meaning')?.textContent, job: r.querySelector('.nev-job a')?.textContent,
      href: r.querySelector('.nev-job a')?.getAttribute('href') })));
    assert.deepEqual(nev.map((e) => `${e.gpu}|${e.kind}|${e.job}`), ['GPU 1|GPU Xid error 79|train', '–|Killed: out of host memory|finetune-llama']);
    assert.equal(nev[0].meaning, EVIL_XID, 'the meaning is shown verbatim');
    assert.match(nev[0].text, /Action: Drain the node and reset the GPU; check power and cooling\.Job: train$/);
    assert.match(nev[0].href, /^#jobs&range=1h&id=4242-\d+$/);
    assert.equal(nev[1].text, 'Out of memory: Killed process 7100 (python)Job: finetune-llama');
    assert.equal(await page.$$eval('img, .jobs-page script, .jobs-page b', (e) => e.length), 0);
    assert.equal(await page.evaluate(() => window.__xss), undefined);
    await page.screenshot({ path: path.join(ARTIFACTS, 'jobs-en.png'), fullPage: true });
    // Its own range buttons set the page's range: 15 m has the Xid only, 5 m nothing.
    await page.click('[data-testid=node-events] button[data-range="15m"]');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=node-events-table] tbody tr').length === 1);
    assert.match(page.url(), /#jobs&range=15m$/);
    assert.equal(await page.getAttribute('[data-testid=node-events] button[data-range="15m"]', 'aria-pressed'), 'true');
    await page.click('[data-testid=node-events] button[data-range="5m"]');
    await page.waitForSelector('[data-testid=node-events-empty]:not([hidden])');
    assert.equal(await page.textContent('[data-testid=node-events-empty]'), 'No node events (GPU Xid errors, OOM kills) in this range.');
    assert.ok(await page.isHidden('[data-testid=node-events-table]'));
    await page.goto(`${mbase}/#jobs&range=1h`);
    await page.waitForSelector('[data-testid=node-events]:not([hidden]) .nev-row');

    // A crashed job: header, charts on one axis, events under them.
    await page.click('.job-row[data-id^="7001-"] .job-link');
    await page.waitForSelector('[data-testid=job-detail]:not([hidden])');
    assert.match(page.url(), /#jobs&range=1h&id=7001-\d+$/);
    await page.waitForFunction(() => ['loss', 'lr', 'samples', 'gpu-util', 'gpu-mem'].every((k) =>
      Number(document.querySelector(`.job-chart[data-chart="${k}"] .chart`)?.dataset.points) >= 30), null, { timeout: 10000 });
    const charts = await page.$$eval('.job-chart', (cs) => cs.map((c) => ({ k: c.dataset.chart, shown: !c.hidden,
      w: c.querySelector('.uplot')?.getBoundingClientRect().width, series: c.querySelectorAll('.lg-item').length })));
    assert.deepEqual(charts.filter((c) => c.shown).map((c) => c.k), ['loss', 'lr', 'samples', 'gpu-util', 'gpu-mem']);
    assert.equal(new Set(charts.filter((c) => c.shown).map((c) => c.w)).size, 1, 'one width: one time axis');
    assert.deepEqual(charts.filter((c) => c.k.startsWith('gpu')).map((c) => c.series), [8, 8]);
    assert.equal(await page.textContent('[data-testid=job-name]'), 'finetune-llama');
    assert.equal(await page.textContent('[data-testid=job-reason]'), 'CUDA out of memory. Tried to allocate 2.00 GiB');
    const facts = await page.textContent('.job-facts');
    for (const f of ['pytorch · deepspeed', 'mock-node', 'c0ffee12ab34', 'code 1', 'Ranks (world size)8']) assert.ok(facts.includes(f), `${f} in ${facts}`);
    assert.match(await page.textContent('.job-axis'), /to its end/);
    assert.equal(await page.textContent('.job-gpu-title'), 'GPUs of node mock-node');
    // Its GPUs are not known (gpus: []): all of the node's, said so.
    assert.equal(await page.textContent('.job-gpu-head .hint:not([hidden])'),
      'All of the node\'s GPUs: the job\'s own GPUs are not known (no NVML process list).');
    assert.ok(facts.includes('GPUsnot known'), facts);
    assert.equal(await page.$$eval('.job-chart[data-chart="extra"]', (c) => c.length), 0);
    assert.ok(await page.isHidden('[data-testid=node-events]'), 'node events are on the list');
    await page.click('.job-procs summary');
    const procs = await page.$$eval('[data-testid=job-processes] tbody tr', (rs) => rs.map((r) => r.children[1].textContent));
    assert.deepEqual(procs, ['launcher', ...Array(8).fill('rank'), 'helper']);
    const events = await page.$$eval('[data-testid=job-events] tbody tr', (rs) => rs.map((r) => ({
      kind: r.querySelector('.ev-kind').textContent, msg: r.querySelector('.ev-msg').textContent, since: r.children[1].textContent })));
    assert.deepEqual(events.map((e) => e.kind), ['Loss scale overflow', 'CUDA out of memory']);
    assert.equal(events[0].since, '+10m');
    assert.equal(events[0].msg, 'rank=0 attempted_loss_scale=65536 loss_scale=32768');
    assert.equal(events[1].msg, EVIL_EVENT, 'the event message is shown verbatim');
    assert.equal(await page.$$eval('.jobs-page script, .jobs-page img, img', (e) => e.length), 0);
    assert.equal(await page.evaluate(() => window.__xss), undefined);
    // The markers sit where the events are on the charts' axis (the job ran
    // 2100 s; the overflow came at 600 s, the OOM 10 s before the end).
    const marks = await page.$$eval('[data-testid=job-timeline] .ev-marker', (ms) => ms.map((m) => parseFloat(m.style.left)));
    assert.equal(marks.length, 2);
    assert.ok(marks[0] > 25 && marks[0] < 32 && marks[1] > 97 && marks[1] <= 100, `markers at ${marks}%`);
    await page.click('[data-testid=job-timeline] .ev-marker >> nth=0');
    assert.ok(await page.$('[data-testid=job-events] tr.focus[data-i="0"]'));
    await page.screenshot({ path: path.join(ARTIFACTS, 'jobs-detail-en.png'), fullPage: true });

    // Its logs: the Logs tab on the job's query, over a range reaching its start.
    assert.equal(await page.getAttribute('[data-testid=job-logs]', 'href'), '#logs&range=6h&job=finetune-llama');
    await page.click('[data-testid=job-logs]');
    await page.waitForSelector('.logs-page:not([hidden])');
    assert.equal(await page.$eval('select[data-filter="job"]', (s) => s.value), 'finetune-llama');
    assert.equal(await page.textContent('[data-testid=logql]'), '{job="finetune-llama"}');
    assert.equal(await page.getAttribute('button[data-range="6h"]', 'aria-pressed'), 'true');
    await page.goBack();
    await page.waitForSelector('[data-testid=job-detail]:not([hidden])');

    // The hostile job: text only, and no metrics said plainly.
    await page.goto(`${mbase}/#jobs&range=1h`);
    await page.click('.job-row[data-id^="5150-"]');
    await page.waitForSelector('[data-testid=job-no-metrics]:not([hidden])');
    assert.equal(await page.textContent('[data-testid=job-name]'), EVIL_JOB);
    assert.equal(await page.textContent('[data-testid=job-no-metrics]'),
      'No metrics read from this job\'s output yet: run vigil inspect-log on its log to see why.');
    assert.equal(await page.textContent('[data-testid=job-no-metrics] code'), 'vigil inspect-log');
    assert.deepEqual(await page.$$eval('.job-chart:not([hidden])', (cs) => cs.map((c) => c.dataset.chart)), ['gpu-util', 'gpu-mem']);
    assert.ok(await page.isHidden('[data-testid=job-timeline]'));
    assert.match(await page.textContent('.job-facts'), /SIGTERM/);
    assert.equal(await page.$$eval('img, .jobs-page b, .jobs-page script', (e) => e.length), 0);

    // A running job: loss, lr, grad norm, tokens/s, then its other training
    // series (eval_loss, accuracy; not training_step), up to now; only its
    // GPU (1) charted.
    await page.goto(`${mbase}/#jobs&range=1h`);
    await page.click('.job-row[data-id^="4242-"]');
    await page.waitForFunction(() => ['tokens', 'extra'].every((k) => [...document.querySelectorAll(`.job-chart[data-chart="${k}"] .chart`)]
      .every((c) => Number(c.dataset.points) >= 30)) && document.querySelectorAll('.job-chart[data-chart="extra"]').length === 2);
    assert.deepEqual(await page.$$eval('.job-chart:not([hidden])', (cs) => cs.map((c) => c.dataset.chart)),
      ['loss', 'lr', 'grad', 'tokens', 'extra', 'extra', 'gpu-util', 'gpu-mem']);
    assert.deepEqual(await page.$$eval('.job-chart[data-chart="extra"]', (cs) => cs.map((c) =>
      `${c.dataset.name}:${c.querySelector('.chart-title').textContent}:${c.querySelector('.lg-name').textContent}`)),
    ['training_accuracy:accuracy:accuracy', 'training_eval_loss:eval_loss:eval_loss']);
    assert.equal(new Set(await page.$$eval('.job-chart:not([hidden]) .uplot', (u) => u.map((x) => x.getBoundingClientRect().width))).size, 1);
    assert.deepEqual(await page.$$eval('.job-chart[data-chart^="gpu"] .lg-name', (n) => n.map((x) => x.textContent)), ['GPU 1', 'GPU 1']);
    assert.equal(await page.textContent('.job-gpu-title'), 'The job\'s GPUs on node mock-node');
    assert.ok(await page.isHidden('.job-gpu-head .hint'));
    assert.ok((await page.textContent('.job-facts')).includes('GPUs1 (12.3 GiB)'));
    assert.ok(await page.isHidden('[data-testid=job-extra-more]'));
    assert.match(await page.textContent('.job-axis'), /to now/);
    assert.match(await page.textContent('.job-facts'), /still running/);

    // Chinese.
    await page.click('button.lang');
    assert.equal(await page.textContent('a.tab[data-page="jobs"]'), '作业');
    assert.equal(await page.textContent('.job-title .badge'), '运行中');
    assert.match(await page.textContent('.job-charts'), /损失.*学习率.*梯度范数.*吞吐量，tokens\/s.*accuracy.*eval_loss.*作业在节点 mock-node 上使用的 GPU.*GPU 利用率，%/);
    assert.equal(await page.textContent('[data-testid=job-logs]'), '查看日志');
    assert.match(await page.textContent('.job-facts'), /所用 GPU1 \(12\.3 GiB\).*开始时间.*仍在运行/);
    assert.equal(await page.textContent('.job-gpu-title'), '作业在节点 mock-node 上使用的 GPU');
    assert.equal(await page.textContent('.job-chart[data-chart="extra"] .chart-title'), 'accuracy');
    await page.screenshot({ path: path.join(ARTIFACTS, 'jobs-detail-zh.png'), fullPage: true });
    await page.click('.job-nav .back');
    await page.waitForSelector('[data-testid=jobs-table]:not([hidden]) .job-row');
    assert.match(await page.textContent('[data-testid=jobs-table] thead'), /作业.*状态.*框架 \/ 启动器.*进程数.*开始时间.*时长.*原因/);
    assert.deepEqual(await page.$$eval('.job-row .badge', (b) => b.map((x) => x.textContent)), ['停滞', '运行中', '已崩溃', '被终止', '已完成']);
    // The node's events in Chinese: meaning and action from details.*_zh,
    // markup in them as text.
    await page.waitForSelector('[data-testid=node-events]:not([hidden]) .nev-row');
    assert.match(await page.textContent('[data-testid=node-events] .jobs-head'), /节点事件\s*最近 1 小时\s*2/);
    assert.match(await page.textContent('[data-testid=node-events-table] thead'), /时间.*GPU.*事件.*含义与建议操作/);
    const nevZh = await page.$$eval('[data-testid=node-events-table] tbody tr', (rs) => rs.map((r) => [...r.children].map((c) => c.textContent)));
    assert.deepEqual(nevZh[0].slice(1), ['GPU 1', 'GPU Xid 错误 79', 'GPU 已从总线上掉线。<b>粗体</b>建议：排空节点并重置 GPU；检查供电和散热。作业：train']);
    assert.equal(nevZh[1][2], '主机内存不足被终止');
    assert.equal(await page.$$eval('img, .jobs-page b, .jobs-page script', (e) => e.length), 0);
    await page.screenshot({ path: path.join(ARTIFACTS, 'jobs-zh.png'), fullPage: true });
    // A job with many other series: 12 charts, and how many more.
    await page.click('.job-row[data-id^="6001-"] .job-link');
    await page.waitForFunction(() => document.querySelectorAll('.job-chart[data-chart="extra"]').length === 12);
    assert.deepEqual(await page.$$eval('.job-chart[data-chart="extra"] .chart-title', (c) => c.map((x) => x.textContent)),
      Array.from({ length: 12 }, (_, i) => `m${String(i).padStart(2, '0')}`));
    assert.equal(await page.textContent('[data-testid=job-extra-more]'), '…另有 2 个训练序列未绘制。');
    await page.click('button.lang');
    assert.equal(await page.textContent('[data-testid=job-extra-more]'), '…and 2 more training series, not charted.');
    await page.click('button.lang');
    await page.click('.job-nav .back');
    await page.waitForSelector('[data-testid=jobs-table]:not([hidden]) .job-row');

    // No job yet: what to do about it, in both languages.
    await page.route('**/api/v1/jobs', (route) => route.fulfill(ok({ jobs: [] })));
    await page.reload();
    await page.waitForSelector('[data-testid=jobs-empty]:not([hidden])');
    assert.match(await page.textContent('[data-testid=jobs-empty]'), /此节点上没有发现训练或推理作业.*vigil run -- python train\.py/);
    await page.click('button.lang');
    assert.equal(await page.textContent('[data-testid=jobs-empty]'),
      'No training or inference job found on this node. Start one, or run it with vigil run -- python train.py.');
    assert.equal(await page.textContent('[data-testid=jobs-empty] code'), 'vigil run -- python train.py');
    assert.equal(await page.$$eval('.job-row', (r) => r.length), 0);
    // No node events in the range, then a server without the endpoint: the
    // panel says so, then hides.
    await page.route('**/api/v1/events?*', (route) => route.fulfill(ok({ events: [] })));
    await page.reload();
    await page.waitForSelector('[data-testid=node-events-empty]:not([hidden])');
    assert.equal(await page.textContent('[data-testid=node-events-empty]'), 'No node events (GPU Xid errors, OOM kills) in this range.');
    await page.unroute('**/api/v1/events?*');
    await page.route('**/api/v1/events?*', (route) => route.fulfill({ status: 404, contentType: 'application/json',
      body: JSON.stringify({ status: 'error', errorType: 'not_found', error: 'not found' }) }));
    await page.reload();
    await page.waitForSelector('[data-testid=jobs-empty]:not([hidden])');
    await sleep(500);
    assert.ok(await page.isHidden('[data-testid=node-events]'));
    assert.ok(await page.isHidden('.jobs-page .note'), 'no error note for an older server');

    // The overview still works next to it.
    await page.click('a.tab[data-page="overview"]');
    await page.waitForFunction(() => document.querySelectorAll('article.gpu').length === 8);
    assert.ok(await page.isHidden('.jobs-page'));
    assert.ok(await page.isVisible('.controls .segmented'));

    assert.deepEqual(dialogs, [], 'no alert ran');
    assert.equal(await page.evaluate(() => window.__xss), undefined);
    assert.deepEqual(errors, [], 'no console errors (CSP violations show here)');
  } finally {
    await ctx.close();
    await new Promise((r) => mock.close(r));
  }
});
