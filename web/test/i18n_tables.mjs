// Every translation table of the UI for the tests: i18n.js' shared strings
// and each page's pages/*.i18n.js (found by name, so a new page's table is
// checked without touching the tests), added the way the pages add them
// (a key in two tables is an error).
import { readdirSync } from 'node:fs';
import { addStrings, tables } from '../src/i18n.js';

const dir = new URL('../src/pages/', import.meta.url);
export const PAGE_TABLES = readdirSync(dir).filter((f) => f.endsWith('.i18n.js')).sort();
for (const f of PAGE_TABLES) {
  const { default: table } = await import(new URL(f, dir));
  addStrings(f.replace(/\.i18n\.js$/, ''), table);
}

// [{name, en, zh}]: 'shared', then the pages'.
export const TABLES = tables();
// Every string, merged: what t() sees.
export const ALL = {
  en: Object.assign({}, ...TABLES.map((x) => x.en)),
  zh: Object.assign({}, ...TABLES.map((x) => x.zh)),
};
