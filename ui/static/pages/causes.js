// pages/causes.js: the causes with their counts; one cause with its
// procedures ranked by edge frequency.
import { h, link, table, section } from '../dom.js';
import { get } from '../api.js';

export async function causesPage(ctx) {
  const { causes } = await get('/v1/causes');
  ctx.show(h('h1', null, 'Causes'), table([
    ['Cause', (c) => link(c.name, 'cause', c.name)], ['Description', (c) => c.description || ''],
    ['Procedures', (c) => c.procedures], ['Frequency', (c) => c.frequency],
  ], causes, { id: 'causes', class: 'grid' }));
}

export async function causePage(ctx) {
  const name = ctx.args[0] || '';
  const c = await get('/v1/causes/' + encodeURIComponent(name));
  const ranked = [...(c.procedures || [])].sort((a, b) => b.frequency - a.frequency || a.name.localeCompare(b.name));
  ctx.show(h('h1', { id: 'cause-name' }, c.name), h('p', { id: 'cause-description' }, c.description || ''),
    h('p', null, link('Show in the graph', 'graph', 'cause', c.name)),
    section('Procedures by edge frequency', table([
      ['Procedure', (p) => link(p.name, 'procedure', p.name)], ['Edge frequency', (p) => p.frequency],
    ], ranked, { id: 'cause-procedures', class: 'grid' })));
}
