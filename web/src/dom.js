// Tiny DOM helpers shared by every page. Everything the page shows from the
// server (model names, hostnames, label values) goes through text nodes, never
// through HTML parsing, so an untrusted string can't inject markup or script.

export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  if (props) {
    for (const [k, v] of Object.entries(props)) {
      if (v == null || v === false) continue;
      if (k === 'class') el.className = v;
      else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  for (const c of children.flat(Infinity)) {
    if (c == null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// Sets text only when it changed: refreshes every 2 s would otherwise churn
// layout for nothing.
export function setText(el, s) {
  s = s == null ? '' : String(s);
  if (el.textContent !== s) el.textContent = s;
}

export function setClass(el, name, on) {
  if (el.classList.contains(name) !== !!on) el.classList.toggle(name, !!on);
}

// A toggle button's state: the `active` class and aria-pressed.
export function setPressed(el, on) {
  setClass(el, 'active', on);
  el.setAttribute('aria-pressed', String(!!on));
}

// A CSS custom property of the page (colours for canvases and charts).
export function cssVar(name) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
}

// Bar fill as a fraction. CSSOM writes are allowed under the strict CSP that
// forbids style attributes.
export function setBar(el, frac) {
  const pct = Number.isFinite(frac) ? Math.max(0, Math.min(1, frac)) * 100 : 0;
  el.style.width = pct.toFixed(1) + '%';
}

// An element whose text is the translation of `key`, remembered in
// `registry` so that retranslate() can relabel it when the language changes.
export function translated(registry, translate, key, tag = 'span', cls = null) {
  const el = h(tag, cls ? { class: cls } : null, translate(key));
  registry.push([el, key]);
  return el;
}

export function retranslate(registry, translate) {
  for (const [el, key] of registry) setText(el, translate(key));
}

// Our own text with `code` spans ("run it with `vigil run`"): the parts are
// text nodes in <code> elements, never HTML.
export function withCode(s) {
  return String(s).split('`').map((part, i) => (i % 2 ? h('code', null, part) : part));
}
