// Number formatting shared by both languages (units are international).

export function fixed(v, digits = 0) {
  return Number.isFinite(v) ? v.toFixed(digits) : '–';
}

export function percent(v) {
  return Number.isFinite(v) ? `${Math.round(v)}%` : '–';
}

const BIN = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
export function bytes(v, digits = 1) {
  if (!Number.isFinite(v)) return '–';
  let i = 0;
  while (Math.abs(v) >= 1024 && i < BIN.length - 1) { v /= 1024; i++; }
  return `${v.toFixed(i === 0 ? 0 : digits)} ${BIN[i]}`;
}

const DEC = ['B/s', 'kB/s', 'MB/s', 'GB/s', 'TB/s'];
export function rate(v) {
  if (!Number.isFinite(v)) return '–';
  let i = 0;
  while (Math.abs(v) >= 1000 && i < DEC.length - 1) { v /= 1000; i++; }
  return `${v.toFixed(v >= 100 || i === 0 ? 0 : 1)} ${DEC[i]}`;
}

// Short axis labels: 1.2k, 3.4M.
export function compact(v) {
  if (!Number.isFinite(v)) return '';
  const a = Math.abs(v);
  if (a >= 1e12) return (v / 1e12).toFixed(a >= 1e13 ? 0 : 1) + 'T';
  if (a >= 1e9) return (v / 1e9).toFixed(a >= 1e10 ? 0 : 1) + 'G';
  if (a >= 1e6) return (v / 1e6).toFixed(a >= 1e7 ? 0 : 1) + 'M';
  if (a >= 1e3) return (v / 1e3).toFixed(a >= 1e4 ? 0 : 1) + 'k';
  return Number.isInteger(v) ? String(v) : v.toFixed(a < 1 ? 2 : 1);
}

function pad(n) { return String(n).padStart(2, '0'); }

// Language-neutral 24 h clock: "14:05", or "11-30 14:05" when the range spans days.
export function clock(sec, withDate) {
  const d = new Date(sec * 1000);
  const hm = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  return withDate ? `${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${hm}` : hm;
}

export function clockSeconds(sec) {
  const d = new Date(sec * 1000);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}
