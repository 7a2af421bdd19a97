// The log explorer's volume control panel: what volume control did, per log
// source (/api/v1/logs/sources): lines stored, and lines the agent sampled
// away, filtered out or cut at the size limit. Never silent: a summary line
// (amber when anything was lost) and a per-source table, sources that lost
// lines first.

import { h, retranslate, setClass, setText, translated } from '../dom.js';
import * as fmt from '../format.js';
import { lang, t } from '../i18n.js';
import { DataTable, columns } from '../table.js';

const MAX_ROWS = 100;
const COLUMNS = ['source', 'lines', 'bytes', 'sampled', 'filtered', 'truncated'];

const num = (v) => Number(v) || 0;
const lost = (s) => num(s.sampled_lines) + num(s.filtered_lines) + num(s.truncated_lines);

export class VolumePanel {
  constructor() {
    this.sources = null;
    this.filters = {};
    this.i18n = [];
    const T = (key, tag, cls) => translated(this.i18n, t, key, tag, cls);
    this.summary = h('div', { class: 'src-summary', 'data-testid': 'log-volume' });
    this.table = new DataTable({ T, wrapClass: 'table-wrap', tableClass: 'src-table',
      columns: columns('logs.col.', COLUMNS, COLUMNS.filter((c) => c !== 'source')) });
    this.more = h('div', { class: 'src-more' });
    this.el = h('section', { class: 'card panel log-volume' },
      h('div', { class: 'panel-head' }, T('logs.sources', 'h3')),
      this.summary,
      h('details', { class: 'src-details' },
        h('summary', null, T('logs.sourcesDetails', 'span')),
        this.table.el,
        this.more));
    this.relabel();
  }

  // sources: the endpoint's data; filters: the explorer's node/job/container,
  // which narrow the sources counted.
  set(sources, filters) {
    this.sources = sources;
    this.filters = { ...filters };
    this.render();
  }

  relabel() {
    retranslate(this.i18n, t);
    this.render();
  }

  render() {
    const all = this.sources;
    if (!all) { setText(this.summary, t('loading')); return; }
    const f = this.filters;
    const shown = all.filter((s) => ['node', 'job', 'container'].every((k) => !f[k] || s.labels?.[k] === f[k]));
    const sum = (k) => shown.reduce((a, s) => a + num(s[k]), 0);
    const sampled = sum('sampled_lines'), filtered = sum('filtered_lines'), truncated = sum('truncated_lines');
    const nf = (n) => n.toLocaleString(lang() === 'zh' ? 'zh-CN' : 'en-US');
    const head = t('logs.sourcesSummary', { n: shown.length, lines: nf(sum('lines')) });
    const tail = sampled || filtered || truncated
      ? t('logs.dropped', { sampled: nf(sampled), filtered: nf(filtered), truncated: nf(truncated) })
      : t('logs.noDrops');
    setText(this.summary, `${head} · ${tail}`);
    setClass(this.summary, 'warn', sampled + filtered + truncated > 0);
    Object.assign(this.summary.dataset, { sampled, filtered, truncated });

    const sorted = [...shown].sort((a, b) => lost(b) - lost(a) || num(b.lines) - num(a.lines));
    const cell = (v, warn) => h('td', { class: `num${warn && num(v) > 0 ? ' warn-text' : ''}` }, nf(num(v)));
    this.table.set(sorted.slice(0, MAX_ROWS).map((s) => {
      const l = s.labels ?? {};
      const name = [l.node, l.job || l.container || l.container_id].filter(Boolean).join(' · ');
      return h('tr', { class: lost(s) > 0 ? 'dropped' : null },
        h('td', { class: 'src-name', title: l.source ?? null },
          h('div', null, name), h('div', { class: 'src-path' }, l.source ?? '')),
        cell(s.lines), h('td', { class: 'num' }, fmt.bytes(num(s.bytes))),
        cell(s.sampled_lines, true), cell(s.filtered_lines, true), cell(s.truncated_lines, true));
    }));
    const more = sorted.length - MAX_ROWS;
    setText(this.more, more > 0 ? t('logs.moreSources', { n: more }) : '');
  }
}
