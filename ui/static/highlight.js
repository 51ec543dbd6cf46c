// highlight.js: simple syntax highlighting of Starlark and Python code,
// built from text nodes inside spans (never HTML), hidden characters
// marked (dom.js visible).
import { h, visible } from './dom.js';

const KEYWORDS = new Set(('and as assert async await break class continue def del elif else except finally for from global if ' +
  'import in is lambda load nonlocal not or pass raise return try while with yield True False None').split(' '));

const TOKEN = /(#[^\n]*)|("""[\s\S]*?(?:"""|$)|'''[\s\S]*?(?:'''|$)|"(?:\\.|[^"\\\n])*"?|'(?:\\.|[^'\\\n])*'?)|(\b\d+(?:\.\d+)?\b)|([A-Za-z_][A-Za-z0-9_]*)/g;

// highlight returns a <pre><code> of code with comments, strings, numbers,
// keywords and tools.X calls in spans.
export function highlight(code) {
  const out = h('code', { class: 'code' });
  let last = 0;
  let prevTools = false;
  for (const m of String(code).matchAll(TOKEN)) {
    if (m.index > last) out.append(visible(code.slice(last, m.index)));
    const [text, comment, str, num, ident] = m;
    let cls = '';
    if (comment) cls = 'tok-comment';
    else if (str) cls = 'tok-string';
    else if (num) cls = 'tok-number';
    else if (ident && KEYWORDS.has(ident)) cls = 'tok-keyword';
    else if (ident && prevTools) cls = 'tok-tool';
    else if (ident === 'tools') cls = 'tok-builtin';
    prevTools = ident === 'tools' && code[m.index + text.length] === '.';
    out.append(cls ? h('span', { class: cls }, text) : visible(text));
    last = m.index + text.length;
  }
  if (last < code.length) out.append(visible(code.slice(last)));
  return h('pre', { class: 'code' }, out);
}
