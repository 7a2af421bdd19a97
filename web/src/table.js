// The tables the pages build the same way: a scrolling wrapper around a
// <table> with a header row of translated column names and a <tbody> whose
// rows are replaced as a whole, and only when what they show changed (a row
// under the pointer being replaced every few seconds can swallow a click,
// and a selection in it, to copy a message, would be lost).

import { h } from './dom.js';

export class DataTable {
  // columns: [{key (i18n), num?: right-aligned}]; T(key, tag, cls): the
  // page's maker of translated elements (so the header follows the language).
  constructor({ T, columns, wrapClass = 'jobs-table-wrap', tableClass = 'jobs-table', testid = null, hidden = false }) {
    this.body = h('tbody');
    this.table = h('table', { class: tableClass, 'data-testid': testid },
      h('thead', null, h('tr', null, columns.map((c) => T(c.key, 'th', c.num ? 'num' : null)))),
      this.body);
    this.el = h('div', { class: wrapClass, hidden }, this.table);
    this.key = null;
  }

  // Replaces the rows with makeRows()'s when `key` (a string of everything
  // they show) differs from the last call's; returns whether it did.
  update(key, makeRows) {
    if (key === this.key) return false;
    this.key = key;
    this.body.replaceChildren(...makeRows());
    return true;
  }

  // Replaces the rows whatever they were.
  set(rows) {
    this.key = null;
    this.body.replaceChildren(...rows);
  }
}

// Columns named `${prefix}${name}`, right-aligned when in `num`.
export function columns(prefix, names, num = []) {
  return names.map((n) => ({ key: `${prefix}${n}`, num: num.includes(n) }));
}
