// Browser test of the built-in UI: the real vigil binary on the fake NVML
// (8 x H100, GPU 3 hot), driven in Debian's chromium by playwright-core.
// For the log explorer a child shell writes hostile, multiline and numbered
// lines to a file through its stdout, which vigil's discovery finds. The Jobs
// and Alerts tabs are tested against mock_api.mjs (its jobs, alerts and
// silences fixtures) with the bundle of web/src built for the test, so they
// run without vigil too.
//
// Env: VIGIL_BIN (vigil binary), VIGIL_FAKE_NVML (libnvidia-ml-fake.so),
// VIGIL_SOURCE_DIR (repo root, for the scenario), optional VIGIL_CHROMIUM
// (default /usr/bin/chromium) and VIGIL_WEB_ARTIFACTS (screenshots; default
// a temp dir). Without VIGIL_BIN and VIGIL_FAKE_NVML only the Jobs and
// Alerts tests run (the others are skipped, saying so). Run: node --test web/test/ui.test.mjs
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import {
  EVIL_ANSWER, EVIL_EVENT, EVIL_NAME, EVIL_JOB, EVIL_MOUNT, EVIL_SIL_AUTHOR, EVIL_SIL_COMMENT, EVIL_SIL_VALUE, EVIL_SUMMARY, EVIL_SUMMARY_ZH, EVIL_XID, MOCK_LOG_EXCERPT, startMock,
} from './mock_api.mjs';

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

// The bundle built from web/src into a temporary directory, served by the
// mock API (the tabs tested without vigil).
async function startMockUi() {
  const dist = mkdtempSync(path.join(tmpdir(), 'vigil-web-dist-'));
  userDirs.push(dist);
  const built = spawnSync(process.execPath, [path.join(SOURCE, 'web/build.mjs'), '--outdir', dist], { encoding: 'utf8' });
  assert.equal(built.status, 0, built.stderr);
  const mock = await startMock(0, dist);
  return { mock, mbase: `http://127.0.0.1:${mock.address().port}` };
}

