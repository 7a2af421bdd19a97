// A thin wrapper over uPlot: fixed series, a DOM legend (so labels follow the
// page language and show the hovered or latest value), an optional dashed
// threshold line (slowdown temperature, power limit, memory total) and an
// x scale pinned to the requested window, so a fresh instance shows where
// data starts instead of stretching a few seconds over the whole width.

import uPlot from 'uplot';
import { cssVar, h, setText } from './dom.js';
import { clock, compact } from './format.js';
import { t } from './i18n.js';

function withAlpha(color, alpha) {
  // Colours come from CSS as #rrggbb.
  const m = /^#([0-9a-f]{6})$/i.exec(color);
  if (!m) return color;
  const n = parseInt(m[1], 16);
  return `rgba(${n >> 16}, ${(n >> 8) & 255}, ${n & 255}, ${alpha})`;
}

const TICK_STEPS = [60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800];

function timeSplits(min, max, widthPx) {
  const maxTicks = Math.max(2, Math.floor(widthPx / 70));
  const step = TICK_STEPS.find((s) => (max - min) / s <= maxTicks) ?? 604800;
  // Local midnight and round hours, not UTC ones.
  const tz = new Date(min * 1000).getTimezoneOffset() * 60;
  const out = [];
  // A label centred on the right edge would be cut in half.
  const edge = ((max - min) * 18) / Math.max(widthPx, 1);
  for (let t = Math.ceil((min - tz) / step) * step + tz; t <= max - edge; t += step) out.push(t);
  return out;
}

export class Chart {
  // series: [{key (i18n), color (CSS var name), fill?: bool, fmt?: v=>string}]
  constructor(parent, { title, series, height = 64, yMax = null, yFloat = false, fmtAxis = compact, axis = true }) {
    this.series = series;
    this.win = null;
    this.threshold = null;
    this.thresholdColor = cssVar('--warn');
    this.yMax = yMax;
    this.yFloat = yFloat;
    this.legendValues = [];
    this.lastData = null;

    const legend = h('div', { class: 'legend' });
    this.titleEl = title ? h('span', { class: 'chart-title' }) : null;
    this.titleKey = title;
    if (this.titleEl) legend.append(this.titleEl);
    this.legendNames = [];
    this.legendItems = [];
    for (const s of series) {
      const name = h('span', { class: 'lg-name' });
      const value = h('span', { class: 'lg-value' });
      const sw = h('i', { class: 'swatch' });
      sw.style.background = cssVar(s.color);
      const item = h('span', { class: 'lg-item' }, sw, name, value);
      legend.append(item);
      this.legendItems.push(item);
      this.legendNames.push(name);
      this.legendValues.push(value);
    }
    this.plotEl = h('div', { class: 'plot' });
    this.emptyEl = h('div', { class: 'chart-empty' });
    this.el = h('div', { class: 'chart empty' }, legend, this.plotEl, this.emptyEl);
    this.el.dataset.points = '0';
    parent.append(this.el);
    this.relabel();

    const grid = cssVar('--grid');
    const axisColor = cssVar('--muted');
    const font = `10px ${cssVar('--font-num') || 'sans-serif'}`;
    const self = this;
    const opts = {
      width: Math.max(100, parent.clientWidth || 300),
      height,
      legend: { show: false },
      cursor: { drag: { x: false, y: false }, points: { size: 5 } },
      select: { show: false },
      // Without an x axis the lowest y label needs room below the plot.
      padding: [6, 4, axis ? 0 : 6, 0],
      scales: {
        x: { time: true, range: (u, min, max) => (self.win ? [self.win.start, self.win.end] : [min, max]) },
        y: {
          range: (u, min, max) => {
            let hi = Math.max(max ?? 0, self.threshold ?? 0);
            // A floating scale (temperature) shows the last few degrees to
            // the threshold instead of squashing them against 0.
            if (self.yFloat && min != null) {
              const lo = Math.max(0, Math.floor((min - 8) / 10) * 10);
              return [lo, Math.ceil((hi + 2) / 5) * 5];
            }
            if (self.yMax != null) hi = Math.max(self.yMax, hi);
            else hi = hi > 0 ? hi * 1.12 : 1;
            return [0, hi];
          },
        },
      },
      axes: [
        {
          show: axis,
          stroke: axisColor, font, size: 20, gap: 2, space: 60,
          grid: { stroke: grid, width: 1 }, ticks: { show: false },
          // Our own ticks: uPlot's defaults put one label at the edge of
          // narrow charts. Local-time multiples of a round step, ~70 px apart.
          splits: (u, i, min, max) => timeSplits(min, max, u.bbox.width / (window.devicePixelRatio || 1)),
          values: (u, splits) => {
            const span = self.win ? self.win.end - self.win.start : 0;
            return splits.map((s) => (span > 2 * 86400 ? clock(s, true).slice(0, 5) : clock(s, span > 86400)));
          },
        },
        {
          stroke: axisColor, font, size: 34, gap: 3, space: height < 90 ? 24 : 30,
          grid: { stroke: grid, width: 1 }, ticks: { show: false },
          values: (u, splits) => splits.map(fmtAxis),
        },
      ],
      series: [
        {},
        ...series.map((s) => {
          const c = cssVar(s.color);
          return {
            stroke: c,
            width: 1.5,
            fill: s.fill ? withAlpha(c, 0.16) : undefined,
            points: { show: false },
            spanGaps: false,
          };
        }),
      ],
      hooks: {
        draw: [(u) => self.drawThreshold(u)],
        setCursor: [(u) => self.showValues(u.cursor.idx)],
      },
    };
    this.u = new uPlot(opts, [[], ...series.map(() => [])], this.plotEl);
    this.ro = new ResizeObserver(() => {
      const w = this.plotEl.clientWidth;
      if (w > 0 && Math.abs(w - this.u.width) > 1) this.u.setSize({ width: w, height });
    });
    this.ro.observe(this.plotEl);
  }

