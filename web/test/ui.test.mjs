// Browser test of the built-in UI: the real vigil binary on the fake NVML
// (8 x H100, GPU 3 hot), driven in Debian's chromium by playwright-core.
// For the log explorer a child shell writes hostile, multiline and numbered
// lines to a file through its stdout, which vigil's discovery finds.
//
// Env: VIGIL_BIN (vigil binary), VIGIL_FAKE_NVML (libnvidia-ml-fake.so),
// VIGIL_SOURCE_DIR (repo root, for the scenario), optional VIGIL_CHROMIUM
// (default /usr/bin/chromium) and VIGIL_WEB_ARTIFACTS (screenshots; default
// a temp dir). Run: node --test web/test/ui.test.mjs
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const env = process.env;
const SOURCE = env.VIGIL_SOURCE_DIR ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CHROMIUM = env.VIGIL_CHROMIUM ?? '/usr/bin/chromium';
const ARTIFACTS = env.VIGIL_WEB_ARTIFACTS ?? path.join(tmpdir(), 'vigil-web-artifacts');
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
  '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const GPUS = 8;

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
  for (const k of ['VIGIL_BIN', 'VIGIL_FAKE_NVML']) assert.ok(env[k], `${k} must be set`);
  mkdirSync(ARTIFACTS, { recursive: true });
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

test('serves the UI with a strict CSP and cacheable assets', async () => {
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

test('overview: 8 GPU cards with live charts, range picker, Chinese, screenshots', async () => {
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

test('follows the browser language and renders untrusted strings as text', async () => {
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

test('logs: filters, hostile text, search highlights, context, histogram, volume, live tail, Chinese', async () => {
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
