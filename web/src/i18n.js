// English and Simplified Chinese. The page follows navigator.languages until
// the user picks a language, which is then remembered in localStorage.
// Every visible string lives here, in both languages.

const STRINGS = {
  en: {
    pageTitle: 'Vigil — {node}',
    language: 'Language',
    switchTo: '中文',
    range: 'Time range',
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
    queryMissing: 'This Vigil has no query API (/api/v1/query_range): charts stay empty.',
    queryFailed: 'A query failed: {err}',
    live: 'Live',
    paused: 'Paused',
    updated: 'Updated {t}',
    node: 'Node',
    uptime: 'Up {d}',
    gpus: 'GPUs',
    system: 'System',
    noGpus: 'No GPU to show.',
    'sum.util': 'GPU utilization',
    'sum.utilSub': 'average of {n}',
    'sum.mem': 'GPU memory',
    'sum.hot': 'Hottest GPU',
    'sum.hotSub': 'GPU {gpu} · slowdown at {limit}',
    'sum.power': 'GPU power',
    'sum.idle': 'Idle GPUs',
    'sum.idleSub': 'below 5% utilization',
    'sum.of': 'of {total}',
    gpu: 'GPU {i}',
    util: 'Utilization',
    mem: 'Memory',
    temp: 'Temperature',
    power: 'Power',
    pcie: 'PCIe',
    tx: 'TX',
    rx: 'RX',
    slowdownAt: 'slowdown {v}°',
    limitOf: 'limit {v}',
    ofTotal: 'of {v}',
    'flag.hot': 'Near thermal slowdown',
    'flag.throttle': 'Thermal slowdown',
    'flag.idle': 'Idle',
    'chart.util': 'Utilization and memory, %',
    'chart.temp': 'Temperature, °C',
    'chart.power': 'Power, W',
    'series.util': 'utilization',
    'series.mem': 'memory',
    'series.temp': 'temperature',
    'series.power': 'power',
    'series.limit': 'limit',
    cpu: 'CPU',
    cpuSub: '{busy} of {cores} cores busy',
    'chart.cpu': 'CPU time by mode, %',
    memory: 'Memory',
    memSub: '{used} used of {total}',
    'chart.memory': 'Memory used',
    memUsedGiB: 'used',
    disk: 'Disk I/O',
    diskSub: 'read {r} · write {w}',
    read: 'read',
    write: 'write',
    net: 'Network',
    netSub: 'in {rx} · out {tx}',
    recv: 'in',
    send: 'out',
    noData: 'No data yet',
    footer: 'Vigil {version} · data in {home}',
    'mode.user': 'user', 'mode.system': 'system', 'mode.iowait': 'iowait',
    'mode.irq': 'irq', 'mode.softirq': 'softirq', 'mode.nice': 'nice',
    'mode.steal': 'steal', 'mode.idle': 'idle',
    'dur.d': '{n}d', 'dur.h': '{n}h', 'dur.m': '{n}m', 'dur.s': '{n}s',
  },
  zh: {
    pageTitle: 'Vigil — {node}',
    language: '语言',
    switchTo: 'English',
    range: '时间范围',
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
    queryMissing: '此 Vigil 没有查询 API（/api/v1/query_range）：图表为空。',
    queryFailed: '查询失败：{err}',
    live: '实时',
    paused: '已暂停',
    updated: '更新于 {t}',
    node: '节点',
    uptime: '已运行 {d}',
    gpus: 'GPU',
    system: '系统',
    noGpus: '没有可显示的 GPU。',
    'sum.util': 'GPU 利用率',
    'sum.utilSub': '{n} 块平均',
    'sum.mem': 'GPU 显存',
    'sum.hot': '温度最高的 GPU',
    'sum.hotSub': 'GPU {gpu} · 降频阈值 {limit}',
    'sum.power': 'GPU 功耗',
    'sum.idle': '空闲 GPU',
    'sum.idleSub': '利用率低于 5%',
    'sum.of': '共 {total}',
    gpu: 'GPU {i}',
    util: '利用率',
    mem: '显存',
    temp: '温度',
    power: '功耗',
    pcie: 'PCIe',
    tx: '发送',
    rx: '接收',
    slowdownAt: '降频 {v}°',
    limitOf: '上限 {v}',
    ofTotal: '共 {v}',
    'flag.hot': '接近过热降频',
    'flag.throttle': '过热降频',
    'flag.idle': '空闲',
    'chart.util': '利用率与显存，%',
    'chart.temp': '温度，°C',
    'chart.power': '功耗，W',
    'series.util': '利用率',
    'series.mem': '显存',
    'series.temp': '温度',
    'series.power': '功耗',
    'series.limit': '上限',
    cpu: 'CPU',
    cpuSub: '{cores} 核中 {busy} 核繁忙',
    'chart.cpu': '各模式 CPU 时间，%',
    memory: '内存',
    memSub: '已用 {used}，共 {total}',
    'chart.memory': '已用内存',
    memUsedGiB: '已用',
    disk: '磁盘 I/O',
    diskSub: '读 {r} · 写 {w}',
    read: '读',
    write: '写',
    net: '网络',
    netSub: '入 {rx} · 出 {tx}',
    recv: '入',
    send: '出',
    noData: '暂无数据',
    footer: 'Vigil {version} · 数据目录 {home}',
    'mode.user': '用户态', 'mode.system': '内核态', 'mode.iowait': 'I/O 等待',
    'mode.irq': '硬中断', 'mode.softirq': '软中断', 'mode.nice': '低优先级',
    'mode.steal': '被抢占', 'mode.idle': '空闲',
    'dur.d': '{n} 天', 'dur.h': '{n} 小时', 'dur.m': '{n} 分', 'dur.s': '{n} 秒',
  },
};

export const LANGS = Object.keys(STRINGS);
// For tests: the key sets must match.
export const STRINGS_FOR_TEST = STRINGS;
const STORAGE_KEY = 'vigil.lang';

export function detectLang() {
  try {
    const saved = localStorage.getItem(STORAGE_KEY);
    if (saved && STRINGS[saved]) return saved;
  } catch { /* storage disabled */ }
  for (const l of navigator.languages ?? [navigator.language]) {
    const base = String(l).toLowerCase().split('-')[0];
    if (STRINGS[base]) return base;
  }
  return 'en';
}

export function saveLang(lang) {
  try { localStorage.setItem(STORAGE_KEY, lang); } catch { /* storage disabled */ }
}

let current = 'en';
export function setLang(lang) {
  current = STRINGS[lang] ? lang : 'en';
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

export function duration(sec) {
  sec = Math.max(0, Math.floor(sec));
  const d = Math.floor(sec / 86400), hh = Math.floor((sec % 86400) / 3600);
  const m = Math.floor((sec % 3600) / 60);
  if (d > 0) return `${t('dur.d', { n: d })} ${t('dur.h', { n: hh })}`;
  if (hh > 0) return `${t('dur.h', { n: hh })} ${t('dur.m', { n: m })}`;
  if (m > 0) return t('dur.m', { n: m });
  return t('dur.s', { n: sec });
}