// The page's console errors and errors (a CSP violation shows there) and
// the dialogs it opened (dismissed); `asked(message)`: a console error the
// test asks for (a refusal of the server), not the page's.
function watchPage(page, asked) {
  const errors = [], dialogs = [];
  page.on('console', (m) => { if (m.type() === 'error' && !asked(m)) errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss().catch(() => {}); });
  return { errors, dialogs };
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
  const { mock, mbase } = await startMockUi();
  const ctx = await launch('en-US');
  try {
    const page = ctx.pages()[0] ?? await ctx.newPage();
    // A 404 from /api/v1/events (an older server, routed below) is the
    // browser's console error, not the page's.
    const { errors, dialogs } = watchPage(page, (m) => m.location()?.url?.includes('/api/v1/events') && /404/.test(m.text()));
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
    assert.deepEqual(await page.$$eval('a.tab', (a) => a.map((x) => x.dataset.page)), ['overview', 'jobs', 'logs', 'alerts', 'inbox', 'actions', 'settings']);
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
    // No GPU of its own known: no efficiency report, said so.
    await page.waitForSelector('[data-testid=job-efficiency]:not([hidden]) [data-testid=job-eff-empty]:not([hidden])');
    assert.match(await page.textContent('[data-testid=job-eff-empty]'), /^No efficiency report/);
    assert.ok(await page.isHidden('[data-testid=job-eff-bar]'));
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
    // Its efficiency: the bar's segments (no empty one), the legend with
    // every class, the facts; a running job's report is "so far".
    await page.waitForSelector('[data-testid=job-efficiency]:not([hidden]) .eff-seg');
    assert.deepEqual(await page.$$eval('[data-testid=job-eff-bar] .eff-seg', (ss) => ss.map((x) => `${x.dataset.class} ${x.style.width}`)),
      ['gpu_busy 62%', 'input_bound 30%', 'idle 8%']);
    assert.deepEqual(await page.$$eval('[data-testid=job-eff-legend] li', (ls) => ls.map((l) => `${l.querySelector('.eff-label').textContent} ${l.querySelector('.eff-pct').textContent}`)),
      ['GPU busy 62%', 'Input-bound 30%', 'Communication 0%', 'Idle 8%']);
    const eff = await page.textContent('[data-testid=job-eff-facts]');
    assert.match(eff, /GPU-hours0\.5\d/); // 1 GPU for the 30 min it has run
    for (const f of ['SM active (mean)41%', 'Tensor pipe active (mean)not reported by these GPUs', 'of which idle']) {
      assert.ok(eff.includes(f), `${f} in ${eff}`);
    }
    assert.match(await page.textContent('[data-testid=job-efficiency] .jobs-head'), /Efficiency\s*so far/);

    // Chinese.
    await page.click('button.lang');
    assert.equal(await page.textContent('a.tab[data-page="jobs"]'), '作业');
    assert.equal(await page.textContent('.job-title .badge'), '运行中');
    assert.match(await page.textContent('.job-charts'), /损失.*学习率.*梯度范数.*吞吐量，tokens\/s.*accuracy.*eval_loss.*作业在节点 mock-node 上使用的 GPU.*GPU 利用率，%/);
    assert.equal(await page.textContent('[data-testid=job-logs]'), '查看日志');
    assert.match(await page.textContent('.job-facts'), /所用 GPU1 \(12\.3 GiB\).*开始时间.*仍在运行/);
    assert.equal(await page.textContent('.job-gpu-title'), '作业在节点 mock-node 上使用的 GPU');
    assert.equal(await page.textContent('.job-chart[data-chart="extra"] .chart-title'), 'accuracy');
    assert.deepEqual(await page.$$eval('[data-testid=job-eff-legend] .eff-label', (ls) => ls.map((l) => l.textContent)),
      ['GPU 忙碌', '等待输入', '通信', '空闲']);
    assert.match(await page.textContent('[data-testid=job-eff-facts]'), /GPU 小时0\.5\d.*SM 活跃度（平均）41%/);
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

// The Alerts tab against the mock's fixture (mock_api.mjs alertsAt, rulesAt):
// firing, a job crash (critical), a hot GPU 3, a full disk whose mountpoint
// and summaries hold markup, an idle GPU 1 muted by another alert; pending,
// GPU 5's memory and the host's; resolved, an Xid on GPU 1 and a node down.
test('alerts: sections, muted, links, rules, header badge, hostile text, empty states, Chinese', async () => {
  const { mock, mbase } = await startMockUi();
  const ctx = await launch('en-US');
  try {
    const page = ctx.pages()[0] ?? await ctx.newPage();
    // A 404 from the alerts API (an older server, routed below) is the
    // browser's console error, not the page's.
    const { errors, dialogs } = watchPage(page, (m) => m.location()?.url?.includes('/api/v1/alerts/records') && /404/.test(m.text()));
    const ok = (data) => ({ status: 200, contentType: 'application/json', body: JSON.stringify({ status: 'success', data }) });
    await page.route('**/api/v1/logs/**', (route) => {
      const u = new URL(route.request().url());
      if (u.pathname.endsWith('/tail')) return route.fulfill({ status: 200, contentType: 'text/event-stream', body: '' });
      if (u.pathname.endsWith('/query')) return route.fulfill(ok({ streams: {}, entries: [], truncated: false }));
      if (u.pathname.endsWith('/histogram')) return route.fulfill(ok({ start: '0', step: '0', levels: [], buckets: [] }));
      return route.fulfill(ok([]));
    });
    const records = (u) => u.pathname === '/api/v1/alerts/records';

    // The header's count on the overview: 3 firing (the muted one left
    // out), one critical: red, and said in words on hover.
    await page.goto(`${mbase}/#range=1h`);
    assert.deepEqual(await page.$$eval('a.tab', (a) => a.map((x) => x.dataset.page)), ['overview', 'jobs', 'logs', 'alerts', 'inbox', 'actions', 'settings']);
    await page.waitForSelector('a.tab[data-page="alerts"] [data-testid=alerts-badge]:not([hidden])');
    const badge = await page.$eval('[data-testid=alerts-badge]', (b) => ({ text: b.textContent, cls: b.className,
      title: b.title, bg: getComputedStyle(b).backgroundColor }));
    assert.deepEqual([badge.text, badge.cls, badge.title], ['3', 'tab-badge crit', '3 alerts firing, 1 critical']);
    assert.equal(await page.textContent('a.tab[data-page="alerts"]'), 'Alerts3');

    // The tab: firing, pending, history.
    await page.click('a.tab[data-page="alerts"]');
    await page.waitForSelector('.alerts-page:not([hidden]) [data-testid=alerts-firing] .alert-row');
    assert.match(page.url(), /#alerts&range=1h$/);
    assert.ok(await page.isHidden('.controls .segmented'), 'no range picker');
    const rowsOf = (name) => page.$$eval(`[data-testid=alerts-${name}] tbody tr`, (rs) => rs.map((r) => ({
      id: r.dataset.id, cls: r.className, sev: r.querySelector('.badge').textContent,
      colour: getComputedStyle(r.querySelector('.badge')).color, title: r.querySelector('.alert-title').textContent,
      rule: r.querySelector('.alert-rule')?.textContent, muted: !!r.querySelector('[data-testid=alert-muted]'),
      where: r.querySelector('.alert-where').textContent, summary: r.querySelector('.alert-summary').textContent,
      value: r.querySelector('.alert-value').textContent, since: r.querySelector('.alert-since')?.textContent,
      resolved: r.querySelector('.alert-resolved')?.textContent,
      links: Object.fromEntries([...r.querySelectorAll('a[data-link]')].map((a) => [a.dataset.link, a.getAttribute('href')])),
      linkText: [...r.querySelectorAll('a[data-link]')].map((a) => a.textContent) })));
    const firing = await rowsOf('firing');
    // Not muted first, the most severe, the newest.
    assert.deepEqual(firing.map((r) => r.id), ['a1crash', 'a3disk', 'a2hot', 'a4idle']);
    assert.deepEqual(firing.map((r) => `${r.sev}:${r.cls}`), ['critical:alert-row red', 'warning:alert-row amber',
      'warning:alert-row amber', 'warning:alert-row amber']);
    assert.notEqual(firing[0].colour, firing[1].colour, 'critical and warning in different colours');
    assert.deepEqual(firing.map((r) => r.title), ['Job crashed', 'Disk nearly full', 'GPU temperature high', 'GPU allocated but idlemuted']);
    assert.deepEqual(firing.map((r) => r.rule), ['job_crashed', 'disk_near_full', 'gpu_temperature_high', 'gpu_idle_allocated']);
    assert.deepEqual(firing.map((r) => r.muted), [false, false, false, true]);
    assert.equal(await page.getAttribute('[data-id=a4idle] [data-testid=alert-muted]', 'title'),
      'Muted by another alert (inhibited): no notification is sent for it.');
    assert.deepEqual(firing.map((r) => r.where), ['mock-node · finetune-llama', `mock-node · ${EVIL_MOUNT}`, 'mock-node · GPU 3', 'mock-node · GPU 1']);
    assert.equal(firing[1].summary, EVIL_SUMMARY, 'the summary is shown verbatim');
    assert.match(firing[2].summary, /^GPU 3 on mock-node at 87 °C/);
    assert.deepEqual(firing.map((r) => r.value), ['–', '93.5% > 90%', '87 °C ≥ 85 °C', '0% < 1%']);
    assert.deepEqual(firing.map((r) => r.since), ['25m ago', '3m ago', '12m ago', '15m ago']);
    // Links: the hot GPU's charts over the range reaching its start (12 m: 15 m),
    // the crashed job's page and logs (25 m: 1 h); nothing for the disk.
    assert.deepEqual(firing[2].links, { gpu: '#range=15m&gpu=3' });
    assert.deepEqual(firing[2].linkText, ['GPU charts']);
    assert.match(firing[0].links.job, /^#jobs&range=1h&id=7001-\d+$/);
    assert.match(firing[0].links.logs, /^#logs&range=1h&node=mock-node&run=7001-\d+$/);
    assert.deepEqual(firing[0].linkText, ['Job', 'Logs']);
    // The crash quotes its log, folded, as text.
    assert.equal(await page.textContent('[data-id=a1crash] [data-testid=alert-log] summary'), 'Log (3 lines)');
    assert.equal(await page.textContent('[data-id=a1crash] [data-testid=alert-log] pre'), MOCK_LOG_EXCERPT.join('\n'));
    assert.equal(await page.$$eval('[data-id=a1crash] [data-testid=alert-log] b', (b) => b.length), 0, 'log text is never markup');
    assert.equal(await page.$$eval('[data-id=a2hot] [data-testid=alert-log]', (l) => l.length), 0, 'no log, no fold');
    assert.deepEqual(firing[1].links, {});
    const pending = await rowsOf('pending');
    assert.deepEqual(pending.map((r) => `${r.id}|${r.title}|${r.value}`), ['b1mem|GPU memory nearly full|91.2% > 90%',
      'b2host|Host memory nearly full|92% > 90%']);
    const history = await rowsOf('history');
    assert.deepEqual(history.map((r) => `${r.id}|${r.sev}|${r.where}|${r.value}`), ['c1xid|critical|mock-node · GPU 1 · train|1 > 0',
      'c2down|critical|gpu-7|45 s > 30 s']);
    assert.match(history[0].resolved, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\dlasted 3m$/);
    assert.match(history[1].resolved, /lasted 5m$/);
    assert.equal(history[0].since, undefined);
    assert.deepEqual(Object.keys(history[0].links), ['gpu', 'job', 'logs']);
    assert.match(await page.textContent('[data-section=firing] .jobs-head'), /^Firing4/);
    assert.match(await page.textContent('[data-section=history] .jobs-head'), /^History2Resolved alerts, newest first\.$/);
    // Hostile text: no element made, nothing run.
    assert.equal(await page.$$eval('.alerts-page img, .alerts-page script, .alerts-page b, img', (e) => e.length), 0);
    assert.equal(await page.evaluate(() => window.__xss), undefined);

    // The rules, folded until opened: every level, thresholds with units,
    // relative ones from the GPU's slowdown temperature, health and errors.
    assert.ok(await page.isHidden('[data-testid=alerts-rules-table]'));
    assert.match(await page.textContent('[data-testid=alerts-rules] summary'), /^Rules6/);
    await page.click('[data-testid=alerts-rules] summary');
    await page.waitForSelector('[data-testid=alerts-rules-table]:not([hidden]) .rule-row');
    const rules = await page.$$eval('[data-testid=alerts-rules-table] tbody tr', (rs) => rs.map((r) => [...r.children].map((c) => c.textContent)));
    assert.deepEqual(rules.map((r) => r.slice(0, 3)), [
      ['GPU under-usedgpu_underutilized', 'warning', 'no (disabled)'],
      ['GPU temperature highgpu_temperature_high', 'warning', 'yes'],
      ['GPU temperature highgpu_temperature_high', 'critical', 'yes'],
      ['GPU Xid errorgpu_xid', 'critical', 'yes'],
      ['Disk nearly fulldisk_near_full', 'warning', 'yes'],
      ['Job crashedjob_crashed', 'critical', 'yes']]);
    // Each GPU's effective threshold and the overrides, under the condition.
    assert.deepEqual(await page.$$eval('[data-rule=gpu_temperature_high][data-severity=critical] .rule-sub', (e) => e.map((x) => x.textContent)), [
      'override (gpu_model *A100*): 85 °C',
      'node gpu-01 gpu 0 (<img src=x onerror="window.__xss=11">): 92 °C',
      'node gpu-01 gpu 1 (NVIDIA A100-SXM4-80GB): 85 °C']);
    rules[2][5] = rules[2][5].slice(0, '≥ slowdown'.length);
    assert.deepEqual(rules.map((r) => r.slice(4, 9)), [
      ['15m', '< 80%', '85%', 'inactive', 'ok'],
      ['1m', '≥ slowdown − 5 °C', 'slowdown − 8 °C', 'firing', 'ok'],
      ['30s', '≥ slowdown', 'slowdown − 3 °C', 'inactive', 'ok'],
      ['0skeeps firing 15m after', '> 0', '0', 'inactive', 'ok'],
      ['5m', '> 90%', '88%', 'firing', 'errorrule disk_near_full: <b>bad</b> <img src=x onerror="window.__xss=10">'],
      ['0s', '–', '–', 'firing', 'ok']]);
    assert.equal(rules[1][3], 'DCGM_FI_DEV_GPU_TEMP >= on(node, gpu) (vigil_gpu_temp_slowdown_celsius > 0) - 5');
    assert.equal(await page.$$eval('.alerts-page img, .alerts-page b, img', (e) => e.length), 0);
    await page.screenshot({ path: path.join(ARTIFACTS, 'alerts-en.png'), fullPage: true });

    // The links: the GPU's card on the overview, brought into view and
    // outlined; the job's page; its logs, on its run.
    await page.click('[data-id=a2hot] a[data-link=gpu]');
    await page.waitForSelector('.overview:not([hidden]) article.gpu[data-gpu="3"].focus');
    assert.match(page.url(), /#range=15m&gpu=3$/);
    assert.deepEqual(await page.$$eval('article.gpu.focus', (e) => e.map((x) => x.dataset.gpu)), ['3']);
    assert.equal(await page.getAttribute('button[data-range="15m"]', 'aria-pressed'), 'true');
    assert.ok(await page.$eval('article.gpu[data-gpu="3"]', (e) => {
      const r = e.getBoundingClientRect();
      return r.top >= 0 && r.bottom <= innerHeight;
    }), 'GPU 3\'s card is in view');
    await page.goBack();
    await page.waitForSelector('.alerts-page:not([hidden]) [data-id=a1crash]');
    assert.equal(await page.$$eval('article.gpu.focus', (e) => e.length), 0, 'the outline goes with the link');
    await page.click('[data-id=a1crash] a[data-link=job]');
    await page.waitForSelector('[data-testid=job-detail]:not([hidden])');
    assert.equal(await page.textContent('[data-testid=job-name]'), 'finetune-llama');
    await page.goBack();
    await page.waitForSelector('.alerts-page:not([hidden]) [data-id=a1crash]');
    await page.click('[data-id=a1crash] a[data-link=logs]');
    await page.waitForSelector('.logs-page:not([hidden])');
    assert.match(await page.textContent('[data-testid=logql]'), /^\{node="mock-node", run="7001-\d+"\}$/);
    assert.equal(await page.getAttribute('button[data-range="1h"]', 'aria-pressed'), 'true');
    // On another page the count is polled (every 5 s): one warning now.
    await page.route(records, (route) => route.fulfill({ status: 200, contentType: 'application/json',
      body: JSON.stringify([{ id: 'w', rule: 'gpu_xid', state: 'firing', severity: 'warning', labels: {}, started_at: '2026-12-02T02:05:39Z' },
        { id: 'm', rule: 'gpu_xid', state: 'firing', severity: 'critical', inhibited: true, labels: {} }]) }));
    await page.waitForFunction(() => document.querySelector('[data-testid=alerts-badge]')?.textContent === '1', null, { timeout: 12000 });
    assert.equal(await page.getAttribute('[data-testid=alerts-badge]', 'class'), 'tab-badge warn');
    assert.equal(await page.getAttribute('[data-testid=alerts-badge]', 'title'), '1 alert firing');
    await page.unroute(records);

    // Chinese.
    await page.goto(`${mbase}/#alerts&range=1h`);
    await page.waitForFunction(() => document.querySelector('[data-testid=alerts-badge]')?.textContent === '3');
    await page.waitForSelector('[data-testid=alerts-firing] .alert-row');
    await page.click('button.lang');
    assert.equal(await page.textContent('a.tab[data-page="alerts"]'), '告警3');
    await page.waitForFunction(() => document.querySelector('[data-testid=alerts-badge]')?.title === '3 条告警正在触发，其中 1 条严重');
    const zh = await rowsOf('firing');
    assert.deepEqual(zh.map((r) => r.sev), ['严重', '警告', '警告', '警告']);
    assert.deepEqual(zh.map((r) => r.title), ['作业崩溃', '磁盘将满', 'GPU 温度过高', 'GPU 已占用但空闲已抑制']);
    assert.equal(zh[1].summary, EVIL_SUMMARY_ZH, 'the Chinese summary, verbatim');
    assert.match(zh[2].summary, /^mock-node 上的 GPU 3 温度 87 °C/);
    assert.deepEqual(zh.map((r) => r.since), ['25 分前', '3 分前', '12 分前', '15 分前']);
    assert.deepEqual(zh[0].linkText, ['作业', '日志']);
    assert.match(await page.textContent('.alerts-page'), /正在触发4.*待触发2.*历史2.*规则6/s);
    assert.match(await page.textContent('[data-testid=alerts-firing] thead'), /级别.*告警.*位置.*摘要.*数值 \/ 阈值.*开始于.*查看/);
    assert.match((await rowsOf('history'))[0].resolved, /持续 3 分$/);
    // Still open from before (the page is the same document).
    assert.equal(await page.$eval('[data-testid=alerts-rules]', (d) => d.open), true);
    await page.waitForSelector('[data-testid=alerts-rules-table]:not([hidden]) .rule-row');
    assert.equal(await page.textContent('[data-rule=gpu_temperature_high][data-severity=warning] .rule-threshold'), '≥ 降频温度 − 5 °C');
    assert.equal(await page.textContent('[data-rule=gpu_underutilized] .rule-enabled'), '否（已停用）');
    assert.equal(await page.$$eval('.alerts-page img, .alerts-page b, .alerts-page script, img', (e) => e.length), 0);
    await page.screenshot({ path: path.join(ARTIFACTS, 'alerts-zh.png'), fullPage: true });

    // Nothing firing, pending or resolved, no rules: said so, in both languages.
    await page.route(records, (route) => route.fulfill({ status: 200, contentType: 'application/json', body: '[]' }));
    await page.route('**/api/v1/rules', (route) => route.fulfill(ok({ groups: [{ name: 'vigil-presets', rules: [] }] })));
    await page.reload();
    await page.waitForSelector('[data-testid=alerts-firing-empty]:not([hidden])');
    await page.waitForFunction(() => document.querySelector('[data-testid=alerts-firing-empty]').textContent === '没有正在触发的告警。');
    assert.equal(await page.textContent('[data-testid=alerts-pending-empty]'), '没有待触发的告警。');
    assert.equal(await page.textContent('[data-testid=alerts-history-empty]'), '还没有已解决的告警。');
    await page.click('button.lang');
    assert.equal(await page.textContent('[data-testid=alerts-firing-empty]'), 'No alert is firing.');
    assert.equal(await page.textContent('[data-testid=alerts-pending-empty]'), 'No alert is pending.');
    assert.equal(await page.textContent('[data-testid=alerts-history-empty]'), 'No alert has been resolved yet.');
    await page.click('[data-testid=alerts-rules] summary');
    assert.equal(await page.textContent('[data-testid=alerts-rules-empty]'), 'No alert rule is loaded.');
    assert.ok(await page.isHidden('[data-testid=alerts-badge]'));
    assert.equal(await page.$$eval('.alert-row', (r) => r.length), 0);
    // A server without the alerts API: a note, no badge, no more asking.
    await page.unroute(records);
    let asked = 0;
    await page.route(records, (route) => {
      asked++;
      return route.fulfill({ status: 404, contentType: 'application/json',
        body: JSON.stringify({ status: 'error', errorType: 'not_found', error: 'not found' }) });
    });
    await page.reload();
    await page.waitForSelector('.alerts-page .note:not([hidden])');
    assert.equal(await page.textContent('.alerts-page .note'), 'This Vigil has no alerts API (/api/v1/alerts/records) yet.');
    assert.ok(await page.isHidden('[data-testid=alerts-badge]'));
    assert.ok(await page.isHidden('[data-testid=alerts-firing-empty]'));
    const before = asked;
    await sleep(2500);
    assert.equal(asked, before, 'no more requests after a 404');

    assert.deepEqual(dialogs, [], 'no alert ran');
    assert.equal(await page.evaluate(() => window.__xss), undefined);
    assert.deepEqual(errors, [], 'no console errors (CSP violations show here)');
  } finally {
    await ctx.close();
    await new Promise((r) => mock.close(r));
  }
});

// Silences on the Alerts tab, against the mock's (stateful) silences API
// (mock_api.mjs silencesAt): the list (an active one whose comment and
// author hold markup, a pending one whose matcher value does, an expired
// one); silencing the hot GPU's alert from its row (the form filled in with
// its matchers, the request as JSON, the alert silenced at the next refresh,
// the header's count down by one, the author remembered); the form's own
// errors (a bad matcher, a bad duration: nothing sent) and the server's
// 400 (its message, with markup in it, shown verbatim); New silence with
// typed matchers and a custom duration; Expire with its confirmation (and a
// failed one); Chinese; nothing hostile made or run.
test('alerts: silences: list, silence an alert, the form\'s and the server\'s errors, expire, Chinese', async () => {
  const { mock, mbase } = await startMockUi();
  const ctx = await launch('en-US');
  try {
    const page = ctx.pages()[0] ?? await ctx.newPage();
    // The refusals this test asks for (400, 404) are the browser's console
    // errors, not the page's.
    const { errors, dialogs } = watchPage(page, (m) => m.location()?.url?.includes('/api/v1/silence') && /40[04]/.test(m.text()));
    const changes = () => mock.changes.map((c) => `${c.method} ${c.path}`);

    await page.goto(`${mbase}/#alerts`);
    await page.waitForSelector('[data-testid=alerts-silences] .silence-row');
    await page.waitForFunction(() => document.querySelector('[data-testid=alerts-badge]')?.textContent === '3');
    // The section sits between Pending and History.
    assert.deepEqual(await page.$$eval('.alerts-page > section', (s) => s.map((x) => x.dataset.section)),
      ['firing', 'pending', 'silences', 'history']);
    assert.match(await page.textContent('[data-section=silences] .jobs-head'), /^Silences3They mute .*New silence$/);
    assert.match(await page.textContent('[data-testid=alerts-silences] thead'), /State.*Matchers.*Starts.*Ends.*Created by.*Comment.*Actions/);
    const silRows = () => page.$$eval('[data-testid=alerts-silences] tbody tr', (rs) => rs.map((r) => ({
      id: r.dataset.id, state: r.querySelector('.badge').textContent, tone: r.querySelector('.badge').className,
      matchers: r.querySelector('.sil-matchers-text').textContent, starts: r.querySelector('.sil-starts-rel').textContent,
      startsAt: r.children[2].querySelector('.job-sub').textContent, ends: r.querySelector('.sil-ends-rel').textContent,
      author: r.querySelector('.sil-author').textContent, comment: r.querySelector('.sil-comment').textContent,
      actions: r.querySelector('.sil-actions').textContent })));
    let sil = await silRows();
    // Newest (created) first; the matchers as `vigil silence add` takes them.
    assert.deepEqual(sil.map((s) => `${s.id}|${s.state}|${s.tone}|${s.actions}`), [
      'a0c0ffee00000001|active|badge green|Expire', 'b0c0ffee00000002|pending|badge blue|Expire',
      'c0c0ffee00000003|expired|badge grey|']);
    assert.deepEqual(sil.map((s) => s.matchers), ['node="gpu-07", alertname=~"gpu_.*"', `job="${EVIL_SIL_VALUE.replace(/"/g, '\\"')}", gpu!="7"`,
      'alertname="job_stalled", job!~"sweep-.*"']);
    assert.equal(sil[0].comment, EVIL_SIL_COMMENT, 'the comment, verbatim');
    assert.equal(sil[0].author, EVIL_SIL_AUTHOR, 'the author, verbatim');
    assert.deepEqual([sil[0].starts, sil[1].starts, sil[2].starts], ['10m ago', 'in 59m', '1d 0h ago']);
    assert.match(sil[0].ends, /^in 3h (49|50)m$/);
    assert.equal(sil[2].ends, '3h 0m ago');
    assert.match(sil[0].startsAt, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    assert.equal(await page.$$eval('img, script:not([src]), .alerts-page b', (e) => e.length), 0);

    // Silence the hot GPU from its row: the form comes with its matchers.
    assert.equal(await page.textContent('[data-id=a2hot] [data-testid=silence-alert]'), 'Silence');
    assert.equal(await page.$$eval('[data-testid=alerts-history] [data-testid=silence-alert]', (e) => e.length), 0, 'not on resolved ones');
    await page.click('[data-id=a2hot] [data-testid=silence-alert]');
    await page.waitForSelector('[data-testid=silence-form][open]');
    assert.equal(await page.textContent('.sil-title'), 'Silence this alert');
    assert.equal(await page.textContent('[data-testid=silence-form-alert]'), 'GPU temperature high · mock-node · GPU 3');
    assert.equal(await page.inputValue('input[name=matchers]'), 'alertname="gpu_temperature_high", node="mock-node", gpu="3"');
    assert.equal(await page.inputValue('input[name=createdBy]'), '', 'nobody remembered yet');
    assert.equal(await page.evaluate(() => document.activeElement?.name), 'comment');
    assert.deepEqual(await page.$$eval('select[name=duration] option', (o) => o.map((x) => `${x.value}:${x.textContent}`)),
      ['1h:1 hour', '4h:4 hours', '1d:1 day', '1w:1 week', 'custom:Other…']);
    await page.selectOption('select[name=duration]', '4h');
    assert.match(await page.textContent('[data-testid=silence-ends]'), /^Ends \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \(4h 0m from now\)\.$/);
    await page.fill('input[name=comment]', 'fan swap on GPU 3');
    await page.fill('input[name=createdBy]', 'alice');
    await page.click('[data-testid=silence-submit]');
    await page.waitForSelector('[data-testid=silence-form]:not([open])', { state: 'attached' });
    const post = mock.changes.at(-1);
    assert.equal(post.method, 'POST');
    assert.match(post.headers['content-type'], /^application\/json/);
    assert.equal(post.headers.origin, mbase, 'the browser names the page; the mock, as the server, takes its own');
    assert.deepEqual(JSON.parse(post.body), { matchers: [
      { name: 'alertname', value: 'gpu_temperature_high', isRegex: false, isEqual: true },
      { name: 'node', value: 'mock-node', isRegex: false, isEqual: true },
      { name: 'gpu', value: '3', isRegex: false, isEqual: true }], duration: '4h', createdBy: 'alice', comment: 'fan swap on GPU 3' });
    const added = JSON.parse(await (await fetch(`${mbase}/api/v1/silences`)).text())[0];
    assert.equal(await page.textContent('[data-testid=silence-result]'), `Silence ${added.id} added.`);
    // At the next refresh: the alert silenced (dimmed, marked), the count down, the silence listed first.
    await page.waitForSelector('[data-id=a2hot][data-silenced] [data-testid=alert-silenced]');
    assert.equal(await page.getAttribute('[data-id=a2hot] [data-testid=alert-silenced]', 'title'),
      'Muted by a silence: no notification is sent for it.');
    assert.equal(await page.textContent('[data-id=a2hot] .alert-title'), 'GPU temperature highsilenced');
    assert.ok(Number(await page.$eval('[data-id=a2hot]', (r) => getComputedStyle(r).opacity)) < 1, 'dimmed');
    await page.waitForFunction(() => document.querySelector('[data-testid=alerts-badge]')?.textContent === '2');
    await page.waitForFunction((id) => document.querySelector('[data-testid=alerts-silences] tbody tr')?.dataset.id === id, added.id);
    sil = await silRows();
    assert.deepEqual([sil[0].state, sil[0].matchers, sil[0].author, sil[0].comment],
      ['active', 'alertname="gpu_temperature_high", node="mock-node", gpu="3"', 'alice', 'fan swap on GPU 3']);
    assert.match(sil[0].starts, /^\d+s ago$/);
    assert.match(sil[0].ends, /^in (3h 59m|4h 0m)$/);

    // New silence: empty matchers, the author remembered; the form's own
    // errors send nothing.
    const sent = mock.changes.length;
    await page.click('[data-testid=new-silence]');
    await page.waitForSelector('[data-testid=silence-form][open]');
    assert.equal(await page.textContent('.sil-title'), 'New silence');
    assert.ok(await page.isHidden('[data-testid=silence-form-alert]'));
    assert.equal(await page.inputValue('input[name=matchers]'), '');
    assert.equal(await page.inputValue('input[name=createdBy]'), 'alice');
    assert.equal(await page.evaluate(() => document.activeElement?.name), 'matchers');
    await page.click('[data-testid=silence-submit]');
    assert.equal(await page.textContent('[data-testid=matchers-error]'), 'Give at least one matcher, such as node="gpu-07".');
    await page.fill('input[name=matchers]', 'node gpu-07');
    await page.press('input[name=matchers]', 'Enter');
    assert.equal(await page.textContent('[data-testid=matchers-error]'),
      '"node" is not a matcher: write name=value, name!=value, name=~regex or name!~regex.');
    await page.fill('input[name=matchers]', 'job!~"test-.*"');
    await page.click('[data-testid=silence-submit]');
    assert.match(await page.textContent('[data-testid=matchers-error]'), /^At least one matcher must not match an empty value/);
    await page.fill('input[name=matchers]', 'node=gpu-09, alertname!~"job_.*"');
    assert.ok(await page.isHidden('[data-testid=matchers-error]'), 'typing clears it');
    await page.selectOption('select[name=duration]', 'custom');
    await page.fill('input[name=custom]', '90 minutes');
    assert.equal(await page.textContent('[data-testid=silence-ends]'), '"90 minutes" is not a duration such as 90m, 1h30m or 2d.');
    await page.click('[data-testid=silence-submit]');
    assert.equal(mock.changes.length, sent, 'nothing sent');
    // The server's 400: its message, verbatim (markup and all), the form kept.
    await page.fill('input[name=custom]', '90m');
    assert.match(await page.textContent('[data-testid=silence-ends]'), /\(1h 30m from now\)\.$/);
    await page.fill('input[name=matchers]', `node=gpu-09 job=~"${EVIL_SIL_VALUE.replace(/"/g, '\\"')}("`);
    await page.click('[data-testid=silence-submit]');
    await page.waitForSelector('[data-testid=silence-error]:not([hidden])');
    const refusal = `matchers[1]: the regular expression of matcher job (${EVIL_SIL_VALUE}() does not compile: missing ): ${EVIL_SIL_VALUE}(`;
    assert.equal(await page.textContent('[data-testid=silence-server-error]'), refusal);
    assert.equal(await page.textContent('[data-testid=silence-error]'), `The silence was not added: ${refusal}`);
    assert.ok(await page.isVisible('[data-testid=silence-form][open]'), 'the form stays, to fix');
    await page.screenshot({ path: path.join(ARTIFACTS, 'alerts-silence-form-en.png') });
    assert.equal(await page.$$eval('img, script:not([src]), .alerts-page b', (e) => e.length), 0);
    // Fixed: typed matchers of every kind, the custom duration, as typed.
    await page.fill('input[name=matchers]', '{node=gpu-09, alertname!~"job_.*", gpu=~"[0-3]"  job!="eval run"}');
    await page.fill('input[name=comment]', 'rack 9 <b>maintenance</b>');
    await page.click('[data-testid=silence-submit]');
    await page.waitForSelector('[data-testid=silence-form]:not([open])', { state: 'attached' });
    assert.deepEqual(JSON.parse(mock.changes.at(-1).body), { matchers: [
      { name: 'node', value: 'gpu-09', isRegex: false, isEqual: true },
      { name: 'alertname', value: 'job_.*', isRegex: true, isEqual: false },
      { name: 'gpu', value: '[0-3]', isRegex: true, isEqual: true },
      { name: 'job', value: 'eval run', isRegex: false, isEqual: false }], duration: '90m', createdBy: 'alice',
    comment: 'rack 9 <b>maintenance</b>' });
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=alerts-silences] tbody tr').length === 5);
    sil = await silRows();
    assert.deepEqual([sil[0].matchers, sil[0].comment], ['node="gpu-09", alertname!~"job_.*", gpu=~"[0-3]", job!="eval run"',
      'rack 9 <b>maintenance</b>']);
    assert.match(sil[0].ends, /^in (1h 29m|1h 30m)$/);
    // Escape closes the form, sending nothing.
    const sent2 = mock.changes.length;
    await page.click('[data-testid=new-silence]');
    await page.keyboard.press('Escape');
    await page.waitForSelector('[data-testid=silence-form]:not([open])', { state: 'attached' });
    assert.equal(mock.changes.length, sent2);

    // Expire the hot GPU's silence: asked first (Cancel keeps it), then
    // expired: shown at once, the alert no longer silenced, the count back.
    const row = `[data-testid=alerts-silences] tr[data-id="${added.id}"]`;
    await page.click(`${row} [data-testid=expire]`);
    assert.equal(await page.textContent(`${row} .sil-actions`), 'Expire this silence now? Its alerts are notified again.Expire nowCancel');
    await page.click(`${row} [data-testid=expire-cancel]`);
    assert.equal(await page.textContent(`${row} .sil-actions`), 'Expire');
    assert.ok(!changes().includes(`DELETE /api/v1/silence/${added.id}`));
    await page.click(`${row} [data-testid=expire]`);
    await page.click(`${row} [data-testid=expire-confirm]`);
    await page.waitForSelector(`${row}[data-state=expired]`);
    assert.equal(await page.textContent('[data-testid=silence-result]'), `Silence ${added.id} expired.`);
    assert.equal(await page.textContent(`${row} .sil-actions`), '');
    const del = mock.changes.at(-1);
    assert.equal(`${del.method} ${del.path}`, `DELETE /api/v1/silence/${added.id}`);
    assert.match(del.headers['content-type'], /^application\/json/);
    await page.waitForSelector('[data-id=a2hot]:not([data-silenced])');
    await page.waitForFunction(() => document.querySelector('[data-testid=alerts-badge]')?.textContent === '3');
    assert.equal(await page.$$eval('[data-testid=alert-silenced]', (e) => e.length), 0);
    // A failed expire says why (the server's words).
    await page.route('**/api/v1/silence/b0c0ffee00000002', (route) => route.fulfill({ status: 404, contentType: 'application/json',
      body: JSON.stringify({ status: 'error', errorType: 'not_found', error: 'no silence has the id "b0c0ffee00000002"' }) }));
    await page.click('tr[data-id=b0c0ffee00000002] [data-testid=expire]');
    await page.click('tr[data-id=b0c0ffee00000002] [data-testid=expire-confirm]');
    await page.waitForFunction(() => /^Could not/.test(document.querySelector('[data-testid=silence-result]').textContent));
    assert.equal(await page.textContent('[data-testid=silence-result]'),
      'Could not expire silence b0c0ffee00000002: no silence has the id "b0c0ffee00000002"');
    assert.equal(await page.getAttribute('[data-testid=silence-result]', 'class'), 'sil-result bad');
    assert.equal(await page.textContent('tr[data-id=b0c0ffee00000002] .badge'), 'pending');
    await page.unroute('**/api/v1/silence/b0c0ffee00000002');
    await page.screenshot({ path: path.join(ARTIFACTS, 'alerts-silences-en.png'), fullPage: true });

    // Chinese: the section, the states, the buttons, the form and its messages.
    await page.click('button.lang');
    assert.match(await page.textContent('[data-section=silences] .jobs-head'), /^静默5在一段时间内.*新建静默$/);
    assert.match(await page.textContent('[data-testid=alerts-silences] thead'), /状态.*匹配条件.*开始.*结束.*创建者.*备注.*操作/);
    sil = await silRows();
    assert.deepEqual(sil.map((s) => s.state), ['生效中', '已过期', '生效中', '未开始', '已过期']);
    assert.deepEqual(sil.map((s) => s.actions), ['结束', '', '结束', '结束', '']);
    assert.match(sil[2].starts, /^1[01] 分前$/);
    assert.match(sil[3].starts, /^5[89] 分后$/);
    assert.equal(await page.textContent('[data-id=a1crash] [data-testid=silence-alert]'), '静默');
    await page.click('[data-id=a1crash] [data-testid=silence-alert]');
    await page.waitForSelector('[data-testid=silence-form][open]');
    assert.equal(await page.textContent('.sil-title'), '静默此告警');
    assert.equal(await page.textContent('[data-testid=silence-form-alert]'), '作业崩溃 · mock-node · finetune-llama');
    assert.equal(await page.inputValue('input[name=matchers]'), 'alertname="job_crashed", node="mock-node", job="finetune-llama"');
    assert.deepEqual(await page.$$eval('select[name=duration] option', (o) => o.map((x) => x.textContent)),
      ['1 小时', '4 小时', '1 天', '1 周', '自定义…']);
    assert.match(await page.textContent('[data-testid=silence-ends]'), /^结束于 .*（1 小时 0 分后）。$/);
    assert.equal(await page.textContent('[data-testid=silence-submit]'), '添加静默');
    await page.screenshot({ path: path.join(ARTIFACTS, 'alerts-silence-form-zh.png') });
    await page.fill('input[name=matchers]', 'gpu-id=3');
    await page.click('[data-testid=silence-submit]');
    assert.equal(await page.textContent('[data-testid=matchers-error]'), '“gpu-id”不是有效的标签名（字母、数字和 _，不能以数字开头）。');
    // Back in English, so are the form's messages.
    await page.keyboard.press('Escape');
    await page.click('button.lang');
    await page.click('[data-testid=new-silence]');
    await page.fill('input[name=matchers]', 'gpu-id=3');
    await page.click('[data-testid=silence-submit]');
    assert.equal(await page.textContent('[data-testid=matchers-error]'),
      '"gpu-id" is not a label name (letters, digits and _, not starting with a digit).');
    await page.keyboard.press('Escape');

    assert.equal(await page.$$eval('img, script:not([src]), .alerts-page b', (e) => e.length), 0);
    assert.equal(await page.evaluate(() => window.__xss), undefined);
    assert.deepEqual(dialogs, [], 'no dialog: nothing ran, and Expire asks in the page');
    assert.deepEqual(errors, [], 'no console errors (CSP violations show here)');
  } finally {
    await ctx.close();
    await new Promise((r) => mock.close(r));
  }
});

test('inbox: items for whose inbox, held back, hostile text, mark read, unread badge, Chinese', async () => {
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
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss().catch(() => {}); });
    await page.route('**/api/v1/logs/**', (route) => route.fulfill({ status: 200, contentType: 'application/json',
      body: JSON.stringify({ status: 'success', data: [] }) }));

    // The tab's unread count shows on another page; critical unread: crit.
    await page.goto(`${mbase}/#jobs&range=1h`);
    await page.waitForSelector('a.tab[data-page="inbox"] [data-testid=inbox-badge]:not([hidden])');
    const badge = await page.$eval('[data-testid=inbox-badge]', (b) => [b.textContent, b.className, b.title]);
    assert.deepEqual(badge, ['3', 'tab-badge crit', '3 unread in the inbox']);

    await page.click('a.tab[data-page="inbox"]');
    await page.waitForSelector('.inbox-page:not([hidden]) [data-testid=inbox-list] li');
    const items = () => page.$$eval('[data-testid=inbox-list] li', (ls) => ls.map((l) => ({
      id: l.dataset.id, kind: l.dataset.kind, read: l.classList.contains('read'),
      line: l.querySelector('.inbox-line').textContent, summary: l.querySelector('.inbox-summary').textContent,
      description: l.querySelector('.inbox-description')?.textContent ?? '', note: l.querySelector('.inbox-note')?.textContent ?? '',
      meta: l.querySelector('.inbox-meta').textContent })));
    let got = await items();
    assert.deepEqual(got.map((i) => [i.id, i.kind, i.read]), [['3', 'firing', false], ['2', 'held_back', false], ['1', 'resolved', false]]);
    assert.match(got[0].line, /^critical fired Job crashed.*mock-node.*train.*ago/);
    assert.equal(got[0].description, 'Ran 2h on 8 GPUs; final loss 1.23');
    assert.equal(await page.textContent('[data-id="3"] [data-testid=inbox-steps]'), 'What to do: Read the exception on the job\'s page.');
    assert.equal(await page.textContent('[data-id="3"] [data-testid=inbox-log] pre'), MOCK_LOG_EXCERPT.join('\n'));
    assert.equal(await page.textContent('[data-id="3"] .inbox-cause'), 'Diagnosis: Probable cause: CUDA out of memory (95%)');
    assert.equal(await page.textContent('[data-id="3"] [data-testid=inbox-suggestion]'),
      'Suggestion: Halve the batch size (batch_size: now 16, suggested 8)');
    assert.equal(await page.textContent('[data-id="3"] .inbox-evidence-line'), '· log: cuda_oom');
    assert.equal(await page.textContent('[data-id="3"] [data-testid=inbox-templates]'),
      '×1 [error, new] torch.OutOfMemoryError: CUDA out of memory. <b>Tried</b> <*>\n×312 Epoch <*> step <*> loss <*>');
    assert.equal(await page.$$eval('[data-id="1"] [data-testid=inbox-diagnosis]', (e) => e.length), 0);
    assert.match(got[0].meta, /^For alice, lab.*Job.*Logs/);
    assert.equal(got[1].summary, '<img src=x onerror="window.pwned=1">hot', 'hostile text stays text');
    assert.equal(got[1].note, 'Held back: ops-sms: capped: 10 messages today <b>x</b>');
    assert.equal(await page.textContent('[data-testid=inbox-counts]'), '3 unread of 3');

    // Mark one read: sent as JSON, shown read, counted.
    await page.click('[data-id="3"] [data-testid=inbox-toggle]');
    await page.waitForSelector('[data-id="3"].read');
    assert.equal(await page.textContent('[data-testid=inbox-counts]'), '2 unread of 3');
    const change = mock.changes.at(-1);
    assert.equal(change.path, '/api/v1/inbox/read');
    assert.equal(change.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(change.body), { recipient: '', ids: [3], read: true });
    await page.waitForFunction(() => document.querySelector('[data-testid=inbox-badge]').textContent === '2');
    assert.equal(await page.$eval('[data-testid=inbox-badge]', (b) => b.className), 'tab-badge warn');

    // Whose inbox: alice sees hers and everyone's; the choice is remembered.
    await page.selectOption('[data-testid=inbox-recipient]', 'alice');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=inbox-list] li').length === 2);
    got = await items();
    assert.deepEqual(got.map((i) => [i.id, i.read]), [['3', false], ['2', false]], 'read by everyone\'s view, not by alice');
    await page.click('[data-testid=inbox-all-read]');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=inbox-list] li.read').length === 2);
    await page.check('[data-testid=inbox-unread]');
    await page.waitForSelector('[data-testid=inbox-empty]:not([hidden])');
    assert.equal(await page.textContent('[data-testid=inbox-empty]'), 'No unread item.');
    await page.reload();
    await page.waitForSelector('.inbox-page:not([hidden]) [data-testid=inbox-list] li');
    assert.equal(await page.inputValue('[data-testid=inbox-recipient]'), 'alice');

    // Chinese.
    await page.selectOption('[data-testid=inbox-severity]', 'critical');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=inbox-list] li').length === 1);
    await page.click('button.lang');
    await page.waitForFunction(() => /标为未读/.test(document.querySelector('[data-testid=inbox-toggle]').textContent));
    assert.match(await page.textContent('[data-testid=inbox-list] li .inbox-line'), /^严重 触发 作业崩溃 mock-node · train/);
    assert.equal(await page.textContent('[data-testid=inbox-list] .inbox-description'), '在 8 块 GPU 上运行 2 小时；最终 loss 1.23');
    assert.equal(await page.textContent('[data-testid=inbox-list] .inbox-cause'), '诊断：可能原因：CUDA 显存不足（95%）');
    assert.equal(await page.textContent('[data-testid=inbox-list] [data-testid=inbox-suggestion]'),
      '修改建议：将批大小减半 (batch_size：当前 16，建议 8)');
    assert.match(await page.textContent('[data-testid=inbox-list] [data-testid=inbox-templates]'), /^×1 \[错误, 新出现\] torch/);
    assert.deepEqual(await page.$$eval('[data-testid=inbox-recipient] option', (o) => o.map((x) => x.textContent)),
      ['所有人', 'alice', 'lab（团队）']);
    await page.screenshot({ path: path.join(ARTIFACTS, 'inbox-zh.png') });

    assert.equal(await page.$$eval('img, .inbox-page b', (e) => e.length), 0);
    assert.equal(await page.evaluate(() => window.pwned), undefined);
    assert.deepEqual(dialogs, []);
    assert.deepEqual(errors, [], 'no console errors (CSP violations show here)');
  } finally {
    await ctx.close();
    await new Promise((r) => mock.close(r));
  }
});

