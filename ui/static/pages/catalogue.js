// pages/catalogue.js: the tools with their flags and the procedures using
// each; for admin, uploading a new catalogue after a preview.
import { h, name, link, nameLink, route, withQuery, table, yesNo, stateBadge, section, errorBox, notify } from '../dom.js';
import { api, get, hasScope } from '../api.js';

export async function cataloguePage(ctx) {
  const [cat, isAdmin] = await Promise.all([get('/v1/tools'), hasScope('admin')]);
  const tools = cat.tools || [];
  const counts = await Promise.all(tools.map((t) => get('/v1/procedures', { tool: t.name, limit: 1 }).then((a) => a.total, () => '?')));
  const uses = new Map(tools.map((t, i) => [t.name, counts[i]]));
  ctx.show(h('h1', null, 'Catalogue'), h('p', { class: 'muted' }, 'Revision ', h('code', null, cat.revision)),
    table([
      ['Tool', (t) => name(t.name)], ['Description', (t) => t.description || ''],
      ['Class', (t) => stateBadge(t.read_only)], ['External access', (t) => yesNo(t.external_access)],
      ['Procedures', (t) => h('a', { href: withQuery(route('procedures'), { tool: t.name }) }, String(uses.get(t.name)))],
      ['Graph', (t) => link('graph', 'graph', 'tool', t.name)],
    ], tools, { id: 'tools', class: 'grid' }),
    isAdmin ? uploadSection(ctx, tools) : h('p', { class: 'muted', id: 'no-admin' }, 'Uploading a catalogue needs a token with the admin scope.'));
}

// uploadSection previews a new catalogue: the tools whose read-only flag
// changes or that appear or disappear, and the procedures whose signature
// uses them (the server reclassifies those when it is applied).
function uploadSection(ctx, current) {
  const text = h('textarea', { id: 'catalogue-json', rows: 10, cols: 80, spellcheck: 'false', placeholder: '{"tools": [...]}' });
  const out = h('div', { id: 'upload-result' });
  let parsed = null;
  const preview = async () => {
    parsed = null;
    let doc;
    try { doc = JSON.parse(text.value); } catch (e) { out.replaceChildren(errorBox(new Error('not JSON: ' + e.message))); return; }
    if (!doc || !Array.isArray(doc.tools)) { out.replaceChildren(errorBox(new Error('expected {"tools": [...]}'))); return; }
    const before = new Map(current.map((t) => [t.name, !!t.read_only]));
    const after = new Map(doc.tools.map((t) => [String(t && t.name), !!(t && t.read_only)]));
    const changed = [];
    for (const [tool, ro] of before) if (!after.has(tool)) changed.push([tool, ro ? 'read_only' : 'state_changing', 'unknown']);
    for (const [tool, ro] of after) {
      if (!before.has(tool)) changed.push([tool, 'unknown', ro ? 'read_only' : 'state_changing']);
      else if (before.get(tool) !== ro) changed.push([tool, before.get(tool) ? 'read_only' : 'state_changing', ro ? 'read_only' : 'state_changing']);
    }
    const affected = new Map();
    for (const [tool] of changed) {
      const a = await get('/v1/procedures', { tool, limit: 500 }).catch(() => ({ procedures: [] }));
      for (const p of a.procedures) affected.set(p.name, p);
    }
    parsed = doc;
    out.replaceChildren(
      h('h3', null, `${changed.length} tool(s) change; ${affected.size} procedure(s) use them and will be reclassified`),
      table([['Tool', (c) => c[0]], ['Now', (c) => stateBadge(c[1])], ['After', (c) => (c[2] === 'unknown' && !after.has(c[0]) ? [stateBadge('unknown'), ' removed'] : stateBadge(c[2]))]], changed, { id: 'preview-tools', class: 'grid' }),
      table([['Procedure', (p) => nameLink(p.name, 'procedure', p.name)], ['Class now', (p) => stateBadge(p.read_only)]], [...affected.values()], { id: 'preview-procedures', class: 'grid' }),
      h('button', { type: 'button', id: 'apply-catalogue', onclick: apply }, 'Apply this catalogue'));
  };
  const apply = async () => {
    if (!parsed) return;
    try {
      const r = await api('PUT', '/v1/tools', { body: parsed });
      notify('Catalogue applied' + (r && r.revision ? ': revision ' + r.revision : '') + '.');
      await ctx.rerender();
    } catch (e) {
      notify('The catalogue was not applied: ' + e.message, true);
      out.append(errorBox(e));
    }
  };
  return section('Upload a catalogue (admin)', text, h('div', { class: 'actions' }, h('button', { type: 'button', id: 'preview-catalogue', onclick: preview }, 'Preview')), out);
}