  relabel() {
    setText(this.emptyEl, t('noData'));
    if (this.titleEl) setText(this.titleEl, t(this.titleKey));
    this.series.forEach((s, i) => setText(this.legendNames[i], t(s.key)));
  }

  drawThreshold(u) {
    if (this.threshold == null || !Number.isFinite(this.threshold)) return;
    const y = Math.round(u.valToPos(this.threshold, 'y', true)) + 0.5;
    const ctx = u.ctx;
    ctx.save();
    ctx.strokeStyle = this.thresholdColor;
    ctx.setLineDash([4, 3]);
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.moveTo(u.bbox.left, y);
    ctx.lineTo(u.bbox.left + u.bbox.width, y);
    ctx.stroke();
    ctx.restore();
  }

  // Values at the hovered index, or the latest ones when not hovering.
  showValues(idx) {
    const data = this.lastData;
    if (!data) return;
    this.series.forEach((s, i) => {
      const arr = data[i + 1];
      // Series with no data at all (a CPU mode this kernel lacks) leave the legend.
      this.legendItems[i].hidden = !arr.some((v) => v != null);
      let v = null;
      if (idx != null) v = arr[idx];
      else for (let j = arr.length - 1; j >= 0 && v == null; j--) v = arr[j];
      setText(this.legendValues[i], v == null ? '–' : (s.fmt ?? compact)(v));
    });
  }

  // data: [xs, ys1, ys2, ...] aligned on the window's steps.
  set(win, data, threshold = null) {
    this.win = win;
    this.threshold = threshold;
    this.lastData = data;
    let points = 0;
    for (const v of data[1] ?? []) if (v != null) points++;
    this.el.dataset.points = String(points);
    if (this.el.classList.contains('empty') !== (points === 0)) this.el.classList.toggle('empty');
    this.u.setData(data);
    this.showValues(this.u.cursor.idx ?? null);
  }
}
