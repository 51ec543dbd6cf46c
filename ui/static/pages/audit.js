// pages/audit.js: the audit log, filtered on the server (GET /v1/decisions:
// kind, outcome, procedure, actor, a time range), paging back with the
// answer's next, and the filtered records downloaded as JSON Lines.
import { h, route, withQuery, errorBox, notify, download } from '../dom.js';
import { get } from '../api.js';
import { auditTable } from './procedure.js';

// The API's decision kinds (procedures.DecisionKinds; unretire is a reason of retire).
const KINDS = ['invoke', 'grant', 'revoke', 'promote', 'catalogue', 'retire', 'turn', 'approval', 'policy', 'store', 'drift', 'health', 'recordings', 'token'];

// PAGE is the records a page shows; DOWNLOAD_PAGE and DOWNLOAD_MAX bound a
// download (docs/api.md "Audit": the console walks next, at most
// DOWNLOAD_MAX records, and says so when it stopped there).
const PAGE = 100;
const DOWNLOAD_PAGE = 1000;
const DOWNLOAD_MAX = 100000;

// FILTERS are the page's query parameters that filter (the API's names).
const FILTERS = ['kind', 'outcome', 'procedure', 'actor', 'since', 'until'];

// utcInput is an API time (RFC 3339, UTC) as a datetime-local value read as
// UTC ("" for none); apiTime the reverse.
function utcInput(t) {
  const d = t ? new Date(t) : null;
  return d && !isNaN(d) ? d.toISOString().slice(0, 19) : '';
}
function apiTime(v) {
  if (!v) return '';
  const s = v.length === 16 ? v + ':00' : v;
  const d = new Date(s + 'Z');
  return isNaN(d) ? v : d.toISOString().replace('.000Z', 'Z');
}

export async function auditPage(ctx) {
  const q = ctx.query;
  const f = Object.fromEntries(FILTERS.map((k) => [k, q.get(k) || '']));
  const before = q.get('before') || '';
  const select = (name, label, values) => h('label', null, label + ' ', h('select', { name, id: 'f-' + name },
    [['', 'any'], ...values.map((v) => [v, v])].map(([v, t]) => h('option', { value: v, selected: f[name] === v }, t))));
  const text = (name, label) => h('label', null, label + ' ', h('input', { name, id: 'f-' + name, value: f[name], maxlength: 512 }));
  const time = (name, label) => h('label', null, label + ' ', h('input', { name, id: 'f-' + name, type: 'datetime-local', step: 1, value: utcInput(f[name]) }));
  const form = h('form', { class: 'filters', id: 'filters', onsubmit: (ev) => {
    ev.preventDefault();
    const data = Object.fromEntries(new FormData(form).entries());
    data.since = apiTime(data.since);
    data.until = apiTime(data.until);
    for (const k of ['procedure', 'actor']) data[k] = (data[k] || '').trim();
    location.hash = withQuery(route('audit'), data);
  } },
  select('kind', 'Kind', KINDS), select('outcome', 'Outcome', ['allowed', 'denied']),
  text('procedure', 'Procedure'), text('actor', 'Actor'),
  time('since', 'Since (UTC)'), time('until', 'Until (UTC)'),
  h('button', { type: 'submit', id: 'apply' }, 'Apply'),
  h('a', { href: route('audit'), id: 'clear' }, 'clear'),
  h('button', { type: 'button', id: 'download', title: 'every record these filters select, newest first, one JSON object a line', onclick: () => downloadAll(f) }, 'Download JSON Lines'));
  let answer;
  try {
    answer = await get('/v1/decisions', { ...f, before, limit: PAGE });
  } catch (e) {
    ctx.show(h('h1', null, 'Audit log'), form, errorBox(e));
    return;
  }
  const rows = answer.decisions || [];
  const filtered = FILTERS.some((k) => f[k]);
  ctx.show(h('h1', null, 'Audit log'), form,
    h('div', { class: 'pager' },
      h('span', { id: 'audit-count' }, rows.length ? `${rows.length} record${rows.length === 1 ? '' : 's'}${filtered ? ' matching' : ''}${before ? ', older page' : ''}` : (filtered ? 'No record matches these filters.' : 'No records.')),
      before ? h('a', { href: withQuery(route('audit'), f), id: 'newest' }, '↑ newest') : null,
      answer.next ? h('a', { href: withQuery(route('audit'), { ...f, before: answer.next }), id: 'older' }, 'older →') : null),
    auditTable(rows));
}

// downloadAll saves every record f selects as JSON Lines, walking the
// API's pages (next), at most DOWNLOAD_MAX records.
async function downloadAll(f) {
  const lines = [];
  let before = '';
  let more = false;
  try {
    for (;;) {
      const page = await get('/v1/decisions', { ...f, before, limit: DOWNLOAD_PAGE });
      for (const d of page.decisions || []) lines.push(JSON.stringify(d) + '\n');
      if (!page.next) break;
      if (lines.length >= DOWNLOAD_MAX) { more = true; break; }
      before = page.next;
    }
  } catch (e) {
    notify('The download failed: ' + e.message, true);
    return;
  }
  download('procgraph-audit.jsonl', new Blob(lines, { type: 'application/jsonl' }));
  notify(`Downloaded ${lines.length} record${lines.length === 1 ? '' : 's'}` + (more ? ` (stopped at ${DOWNLOAD_MAX}: narrow the filters for the rest)` : '') + '.');
}