test('actions: the notification\'s link highlights one, countdown, cancel signed, 409 once done, hostile text, Chinese', async () => {
  const { mock, mbase } = await startMockUi();
  const ctx = await launch('en-US');
  try {
    const page = ctx.pages()[0] ?? await ctx.newPage();
    const { errors, dialogs } = watchPage(page, (m) => m.location()?.url?.includes('/api/v1/actions/') && /409/.test(m.text()));
    const entries = () => page.$$eval('[data-testid=actions-list] li', (ls) => ls.map((l) => ({
      id: l.dataset.id, state: l.dataset.state, cls: l.className, line: l.querySelector('.inbox-line').textContent,
      cancel: !!l.querySelector('[data-testid=actions-cancel]'), output: l.querySelector('[data-testid=actions-output]')?.textContent ?? '' })));

    // The link each action's notification carries.
    await page.goto(`${mbase}/#actions&id=3`);
    await page.waitForSelector('.actions-page:not([hidden]) [data-testid=actions-list] li');
    assert.equal(await page.textContent('a.tab[data-page="actions"]'), 'Actions');
    let list = await entries();
    assert.deepEqual(list.map((e) => [e.id, e.state, e.cancel]), [['3', 'scheduled', true], ['2', 'dry_run', false], ['1', 'failed', false]]);
    assert.match(list[0].cls, /highlight/);
    assert.doesNotMatch(list[1].cls, /highlight/);
    assert.match(list[0].line, /^scheduled stop-instance run finished · job train · node mock-node · run r3 · owner alice/);
    assert.match(await page.textContent('[data-testid=actions-countdown]'), /^Runs in (9m 5\d|10m 00)s \(at /);
    const first = await page.textContent('[data-testid=actions-countdown]');
    await page.waitForFunction((f) => document.querySelector('[data-testid=actions-countdown]').textContent !== f, first);
    assert.equal(await page.textContent('[data-testid=actions-configured]'),
      'Configured: stop-instance (run finished), rehearse (run finished, dry run)');
    assert.equal(await page.textContent('[data-id="3"] [data-testid=actions-command]'), '/usr/local/bin/stop-instance --id i-123');
    // Hostile labels and output stay text.
    assert.equal(list[2].output, '<b>no such instance</b>\n');
    assert.match(list[2].line, /<img src=x onerror/);
    assert.equal(await page.$$eval('img, .actions-page b', (e) => e.length), 0);
    assert.equal(await page.evaluate(() => window.pwned), undefined);

    // Cancel, signed with the name given (remembered).
    await page.fill('[data-testid=actions-by]', 'alice');
    await page.click('[data-id="3"] [data-testid=actions-cancel]');
    await page.waitForSelector('[data-id="3"][data-state=cancelled]');
    const change = mock.changes.find((c) => c.path === '/api/v1/actions/3/cancel');
    assert.equal(change.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(change.body), { by: 'alice' });
    assert.match(await page.textContent('[data-id="3"]'), /Cancelled by alice at /);
    list = await entries();
    assert.equal(list[0].cancel, false);
    await page.reload();
    await page.waitForSelector('[data-testid=actions-list] li');
    assert.equal(await page.inputValue('[data-testid=actions-by]'), 'alice');

    // An id the list lacks says so.
    await page.goto(`${mbase}/#actions&id=99`);
    await page.waitForSelector('[data-testid=actions-empty]:not([hidden])');
    assert.equal(await page.textContent('[data-testid=actions-empty]'), 'Action 99 is not in the list (it may have been removed from the history).');

    // Chinese.
    await page.click('button.lang');
    await page.waitForFunction(() => /已取消/.test(document.querySelector('[data-id="3"] .inbox-line').textContent));
    assert.match(await page.textContent('[data-id="2"] .inbox-line'), /^演练 rehearse 任务结束/);
    assert.match(await page.textContent('[data-id="1"]'), /退出码 2/);
    await page.screenshot({ path: path.join(ARTIFACTS, 'actions-zh.png') });
    assert.deepEqual(errors, []);
    assert.deepEqual(dialogs, []);
  } finally {
    await ctx.close();
    await new Promise((r) => mock.close(r));
  }
});

test('settings: notification channels: a failing one, add a webhook, Send test, edit keeping its URL, delete, Chinese', async () => {
  const { mock, mbase } = await startMockUi();
  const ctx = await launch('en-US');
  try {
    const page = ctx.pages()[0] ?? await ctx.newPage();
    // The 409 this test asks for is the browser's console error, not the page's.
    const { errors, dialogs } = watchPage(page, (m) => m.location()?.url?.includes('/api/v1/notify/') && /409/.test(m.text()));
    const sent = () => mock.changes.filter((c) => c.path.startsWith('/api/v1/notify/'));
    const rows = () => page.$$eval('[data-testid=settings-channels] tbody tr', (rs) => rs.map((r) => ({
      name: r.dataset.name, cls: r.className, cells: [...r.children].map((c) => c.textContent) })));

    // The link notification emails carry opens the tab.
    await page.goto(`${mbase}/#settings&tab=notifications`);
    await page.waitForSelector('[data-testid=settings-channels] tbody tr');
    assert.equal(await page.textContent('a.tab[data-page="settings"]'), 'Settings');
    assert.equal(await page.textContent('[data-testid=settings-path]'),
      'Saved in /tmp/mock/config.json, the file vigil notify test reads; a change applies at once.');
    let r = await rows();
    assert.equal(r.length, 1);
    assert.equal(r[0].name, 'lark');
    assert.match(r[0].cls, /failing/);
    assert.deepEqual(r[0].cells.slice(0, 4), ['larknamed by a route', 'Feishu / Lark bot', 'https://open.feishu.cn/...', 'set']);
    assert.equal(await page.getAttribute('[data-name=lark] .settings-delivery .badge', 'class'), 'badge red');
    assert.equal(await page.textContent('[data-name=lark] .settings-last-error'), `Last answer: ${EVIL_ANSWER}`, 'verbatim');
    assert.equal(await page.textContent('[data-testid=settings-routes] code'), 'severity=critical → lark');

    // A new webhook: the form by type, Send test before saving it.
    await page.click('[data-testid=settings-add]');
    assert.equal(await page.textContent('[data-testid=settings-form-title]'), 'New channel');
    await page.selectOption('select[name=type]', 'webhook');
    const shownFields = () => page.$$eval('[data-testid=settings-form] [data-field]',
      (fs) => fs.filter((f) => !f.hidden).map((f) => f.dataset.field));
    assert.deepEqual(await shownFields(), ['url', 'headers']);
    await page.fill('input[name=name]', 'hook');
    await page.click('[data-testid=settings-save]');
    assert.equal(await page.textContent('[data-testid=settings-form-error]'), 'Webhook URL is needed.');
    assert.equal(sent().length, 0, 'the form\'s own error sends nothing');
    await page.fill('input[name=url]', 'http://127.0.0.1:8080/hook-TOKEN');
    await page.fill('textarea[name=headers]', 'Authorization: Bearer xyz');
    await page.click('[data-testid=settings-form-send-test]');
    await page.waitForFunction(() => document.querySelector('[data-testid=settings-form-test]')?.textContent.includes('delivered'));
    assert.equal(await page.textContent('[data-testid=settings-form-test]'), 'Test notification to hook: delivered.');
    let last = sent().at(-1);
    assert.equal(`${last.method} ${last.path}`, 'POST /api/v1/notify/test');
    assert.equal(last.headers['content-type'], 'application/json');
    assert.equal(last.headers.origin, mbase);
    assert.deepEqual(JSON.parse(last.body), { channel_config: { name: 'hook', type: 'webhook',
      url: 'http://127.0.0.1:8080/hook-TOKEN', headers: { Authorization: 'Bearer xyz' } } });
    await page.click('[data-testid=settings-save]');
    await page.waitForSelector('[data-name=hook]');
    assert.equal(await page.textContent('[data-testid=settings-result]'), 'Channel hook saved.');
    assert.ok(await page.isHidden('[data-testid=settings-form]'));
    last = sent().at(-1);
    assert.equal(`${last.method} ${last.path}`, 'PUT /api/v1/notify/channels/hook');
    r = await rows();
    assert.deepEqual(r[1].cells.slice(1, 5), ['Webhook (Alertmanager)', 'http://127.0.0.1:8080/...', '–', 'nothing sent yet']);
    assert.ok(!(await page.textContent('.settings-page')).includes('TOKEN'), 'the hook\'s path is never shown');
    await page.screenshot({ path: path.join(ARTIFACTS, 'settings-en.png') });

    // Send test on the saved row.
    await page.click('[data-name=hook] [data-testid=settings-send-test]');
    await page.waitForFunction(() => document.querySelector('[data-testid=settings-result]')?.textContent.startsWith('Test'));
    assert.equal(await page.textContent('[data-testid=settings-result]'), 'Test notification to hook: delivered.');
    assert.deepEqual(JSON.parse(sent().at(-1).body), { channel: 'hook' });

    // Edit: the URL and headers start empty, saying they are set; left so,
    // the body leaves them out and the server keeps them.
    await page.click('[data-name=hook] [data-testid=settings-edit]');
    assert.equal(await page.textContent('[data-testid=settings-form-title]'), 'Edit channel hook');
    assert.equal(await page.inputValue('input[name=url]'), '');
    assert.equal(await page.getAttribute('input[name=url]', 'placeholder'), 'http://127.0.0.1:8080/... (set: leave empty to keep it)');
    assert.equal(await page.getAttribute('textarea[name=headers]', 'placeholder'), 'Authorization (set: leave empty to keep it)');
    assert.ok(await page.isDisabled('input[name=name]'));
    await page.click('[data-testid=settings-save]');
    await page.waitForFunction(() => document.querySelector('[data-testid=settings-form]')?.hidden);
    assert.deepEqual(JSON.parse(sent().at(-1).body), { name: 'hook', type: 'webhook' });
    // A test of the edited form answered "not delivered": the receiver's words.
    await page.click('[data-name=hook] [data-testid=settings-edit]');
    await page.fill('input[name=url]', 'http://127.0.0.1:8080/refuse');
    await page.click('[data-testid=settings-form-send-test]');
    await page.waitForFunction(() => document.querySelector('[data-testid=settings-form-test]')?.textContent.includes('not delivered'));
    assert.equal(await page.textContent('[data-testid=settings-form-test]'),
      'Test notification to hook: not delivered. The receiver answered: webhook http://127.0.0.1:8080/... answered HTTP 500');
    await page.click('[data-testid=settings-cancel]');

    // Delete asks first; a routed channel is refused with the server's reason.
    await page.click('[data-name=lark] [data-testid=settings-delete]');
    assert.equal(await page.textContent('[data-name=lark] .settings-confirm'), 'Delete lark?');
    await page.click('[data-name=lark] [data-testid=settings-delete-yes]');
    await page.waitForFunction(() => document.querySelector('[data-testid=settings-result]')?.textContent.startsWith('Refused'));
    assert.match(await page.textContent('[data-testid=settings-result]'), /^Refused: notify\.routes\[0\] sends alerts to "lark"/);
    await page.click('[data-name=hook] [data-testid=settings-delete]');
    await page.click('[data-name=hook] [data-testid=settings-delete-yes]');
    await page.waitForFunction(() => !document.querySelector('[data-name=hook]'));
    assert.equal(await page.textContent('[data-testid=settings-result]'), 'Channel hook deleted.');
    last = sent().at(-1);
    assert.equal(`${last.method} ${last.path}`, 'DELETE /api/v1/notify/channels/hook');

    // In Chinese.
    await page.click('button.lang');
    assert.equal(await page.textContent('a.tab[data-page="settings"]'), '设置');
    assert.equal(await page.textContent('[data-testid=settings-result]'), '通道 hook 已删除。', 'the last result relabelled');
    assert.match(await page.textContent('[data-section=channels] h3'), /^通知通道/);
    assert.deepEqual((await rows())[0].cells.slice(1, 4), ['飞书机器人', 'https://open.feishu.cn/...', '已设置']);
    await page.click('[data-testid=settings-add]');
    assert.equal(await page.textContent('[data-testid=settings-form-title]'), '新通道');
    await page.screenshot({ path: path.join(ARTIFACTS, 'settings-form-zh.png') });

    assert.equal(await page.$$eval('.settings-page img, .settings-page script', (e) => e.length), 0);
    assert.equal(await page.evaluate(() => window.__xss), undefined);
    assert.deepEqual(dialogs, []);
    assert.deepEqual(errors, [], 'no console errors (CSP violations show here)');
  } finally {
    await ctx.close();
    await new Promise((res) => mock.close(res));
  }
});

test('settings: recipients and routes: add a person, a refused delete, add a route, move it up, remove one, Chinese', async () => {
  const { mock, mbase } = await startMockUi();
  const ctx = await launch('en-US');
  try {
    const page = ctx.pages()[0] ?? await ctx.newPage();
    const { errors, dialogs } = watchPage(page, (m) => m.location()?.url?.includes('/api/v1/notify/') && /409/.test(m.text()));
    const sent = () => mock.changes.filter((c) => c.path.startsWith('/api/v1/notify/'));
    const recipients = () => page.$$eval('[data-testid=settings-recipients] tbody tr', (rs) => rs.map((r) => [...r.children].map((c) => c.textContent)));
    const routes = () => page.$$eval('[data-testid=settings-routes] li code', (cs) => cs.map((c) => c.textContent));
    const result = async (prefix) => {
      await page.waitForFunction((p) => document.querySelector('[data-testid=settings-result]')?.textContent.startsWith(p), prefix);
      return page.textContent('[data-testid=settings-result]');
    };

    await page.goto(`${mbase}/#settings&tab=notifications`);
    await page.waitForSelector('[data-testid=settings-recipients] tbody tr');
    let r = await recipients();
    assert.deepEqual(r.map((x) => x.slice(0, 6)), [
      ['alice', 'Person', 'alice · team vision', 'lark', 'Chinese', '–'],
      ['vision', 'Team', 'lead: alice', '–', 'The type\'s default', '–'],
      [EVIL_NAME, 'Person', '', '–', 'The type\'s default', '–']]);
    assert.deepEqual(await routes(), ['severity=critical → lark']);

    // A new person: the form by kind, the channels as checkboxes, quiet hours checked.
    await page.click('[data-testid=settings-add-recipient]');
    assert.equal(await page.textContent('[data-testid=settings-recipient-title]'), 'New recipient');
    assert.ok(await page.isHidden('select[name=recipient-lead]'));
    await page.fill('input[name=recipient-name]', 'bob');
    await page.fill('input[name=recipient-users]', 'bob, bob2');
    await page.selectOption('select[name=recipient-team]', 'vision');
    await page.check('[data-testid=settings-recipient-channel][value=lark]');
    await page.selectOption('select[name=recipient-language]', 'en');
    await page.fill('input[name=quiet-start]', '23:00');
    await page.click('[data-testid=settings-recipient-save]');
    assert.equal(await page.textContent('[data-testid=settings-recipient-error]'), 'Quiet hours need a start and an end as HH:MM (23:00).');
    assert.equal(sent().length, 0, 'the form\'s own error sends nothing');
    await page.fill('input[name=quiet-end]', '08:00');
    await page.click('[data-testid=settings-recipient-save]');
    assert.equal(await result('Recipient'), 'Recipient bob saved.');
    let last = sent().at(-1);
    assert.equal(`${last.method} ${last.path}`, 'PUT /api/v1/notify/recipients/bob');
    assert.equal(last.headers.origin, mbase);
    assert.deepEqual(JSON.parse(last.body), { name: 'bob', users: ['bob', 'bob2'], team: 'vision', channels: ['lark'],
      language: 'en', quiet_hours: { start: '23:00', end: '08:00' } });
    await page.waitForSelector('[data-recipient=bob]');
    assert.ok(await page.isHidden('[data-testid=settings-recipient-form]'));

    // A team's lead cannot go: the server's reason, verbatim.
    await page.click('[data-recipient=alice] [data-testid=settings-remove]');
    assert.equal(await page.textContent('[data-recipient=alice] .settings-confirm'), 'Delete alice?');
    await page.click('[data-recipient=alice] [data-testid=settings-remove-yes]');
    assert.match(await result('Refused'), /^Refused: notify\.recipients "vision" has "alice" as its lead/);
    // Editing a team shows its lead.
    await page.click('[data-recipient=vision] [data-testid=settings-edit]');
    assert.equal(await page.textContent('[data-testid=settings-recipient-title]'), 'Edit recipient vision');
    assert.equal(await page.inputValue('select[name=recipient-lead]'), 'alice');
    assert.ok(await page.isHidden('input[name=recipient-users]'));
    assert.ok(await page.isDisabled('input[name=recipient-name]'));
    await page.click('[data-testid=settings-recipient-form] button:has-text("Cancel")');

    // A route to bob by severity and GPU model, added at the end.
    await page.click('[data-testid=settings-add-route]');
    assert.equal(await page.textContent('[data-testid=settings-route-title]'), 'New route');
    await page.click('[data-testid=settings-route-save]');
    assert.equal(await page.textContent('[data-testid=settings-route-error]'), 'Pick a channel or a recipient to send to.');
    await page.click('[data-testid=settings-route-add-label]');
    const keys = page.locator('[data-testid=settings-route-match] input[name=match-key]');
    const values = page.locator('[data-testid=settings-route-match] input[name=match-value]');
    assert.equal(await keys.nth(0).inputValue(), 'severity');
    assert.equal(await values.nth(0).inputValue(), 'critical');
    await keys.nth(1).fill('modelName');
    await values.nth(1).fill('NVIDIA H100 80GB HBM3');
    await page.check('[data-testid=settings-route-recipient][value=bob]');
    await page.click('[data-testid=settings-route-save]');
    assert.equal(await result('Routes'), 'Routes saved.');
    const added = { match: { severity: 'critical', modelName: 'NVIDIA H100 80GB HBM3' }, recipients: ['bob'] };
    const first = { match: { severity: 'critical' }, channels: ['lark'] };
    last = sent().at(-1);
    assert.equal(`${last.method} ${last.path}`, 'PUT /api/v1/notify/routes');
    assert.deepEqual(JSON.parse(last.body), { routes: [first, added] });
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=settings-routes] li code').length === 2);
    assert.deepEqual(await routes(), ['severity=critical → lark', 'severity=critical, modelName=NVIDIA H100 80GB HBM3 → bob']);
    assert.match((await recipients())[3][0], /^bobnamed by a route/);

    // Moved up: the whole list, in its new order; the first cannot go up.
    assert.ok(await page.isDisabled('[data-route="0"] [data-testid=settings-route-up]'));
    await page.click('[data-route="1"] [data-testid=settings-route-up]');
    await page.waitForFunction(() => document.querySelector('[data-route="0"] code')?.textContent.endsWith('bob'));
    assert.deepEqual(JSON.parse(sent().at(-1).body), { routes: [added, first] });
    // Removed, asking first.
    await page.click('[data-route="1"] [data-testid=settings-remove]');
    assert.equal(await page.textContent('[data-route="1"] .settings-confirm'), 'Delete route 2?');
    await page.click('[data-route="1"] [data-testid=settings-remove-yes]');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=settings-routes] li code').length === 1);
    assert.deepEqual(JSON.parse(sent().at(-1).body), { routes: [added] });
    // An edited route whose label lost its value: the form says so.
    await page.click('[data-route="0"] [data-testid=settings-edit]');
    assert.equal(await page.textContent('[data-testid=settings-route-title]'), 'Edit route 1');
    await values.nth(1).fill('');
    await page.click('[data-testid=settings-route-save]');
    assert.equal(await page.textContent('[data-testid=settings-route-error]'), 'Each label needs a value, and each value a label.');
    await page.screenshot({ path: path.join(ARTIFACTS, 'settings-routing-en.png') });

    // In Chinese.
    await page.click('button.lang');
    assert.match(await page.textContent('[data-section=recipients] h3'), /^接收人/);
    assert.deepEqual((await recipients())[0].slice(1, 5), ['个人', 'alice · 团队 vision', 'lark', '中文']);
    assert.equal(await page.textContent('[data-testid=settings-route-title]'), '编辑路由 1');
    assert.equal(await page.textContent('[data-testid=settings-route-error]'), '每个标签都需要值，每个值都需要标签。');
    await page.screenshot({ path: path.join(ARTIFACTS, 'settings-routing-zh.png') });

    assert.equal(await page.$$eval('.settings-page img, .settings-page script', (e) => e.length), 0);
    assert.equal(await page.evaluate(() => window.__xss), undefined);
    assert.deepEqual(dialogs, []);
    assert.deepEqual(errors, [], 'no console errors (CSP violations show here)');
  } finally {
    await ctx.close();
    await new Promise((res) => mock.close(res));
  }
});
