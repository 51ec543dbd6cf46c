// pages/audit.js: the audit log, filtered by kind, procedure and actor,
// paging back with the answer's next.
import { h, route, withQuery, errorBox } from '../dom.js';
import { get } from '../api.js';
import { auditTable } from './procedure.js';

// The API's decision kinds (procedures.DecisionKinds; unretire is a reason of retire).
const KINDS = ['invoke', 'grant', 'revoke', 'promote', 'catalogue', 'retire', 'turn', 'approval', 'policy', 'store', 'drift', 'health', 'recordings', 'token'];

export async function auditPage(ctx) {
  const q = ctx.query;
  const f = { kind: q.get('kind') || '', procedure: q.get('procedure') || '', actor: q.get('actor') || '', before: q.get('before') || '' };
  const form = h('form', { class: 'filters', id: 'filters', onsubmit: (ev) => {
    ev.preventDefault();
    const data = Object.fromEntries(new FormData(form).entries());
    location.hash = withQuery(route('audit'), data);
  } },
  h('label', null, 'Kind ', h('select', { name: 'kind', id: 'f-kind' }, [['', 'any'], ...KINDS.map((k) => [k, k])].map(([v, t]) => h('option', { value: v, selected: f.kind === v }, t)))),
  h('label', null, 'Procedure ', h('input', { name: 'procedure', id: 'f-procedure', value: f.procedure })),
  h('label', null, 'Actor ', h('input', { name: 'actor', id: 'f-actor', value: f.actor, placeholder: 'on this page' })),
  h('button', { type: 'submit', id: 'apply' }, 'Apply'));
  let answer;
  try {
    answer = await get('/v1/decisions', { kind: f.kind, procedure: f.procedure, before: f.before, limit: 100 });
  } catch (e) {
    ctx.show(h('h1', null, 'Audit log'), form, errorBox(e));
    return;
  }
  // The API filters by kind and procedure; the actor filter applies to the page.
  const rows = (answer.decisions || []).filter((d) => !f.actor || d.actor === f.actor);
  ctx.show(h('h1', null, 'Audit log'), form,
    h('div', { class: 'pager' }, f.before ? h('a', { href: withQuery(route('audit'), { ...f, before: '' }), id: 'newest' }, '↑ newest') : null,
      answer.next ? h('a', { href: withQuery(route('audit'), { ...f, before: answer.next }), id: 'older' }, 'older →') : null),
    auditTable(rows));
}
