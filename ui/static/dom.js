// dom.js: the only way the console builds elements. Every value becomes a
// text node or a property; nothing is ever parsed as HTML, and links only
// point inside the console (#/...). Text is shown visibly (visible): a
// character that could hide or reorder what is shown is never inserted
// raw.
import { queryString } from './api.js';

// HIDDEN matches what internal/text's Visible escapes (text.Hidden: the C0
// controls but newline and tab, DEL, C1, the format characters — bidi
// controls among them —, U+2028, U+2029 and the fillers that render as
// nothing), a lone surrogate (the console's form of a byte that is not
// UTF-8), and, for visibleText only, a backslash followed by "u".
// HIDDEN_LINE escapes newline and tab too. The shared cases:
// internal/text/testdata/visible.json (TestConsoleVisible).
const HIDDEN_CLASS = '[\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f\\u2028\\u2029\\u115f\\u1160\\u3164\\uffa0\\p{Cf}]|[\\ud800-\\udfff]';
const HIDDEN = new RegExp(HIDDEN_CLASS + '|\\\\(?=u)', 'gu');
const HIDDEN_LINE = new RegExp(HIDDEN_CLASS + '|[\\n\\t]|\\\\(?=u)', 'gu');
const MARKED = new RegExp(HIDDEN_CLASS, 'gu');

// escapeOf is a character's escape: \u001b, or \u{e0001} above U+FFFF.
function escapeOf(ch) {
  const cp = ch.codePointAt(0);
  return cp > 0xffff ? '\\u{' + cp.toString(16) + '}' : '\\u' + cp.toString(16).padStart(4, '0');
}

// visibleText is text.Visible's rendering of s as a string, for where no
// element can mark an escape (a graph label on the canvas, an attribute,
// an editor): every hidden character as its escape, and a backslash
// followed by "u" as \u005c, so every \u is an escape. line: newline and
// tab too (text.VisibleLine).
export function visibleText(s, line) {
  return String(s).replace(line ? HIDDEN_LINE : HIDDEN, escapeOf);
}

// editableText is s for an editor: every hidden character as its escape
// (as text), backslashes as written.
export function editableText(s) {
  return String(s).replace(MARKED, escapeOf);
}

// visible is s as nodes: text nodes, and each hidden character as a
// marked <span class="esc"> showing its escape (\u001b), titled with its
// code point. The mark tells an escape from the same text typed, so a
// backslash stays as written.
export function visible(s) {
  const str = String(s);
  const out = document.createDocumentFragment();
  let last = 0;
  for (const m of str.matchAll(MARKED)) {
    if (m.index > last) out.append(document.createTextNode(str.slice(last, m.index)));
    const esc = document.createElement('span');
    esc.className = 'esc';
    esc.textContent = escapeOf(m[0]);
    esc.setAttribute('title', 'hidden character U+' + m[0].codePointAt(0).toString(16).toUpperCase().padStart(4, '0'));
    out.append(esc);
    last = m.index + m[0].length;
  }
  if (last < str.length) out.append(document.createTextNode(str.slice(last)));
  return out;
}

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
    else if (k === 'title' || k === 'placeholder' || k === 'aria-label') el.setAttribute(k, visibleText(v, true));
    else if (/^(id|type|name|for|colspan|role|min|max|step|maxlength|aria-[a-z]+|data-[a-z-]+|autocomplete|rows|cols|spellcheck)$/.test(k)) el.setAttribute(k, String(v));
    else throw new Error('dom.h: attribute not allowed: ' + k);
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : visible(c));
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

// STATES are the classifications every page colours the same way: one
// class per state (state-read_only, …), coloured once in style.css's
// :root (--state-read_only, …), which the graph explorer reads too
// (stateColour).
export const STATES = { read_only: 'read-only', state_changing: 'state-changing', unknown: 'unknown' };

// stateBadge is the badge of a classification: readOnly true, false, or
// a state name (read_only, state_changing, unknown).
export function stateBadge(state) {
  const s = state === true ? 'read_only' : state === false ? 'state_changing' : (state in STATES ? state : 'unknown');
  return h('span', { class: 'badge state state-' + s, 'data-state': s }, STATES[s]);
}

// stateColour is a state's colour as style.css defines it.
export function stateColour(state) {
  return getComputedStyle(document.documentElement).getPropertyValue('--state-' + state).trim() || '#868e96';
}

// codeHash shows a code hash truncated to n characters (the whole hash in
// its title), never broken across lines.
export function codeHash(hash, n) {
  const s = String(hash || '');
  const cut = n && s.length > n;
  return h('code', { class: 'hash', title: s }, cut ? s.slice(0, n) + '…' : s);
}

// name shows an identifier (a procedure or tool name) that may break only
// after its separators ("__", "_", ".", "-"), never inside a word.
export function name(s) {
  const out = document.createDocumentFragment();
  for (const part of String(s).split(/(?<=__|[._-])(?!_)/)) {
    out.append(visible(part), document.createElement('wbr'));
  }
  return out;
}

// notify shows a confirmation (or, with error, a failure) of an action in
// the page's notice bar, which outlives a page's re-render.
export function notify(text, error) {
  const bar = document.getElementById('notice');
  if (!bar) return;
  bar.replaceChildren(h('span', { class: error ? 'notice-text error' : 'notice-text' }, text));
  bar.dataset.kind = error ? 'error' : 'ok';
  bar.dataset.seq = String(Number(bar.dataset.seq || 0) + 1);
  bar.hidden = false;
  clearTimeout(notify.timer);
  notify.timer = setTimeout(() => { bar.hidden = true; }, 15000);
}

// yesNo is a yes/no badge (for flags that are not a classification:
// those use stateBadge).
export function yesNo(v, yes, no) {
  return v ? badge(yes || 'yes', 'ok') : badge(no || 'no', 'off');
}

export function when(t) {
  if (!t) return '—';
  const d = new Date(t);
  return isNaN(d) ? String(t) : d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

// table builds a table: columns are [title, cell(row) → node or text].
// The table sits in a .table-wrap that scrolls when it is too wide.
export function table(columns, rows, props) {
  return h('div', { class: 'table-wrap' }, h('table', props || {},
    h('thead', null, h('tr', null, columns.map(([title]) => h('th', null, title)))),
    h('tbody', null, rows.map((r) => h('tr', null, columns.map(([, cell]) => h('td', null, cell(r))))))));
}

// link text of a name: breakable only after its separators (name).
export function nameLink(text, ...parts) {
  return h('a', { href: route(...parts) }, name(text));
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
