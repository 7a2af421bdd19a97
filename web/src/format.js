// Formatting shared by every page: numbers and units (the same in both
// languages: units are international), local date and time on a 24 h clock,
// and durations (in the page's language).

import { t } from './i18n.js';

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

// ---------------------------------------------------------------------------
// Time: local, language-neutral, 24 h.

function pad(n, w = 2) { return String(n).padStart(w, '0'); }

function hms(d) { return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`; }
function monthDay(d) { return `${pad(d.getMonth() + 1)}-${pad(d.getDate())}`; }

// Axis labels (seconds): "14:05", or "11-30 14:05" when the range spans days.
export function clock(sec, withDate) {
  const d = new Date(sec * 1000);
  const hm = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  return withDate ? `${monthDay(d)} ${hm}` : hm;
}

// "14:05:09" (seconds).
export function clockSeconds(sec) {
  return hms(new Date(sec * 1000));
}

// "2025-11-30 14:05:09" (ms); '–' when unknown.
export function dateTime(ms) {
  if (!Number.isFinite(ms)) return '–';
  const d = new Date(ms);
  return `${d.getFullYear()}-${monthDay(d)} ${hms(d)}`;
}

// "14:05:09", or "11-30 14:05:09" with the date (ms); '–' when unknown.
export function shortTime(ms, withDate) {
  if (!Number.isFinite(ms)) return '–';
  const d = new Date(ms);
  return withDate ? `${monthDay(d)} ${hms(d)}` : hms(d);
}

// A log line's time: "14:05:09.123", with the date when the range spans days (ms).
export function lineTime(ms, withDate) {
  const d = new Date(ms);
  const s = `${hms(d)}.${pad(d.getMilliseconds(), 3)}`;
  return withDate ? `${monthDay(d)} ${s}` : s;
}

// "1h 46m", "3d 2h", "45s" (in Chinese "1 小时 46 分"): the two largest units.
export function duration(sec) {
  sec = Math.max(0, Math.floor(sec));
  const d = Math.floor(sec / 86400), hh = Math.floor((sec % 86400) / 3600);
  const m = Math.floor((sec % 3600) / 60);
  if (d > 0) return `${t('dur.d', { n: d })} ${t('dur.h', { n: hh })}`;
  if (hh > 0) return `${t('dur.h', { n: hh })} ${t('dur.m', { n: m })}`;
  if (m > 0) return t('dur.m', { n: m });
  return t('dur.s', { n: sec });
}
