// pages/procedures.js: find_all_procedures as a table with its search
// (the API's q: relevance order, each row's score), filters and paging.
import { h, nameLink, route, withQuery, table, yesNo, stateBadge, badge, when, errorBox } from '../dom.js';
import { get } from '../api.js';
import { successRate } from './health.js';

const LIMITS = ['25', '50', '100', '500'];

export async function proceduresPage(ctx) {
  const q = ctx.query;
  const f = {
    q: q.get('q') || '', cause: q.get('cause') || '', tool: q.get('tool') || '', read_only: q.get('read_only') || '',
    exposed: q.get('exposed') || '', status: q.get('status') || '', limit: q.get('limit') || '25',
    offset: Number(q.get('offset') || 0),
  };
  const tools = f.tool.split(',').map((s) => s.trim()).filter(Boolean);
  const form = filterForm(f);
  let answer;
  try {
    answer = await get('/v1/procedures', { q: f.q, cause: f.cause, tool: tools, read_only: f.read_only, exposed: f.exposed,
      status: f.status, limit: f.limit, offset: f.offset || '' });
  } catch (e) {
    ctx.show(h('h1', null, 'Procedures'), form, errorBox(e));
    return;
  }
  const { procedures, total } = answer;
  const limit = Number(f.limit);
  const page = (offset) => withQuery(route('procedures'), { ...f, offset: offset || '' });
  const first = total === 0 ? 0 : f.offset + 1;
  const pager = h('div', { class: 'pager' },
    f.offset > 0 ? h('a', { href: page(Math.max(0, f.offset - limit)), id: 'prev' }, '← previous') : null,
    h('span', { id: 'range' }, `${first}–${f.offset + procedures.length} of ${total}`),
    f.offset + procedures.length < total ? h('a', { href: page(f.offset + limit), id: 'next' }, 'next →') : null);
  ctx.show(h('h1', null, 'Procedures'), form, pager, table([
    ['Name', (p) => nameLink(p.name, 'procedure', p.name)],
    ...(f.q ? [['Score', (p) => (typeof p.score === 'number' ? p.score.toFixed(2) : '')]] : []),
    ['Signature tools', (p) => (p.signature || []).map((t) => badge(t, 'tool'))],
    ['Frequency', (p) => p.frequency],
    ['Uses', (p) => p.use_count],
    ['Success', (p) => successRate(p.health, p.demoted)],
    ['Class', (p) => [stateBadge(p.read_only), p.stale ? [' ', badge('stale', 'warn')] : null]],
    ['Exposed', (p) => yesNo(p.exposed)],
    ['Auto-run', (p) => p.auto_run && p.auto_run.active ? badge('active', 'ok') : p.auto_run && p.auto_run.enabled ? badge('granted, inactive', 'warn') : badge('off', 'off')],
    ['Last used', (p) => when(p.last_used_at)],
  ], procedures, { id: 'procedures', class: 'grid' }));
}

function filterForm(f) {
  const input = (name, placeholder) => h('input', { name, id: 'f-' + name, value: f[name], placeholder });
  const select = (name, options) => h('select', { name, id: 'f-' + name },
    options.map(([v, t]) => h('option', { value: v, selected: f[name] === v }, t)));
  const form = h('form', { class: 'filters', id: 'filters', onsubmit: (ev) => {
    ev.preventDefault();
    const data = Object.fromEntries(new FormData(form).entries());
    location.hash = withQuery(route('procedures'), data);
  } },
  h('label', null, 'Search ', h('input', { name: 'q', id: 'f-q', type: 'search', value: f.q, placeholder: 'words, tools, causes', maxlength: 512 })),
  h('label', null, 'Cause ', input('cause', 'cause name')),
  h('label', null, 'Tools ', input('tool', 'tool_a, tool_b')),
  h('label', null, 'Read-only ', select('read_only', [['', 'any'], ['true', 'read-only'], ['false', 'state-changing']])),
  h('label', null, 'Exposed ', select('exposed', [['', 'any'], ['true', 'exposed'], ['false', 'hidden']])),
  h('label', null, 'Status ', select('status', [['', 'any'], ['succeeded', 'succeeded'], ['failed', 'failed']])),
  h('label', null, 'Per page ', select('limit', LIMITS.map((l) => [l, l]))),
  h('button', { type: 'submit', id: 'apply' }, f.q ? 'Search' : 'Apply'));
  return form;
}
