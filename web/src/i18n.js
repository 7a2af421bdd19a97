// Translations: the language (the browser's until the user picks one, then
// remembered in localStorage), t() and tLabel(), and the strings the shell
// and several pages share, in English and Simplified Chinese. Each page
// brings its own table (pages/<page>.i18n.js: {en: {...}, zh: {...}}), added
// with addStrings() when the page registers (registry.js); a key may live in
// one table only. Every visible string is in a table, in both languages.

// The shell's strings (status line, range picker, language button, footer)
// and those several pages use: durations, "Loading…", a failed query, charts
// without data.
export const SHARED = {
  en: {
    pageTitle: 'Vigil — {node}',
    language: 'Language',
    switchTo: '中文',
    'range.5m': '5m', 'range.15m': '15m', 'range.1h': '1h',
    'range.6h': '6h', 'range.24h': '24h', 'range.7d': '7d',
    connecting: 'Connecting to Vigil…',
    unreachable: 'Cannot reach Vigil: {err}. Retrying…',
    gpuOk: '{n} GPUs detected · {model} · driver {driver} · CUDA {cuda}',
    gpuOkOne: '1 GPU detected · {model} · driver {driver} · CUDA {cuda}',
    gpuMixed: 'several models',
    gpuNone: 'The NVIDIA driver is loaded but reports no GPU.',
    noDriver: 'No NVIDIA driver found (libnvidia-ml.so.1 is not installed): GPU metrics are off.',
    notResponding: 'The NVIDIA driver is not responding: GPU metrics are paused until it answers.',
    driverError: 'The NVIDIA driver failed to start: GPU metrics are off. Check nvidia-smi.',
    starting: 'Looking for GPUs…',
    queryFailed: 'A query failed: {err}',
    live: 'Live',
    paused: 'Paused',
    updated: 'Updated {t}',
    uptime: 'Up {d}',
    noData: 'No data yet',
    footer: 'Vigil {version} · data in {home}',
    'dur.d': '{n}d', 'dur.h': '{n}h', 'dur.m': '{n}m', 'dur.s': '{n}s',
    loading: 'Loading…',
  },
  zh: {
    pageTitle: 'Vigil — {node}',
    language: '语言',
    switchTo: 'English',
    'range.5m': '5 分钟', 'range.15m': '15 分钟', 'range.1h': '1 小时',
    'range.6h': '6 小时', 'range.24h': '24 小时', 'range.7d': '7 天',
    connecting: '正在连接 Vigil…',
    unreachable: '无法连接 Vigil：{err}。正在重试…',
    gpuOk: '检测到 {n} 块 GPU · {model} · 驱动 {driver} · CUDA {cuda}',
    gpuOkOne: '检测到 1 块 GPU · {model} · 驱动 {driver} · CUDA {cuda}',
    gpuMixed: '多种型号',
    gpuNone: 'NVIDIA 驱动已加载，但没有报告任何 GPU。',
    noDriver: '未找到 NVIDIA 驱动（未安装 libnvidia-ml.so.1）：GPU 指标已关闭。',
    notResponding: 'NVIDIA 驱动无响应：GPU 指标已暂停，驱动恢复后继续。',
    driverError: 'NVIDIA 驱动启动失败：GPU 指标已关闭。请检查 nvidia-smi。',
    starting: '正在检测 GPU…',
    queryFailed: '查询失败：{err}',
    live: '实时',
    paused: '已暂停',
    updated: '更新于 {t}',
    uptime: '已运行 {d}',
    noData: '暂无数据',
    footer: 'Vigil {version} · 数据目录 {home}',
    'dur.d': '{n} 天', 'dur.h': '{n} 小时', 'dur.m': '{n} 分', 'dur.s': '{n} 秒',
    loading: '加载中…',
  },
};

export const LANGS = ['en', 'zh'];
const STORAGE_KEY = 'vigil.lang';
const STRINGS = { en: {}, zh: {} }; // every table added, merged
const TABLES = []; // [{name, en, zh}], in the order they were added

// Adds a table of strings ({en: {...}, zh: {...}}) under a name (the page's
// id). A key another table already has is an error: pages don't override
// each other's words (put a string both need in SHARED).
export function addStrings(name, table) {
  if (TABLES.some((x) => x.name === name)) throw new Error(`i18n: strings of ${name} added twice`);
  for (const l of LANGS) {
    if (!table?.[l] || typeof table[l] !== 'object') throw new Error(`i18n: ${name} has no ${l} strings`);
    for (const k of Object.keys(table[l])) {
      if (k in STRINGS[l]) throw new Error(`i18n: ${name} redefines ${k} (${TABLES.find((x) => k in x[l])?.name})`);
    }
  }
  for (const l of LANGS) Object.assign(STRINGS[l], table[l]);
  TABLES.push({ name, ...table });
}

// The tables added so far (tests check both languages in each).
export function tables() { return TABLES.slice(); }

addStrings('shared', SHARED);

export function detectLang() {
  try {
    const saved = localStorage.getItem(STORAGE_KEY);
    if (saved && LANGS.includes(saved)) return saved;
  } catch { /* storage disabled */ }
  for (const l of navigator.languages ?? [navigator.language]) {
    const base = String(l).toLowerCase().split('-')[0];
    if (LANGS.includes(base)) return base;
  }
  return 'en';
}

export function saveLang(lang) {
  try { localStorage.setItem(STORAGE_KEY, lang); } catch { /* storage disabled */ }
}

let current = 'en';
export function setLang(lang) {
  current = LANGS.includes(lang) ? lang : 'en';
  document.documentElement.lang = current === 'zh' ? 'zh-CN' : 'en';
}
export function lang() { return current; }

// t('gpuOk', {n: 8}): the string in the current language with {name}s filled.
export function t(key, vars) {
  const s = STRINGS[current][key] ?? STRINGS.en[key] ?? key;
  if (!vars) return s;
  return s.replace(/\{(\w+)\}/g, (m, k) => (k in vars ? String(vars[k]) : m));
}

// A label value from the server: translated when it is a known word, else shown as is.
export function tLabel(prefix, value) {
  const key = `${prefix}.${value}`;
  return STRINGS[current][key] ?? String(value);
}
