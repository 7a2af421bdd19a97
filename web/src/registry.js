// The page registry: every page (a tab) registers itself here from its own
// module under pages/ (imported, in tab order, by pages/index.js); the shell
// (main.js) builds the tabs and routes the URL hash from this list alone.
//
// registerPage({
//   id: 'jobs',          // the tab's data-page, and the page's name in errors
//   hash: 'jobs',        // URL: #jobs, #jobs&range=1h&...; '' for the page any
//                        // other hash shows (the overview: #range=1h)
//   label: 'nav.jobs',   // the tab's i18n key
//   strings,             // the page's translations, {en: {...}, zh: {...}}
//   rangePicker: false,  // whether the header's range picker shows (default true)
//   create(shell),       // makes the page once, at start (see below)
// })
//
// shell: { ranges: [[key, seconds], ...] (the picker's), range(): {key,
// seconds} (the picked one), status(): {status, error} (/api/v1/status) }.
//
// create() returns the page: { el } (its root element, hidden until shown)
// with these hooks, each optional but show and hide:
//   show(hash)        shown (mount), and again on every hash change while shown
//   hide()            another page is shown (unmount): stop its timers, requests
//   relabel()         the language changed
//   onVisibility(hidden)  the browser tab was hidden or shown again
//   onRange(key)      the picker changed while shown; it writes the URL (by
//                     default the shell writes `#<hash>&range=<key>`)
//   load({seconds, signal}) → data, and update(data): data the page fetches
//                     with the shell's status refresh (the overview); update()
//                     runs after the status line is rendered; a range change
//                     refreshes at once
//   refreshMs(seconds) how often the shell refreshes while shown (default
//                     10 s: the status line only)
//   badge             an element the shell puts in the page's tab, shown on
//                     every page (the Alerts tab's count of firing alerts);
//                     the page keeps it up to date itself, also while
//                     hidden, pausing while the browser tab is (onVisibility
//                     is called on every page)

import { addStrings } from './i18n.js';

const PAGES = [];

export function registerPage(def) {
  const { id, hash, label, create } = def;
  if (!id || typeof create !== 'function' || !label || typeof hash !== 'string') {
    throw new Error(`registerPage: ${id ?? '?'} needs id, hash, label and create()`);
  }
  if (PAGES.some((p) => p.id === id)) throw new Error(`registerPage: ${id} registered twice`);
  if (PAGES.some((p) => p.hash === hash)) throw new Error(`registerPage: ${id} takes #${hash} of another page`);
  if (!/^[a-z][a-z0-9-]*$|^$/.test(hash)) throw new Error(`registerPage: ${id}: bad hash ${hash}`);
  if (def.strings) addStrings(id, def.strings);
  PAGES.push({ ...def, rangePicker: def.rangePicker !== false });
}

// Every page, in registration (tab) order.
export function pages() { return PAGES.slice(); }

// The page a URL hash shows: the one whose hash starts it (#jobs, #jobs&...),
// else the default page (hash ''), else the first.
export function pageForHash(hash) {
  const m = /^#([a-z][a-z0-9-]*)(&|$)/.exec(String(hash ?? ''));
  return (m && PAGES.find((p) => p.hash && p.hash === m[1]))
    ?? PAGES.find((p) => p.hash === '') ?? PAGES[0];
}

// A page's URL for a range: #range=1h for the default page, #jobs&range=1h.
export function pageHash(page, range) {
  return page.hash ? `#${page.hash}&range=${range}` : `#range=${range}`;
}
