// Browser test of the built-in UI: the real vigil binary on the fake NVML
// (8 x H100, GPU 3 hot), driven in Debian's chromium by playwright-core.
//
// Env: VIGIL_BIN (vigil binary), VIGIL_FAKE_NVML (libnvidia-ml-fake.so),
// VIGIL_SOURCE_DIR (repo root, for the scenario), optional VIGIL_CHROMIUM
// (default /usr/bin/chromium) and VIGIL_WEB_ARTIFACTS (screenshots; default
// a temp dir). Run: node --test web/test/ui.test.mjs
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
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
  if (vigil && vigil.exitCode == null) {
    vigil.kill('SIGTERM');
    await Promise.race([new Promise((r) => vigil.once('exit', r)), sleep(10000)]);
    if (vigil.exitCode == null) vigil.kill('SIGKILL');
  }
  for (const d of [home, ...userDirs]) if (d) rmSync(d, { recursive: true, force: true });
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
