// pages/drift.js: the stale versions (GET /v1/drift): which tools changed
// how since each last worked, current versions first, and, with the grant
// scope, accept-drift with a reason (grants stay bound: grant again).
import { h, nameLink, route, withQuery, table, badge, errorBox, notify, codeHash } from '../dom.js';
import { api, get, hasScope } from '../api.js';

const LIMIT = 100;

// driftBadges shows a drift list ([{tool, change, changes}]) as badges,
// each schema change followed by what changed in the schema (its changes:
// JSON pointer, was → now) when the API can say.
export function driftBadges(drift) {
  return (drift || []).map((d) => (d.changes && d.changes.length
    ? h('div', { class: 'drift-entry' }, badge(d.tool + ': ' + d.change, 'warn'), schemaDiff(d.changes))
    : badge(d.tool + ': ' + d.change, 'warn')));
}

// schemaDiff lists a schema's changes, one a line.
function schemaDiff(changes) {
  const where = (c) => h('code', { class: 'path' }, c.path || '(the whole schema)');
  return h('ul', { class: 'schema-diff' }, changes.map((c) => {
    switch (c.change) {
      case 'added': return h('li', { class: 'added' }, where(c), ' added: ', h('code', null, c.now || ''));
      case 'removed': return h('li', { class: 'removed' }, where(c), ' removed (was ', h('code', null, c.was || ''), ')');
      case 'changed': return h('li', { class: 'changed' }, where(c), ': ', h('code', null, c.was || ''), ' → ', h('code', null, c.now || ''));
      default: return h('li', { class: 'more muted' }, c.now || '');
    }
  }));
}

export async function driftPage(ctx) {
  const offset = Number(ctx.query.get('offset') || 0);
  let answer, canGrant;
  try {
    [answer, canGrant] = await Promise.all([get('/v1/drift', { limit: LIMIT, offset: offset || '' }), hasScope('grant')]);
  } catch (e) {
    ctx.show(h('h1', null, 'Drift'), errorBox(e));
    return;
  }
  const { versions, total } = answer;
  const page = (o) => withQuery(route('drift'), { offset: o || '' });
  const pager = h('div', { class: 'pager' },
    offset > 0 ? h('a', { href: page(Math.max(0, offset - LIMIT)), id: 'prev' }, '← previous') : null,
    h('span', { id: 'drift-total' }, `${total} stale version${total === 1 ? '' : 's'}`),
    offset + versions.length < total ? h('a', { href: page(offset + LIMIT), id: 'next' }, 'next →') : null);
  const accept = (v) => {
    if (!canGrant) return '';
    const reason = h('input', { class: 'drift-reason', placeholder: 'reason (required)', maxlength: 2048 });
    const out = h('span', { class: 'drift-result' });
    const path = '/v1/procedures/' + encodeURIComponent(v.procedure) + '/versions/' + encodeURIComponent(v.code_hash) + '/accept-drift';
    return h('span', { class: 'actions' }, reason, h('button', { type: 'button', class: 'accept-drift', onclick: async () => {
      const r = reason.value.trim();
      if (!r) { out.replaceChildren(h('span', { class: 'error', role: 'alert' }, 'A reason is required.')); reason.focus(); return; }
      try {
        await api('POST', path, { body: { reason: r } });
        notify('Drift accepted for ' + v.procedure + ' ' + v.code_hash.slice(0, 12) + ' — reason: ' + r);
        await ctx.rerender();
      } catch (e) {
        notify('Accepting the drift failed: ' + e.message, true);
        out.replaceChildren(errorBox(e));
      }
    } }, 'Accept drift'), out);
  };
  ctx.show(h('h1', null, 'Drift'),
    h('p', { class: 'muted' }, 'Versions whose tools changed their contract since they last worked. A successful run under the current catalogue clears it; accepting it does too, and leaves grants inactive until granted again.'),
    pager, table([
      ['Procedure', (v) => nameLink(v.procedure, 'procedure', v.procedure)],
      ['Code hash', (v) => codeHash(v.code_hash, 16)],
      ['Current', (v) => (v.current ? badge('current', 'ok') : '')],
      ['Drift', (v) => driftBadges(v.drift)],
      ...(canGrant ? [['Accept', accept]] : []),
    ], versions, { id: 'drift', class: 'grid' }),
    canGrant ? null : h('p', { class: 'muted', id: 'no-grant' }, 'Accepting drift needs a token with the grant scope.'));
}
