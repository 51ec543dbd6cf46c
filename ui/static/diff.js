// diff.js: a line diff of two texts (longest common subsequence after
// trimming the common prefix and suffix), shown as text.
import { h } from './dom.js';

const MAX_CELLS = 4e6;

// lineDiff returns [{op: ' '|'-'|'+', line}] turning a into b.
export function lineDiff(a, b) {
  const x = String(a).split('\n');
  const y = String(b).split('\n');
  let pre = 0;
  while (pre < x.length && pre < y.length && x[pre] === y[pre]) pre++;
  let suf = 0;
  while (suf < x.length - pre && suf < y.length - pre && x[x.length - 1 - suf] === y[y.length - 1 - suf]) suf++;
  const xs = x.slice(pre, x.length - suf);
  const ys = y.slice(pre, y.length - suf);
  const out = x.slice(0, pre).map((line) => ({ op: ' ', line }));
  const n = xs.length, m = ys.length;
  if (n * m > MAX_CELLS) {
    xs.forEach((line) => out.push({ op: '-', line }));
    ys.forEach((line) => out.push({ op: '+', line }));
  } else {
    const w = m + 1;
    const lcs = new Uint32Array((n + 1) * w);
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        lcs[i * w + j] = xs[i] === ys[j] ? lcs[(i + 1) * w + j + 1] + 1 : Math.max(lcs[(i + 1) * w + j], lcs[i * w + j + 1]);
      }
    }
    let i = 0, j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && xs[i] === ys[j]) { out.push({ op: ' ', line: xs[i] }); i++; j++; }
      else if (i < n && (j === m || lcs[(i + 1) * w + j] >= lcs[i * w + j + 1])) { out.push({ op: '-', line: xs[i] }); i++; }
      else { out.push({ op: '+', line: ys[j] }); j++; }
    }
  }
  x.slice(x.length - suf).forEach((line) => out.push({ op: ' ', line }));
  return out;
}

// diffView shows lineDiff(a, b).
export function diffView(a, b) {
  const rows = lineDiff(a, b).map(({ op, line }) =>
    h('div', { class: 'diff-line ' + (op === '+' ? 'add' : op === '-' ? 'del' : 'same') }, op + ' ' + line));
  return h('pre', { class: 'diff', 'data-testid': 'diff' }, rows);
}
