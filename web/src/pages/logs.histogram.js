// The log explorer's histogram: stacked bars of log lines per level over
// time, drawn on one canvas (cheaper than a chart library for ~90 bars), with
// a DOM legend and a hover readout so every word follows the page language.

import { cssVar, h, setText } from '../dom.js';
import { clock, compact } from '../format.js';
import { t } from '../i18n.js';
import { LEVELS } from './logs.model.js';

const PAD_LEFT = 34, PAD_BOTTOM = 18, PAD_TOP = 6;

export class Histogram {
  constructor(parent, { height = 110 } = {}) {
    this.height = height;
    this.shape = null;
    this.win = null;
    this.hover = -1;
    this.legendItems = LEVELS.map((l) => {
      const sw = h('i', { class: `swatch lv-bg-${l}` });
      const name = h('span', { class: 'lg-name' });
      const value = h('span', { class: 'lg-value' });
      const el = h('span', { class: 'lg-item', 'data-level': l, hidden: true }, sw, name, value);
      return { level: l, el, name, value };
    });
    this.readout = h('span', { class: 'chart-title hist-readout' });
    this.canvas = h('canvas', { class: 'hist-canvas', 'aria-hidden': 'true' });
    this.emptyEl = h('div', { class: 'chart-empty' });
    this.el = h('div', { class: 'chart hist empty', 'data-testid': 'log-histogram' },
      h('div', { class: 'legend' }, this.readout, this.legendItems.map((i) => i.el)),
      h('div', { class: 'plot' }, this.canvas), this.emptyEl);
    this.el.dataset.total = '0';
    this.el.dataset.bars = '0';
    parent.append(this.el);
    this.canvas.addEventListener('mousemove', (e) => this.onMove(e));
    this.canvas.addEventListener('mouseleave', () => { this.hover = -1; this.draw(); this.relabel(); });
    this.ro = new ResizeObserver(() => this.draw());
    this.ro.observe(this.el);
    this.relabel();
  }

  relabel() {
    setText(this.emptyEl, t('logs.noLinesHist'));
    const s = this.shape;
    const bar = s && this.hover >= 0 ? s.bars[this.hover] : null;
    for (const [k, item] of this.legendItems.entries()) {
      setText(item.name, t(`level.${item.level}`));
      const n = bar ? bar.counts[k] : s ? s.totals[item.level] : 0;
      setText(item.value, compact(n) || '0');
      item.el.hidden = !s || s.totals[item.level] === 0;
    }
    if (bar) {
      const span = this.win ? this.win.end - this.win.start : 0;
      setText(this.readout, t('logs.histAt', { t: clock(bar.t, span > 86400), n: bar.total }));
    } else {
      setText(this.readout, s ? t('logs.histTotal', { n: s.total }) : '');
    }
  }

  // shape: shapeHistogram()'s result; win: {start, end} in seconds.
  set(shape, win) {
    this.shape = shape;
    this.win = win;
    this.el.dataset.total = String(shape.total);
    this.el.dataset.bars = String(shape.bars.length);
    this.el.classList.toggle('empty', shape.total === 0);
    this.draw();
    this.relabel();
  }

  barAt(x) {
    const s = this.shape;
    if (!s || !this.win || s.bars.length === 0) return -1;
    const w = this.canvas.clientWidth - PAD_LEFT;
    const tt = this.win.start + ((x - PAD_LEFT) / w) * (this.win.end - this.win.start);
    const i = Math.floor((tt - s.start) / s.step);
    return i >= 0 && i < s.bars.length ? i : -1;
  }

  onMove(e) {
    const r = this.canvas.getBoundingClientRect();
    const i = this.barAt(e.clientX - r.left);
    if (i !== this.hover) { this.hover = i; this.draw(); this.relabel(); }
  }

  draw() {
    const cv = this.canvas;
    const width = this.el.clientWidth;
    if (width <= 0) return;
    const dpr = window.devicePixelRatio || 1;
    const H = this.height;
    if (cv.width !== Math.round(width * dpr) || cv.height !== Math.round(H * dpr)) {
      cv.width = Math.round(width * dpr);
      cv.height = Math.round(H * dpr);
      cv.style.width = `${width}px`;
      cv.style.height = `${H}px`;
    }
    const ctx = cv.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, width, H);
    const s = this.shape, win = this.win;
    if (!s || !win) return;
    const plotW = width - PAD_LEFT, plotH = H - PAD_BOTTOM - PAD_TOP;
    const max = Math.max(1, s.max);
    const grid = cssVar('--grid'), muted = cssVar('--muted');
    ctx.font = `10px ${cssVar('--font-num') || 'monospace'}`;
    ctx.fillStyle = muted;
    ctx.strokeStyle = grid;
    ctx.lineWidth = 1;
    // Two y gridlines: 0 and max (counts are integers; more lines is clutter).
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    for (const v of [0, max]) {
      const y = Math.round(PAD_TOP + plotH - (v / max) * plotH) + 0.5;
      ctx.beginPath(); ctx.moveTo(PAD_LEFT, y); ctx.lineTo(width, y); ctx.stroke();
      ctx.fillText(compact(v), PAD_LEFT - 4, y);
    }
    const span = Math.max(1, win.end - win.start);
    const xOf = (tt) => PAD_LEFT + ((tt - win.start) / span) * plotW;
    const colors = LEVELS.map((l) => cssVar(`--lv-${l}`));
    const barW = Math.max(1, (s.step / span) * plotW - (s.step / span * plotW > 4 ? 1 : 0));
    s.bars.forEach((b, i) => {
      if (b.total === 0) return;
      const x = xOf(b.t);
      let y = PAD_TOP + plotH;
      for (let k = 0; k < LEVELS.length; k++) {
        if (!b.counts[k]) continue;
        const hgt = (b.counts[k] / max) * plotH;
        ctx.globalAlpha = this.hover === -1 || this.hover === i ? 1 : 0.45;
        ctx.fillStyle = colors[k];
        ctx.fillRect(x, y - hgt, barW, hgt);
        y -= hgt;
      }
    });
    ctx.globalAlpha = 1;
    // Time labels ~90 px apart at round multiples of the bar step.
    ctx.fillStyle = muted;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'bottom';
    const ticks = Math.max(2, Math.floor(plotW / 90));
    const raw = span / ticks;
    const nice = [10, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800];
    const tickStep = nice.find((n) => n >= raw) ?? 604800;
    const tz = new Date(win.start * 1000).getTimezoneOffset() * 60;
    for (let tt = Math.ceil((win.start - tz) / tickStep) * tickStep + tz; tt <= win.end; tt += tickStep) {
      const x = xOf(tt);
      if (x < PAD_LEFT + 16 || x > width - 16) continue;
      ctx.fillText(clock(tt, span > 86400), x, H - 2);
    }
  }
}
