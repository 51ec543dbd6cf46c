// dom.js: the only way the console builds elements. Every value becomes a
// text node or a property; nothing is ever parsed as HTML, and links only
// point inside the console (#/...).
import { queryString } from './api.js';

// h builds an element: props are attributes (class, title, ...), event
// listeners (onclick, ...) or properties (value, checked, disabled);
// children are nodes or values shown as text.
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'class') el.className = String(v);
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'href') el.setAttribute('href', safeHref(v));
    else if (k === 'value' || k === 'checked' || k === 'disabled' || k === 'selected') el[k] = v;
    else if (/^(id|title|type|name|placeholder|for|colspan|role|min|max|step|maxlength|aria-[a-z]+|data-[a-z-]+|autocomplete|rows|cols|spellcheck)$/.test(k)) el.setAttribute(k, String(v));
    else throw new Error('dom.h: attribute not allowed: ' + k);
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// safeHref allows only the console's own routes.
function safeHref(v) {
  const s = String(v);
  return s.startsWith('#/') ? s : '#/';
}

// link is a link to a console route; parts are encoded.
export function link(text, ...parts) {
  return h('a', { href: route(...parts) }, text);
}

// route is the hash of a console page.
export function route(...parts) {
  return '#/' + parts.map((p) => encodeURIComponent(String(p))).join('/');
}

// withQuery appends a query to a console route (api.js queryString: empty
// values skipped, arrays repeat).
export function withQuery(hash, query) {
  return hash + queryString(query);
}

export function badge(text, kind) {
  return h('span', { class: 'badge ' + (kind || '') }, text);
}

export function yesNo(v, yes, no) {
  return v ? badge(yes || 'yes', 'ok') : badge(no || 'no', 'off');
}

export function when(t) {
  if (!t) return '—';
  const d = new Date(t);
  return isNaN(d) ? String(t) : d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

// table builds a table: columns are [title, cell(row) → node or text].
export function table(columns, rows, props) {
  return h('table', props || {},
    h('thead', null, h('tr', null, columns.map(([title]) => h('th', null, title)))),
    h('tbody', null, rows.map((r) => h('tr', null, columns.map(([, cell]) => h('td', null, cell(r)))))));
}

export function section(title, ...children) {
  return h('section', null, h('h2', null, title), ...children);
}

export function errorBox(e) {
  const code = e && e.code ? e.code + ': ' : '';
  return h('p', { class: 'error', role: 'alert' }, code + (e && e.message ? e.message : String(e)));
}

// download saves data as a file named name.
export function download(name, data, type) {
  const blob = data instanceof Blob ? data : new Blob([data], { type });
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}
