// pages/graph.js: the graph explorer (cytoscape.js): causes → procedures →
// tools from GET /v1/graph. How it reads at a thousand procedures
// (docs/adr/0022-explorer-aggregation.md):
//   - aggregation: above AGGREGATE_AT procedures the view groups them into
//     clusters, by cause (each procedure in its most frequent cause's
//     cluster) or by tool (a procedure in each of its tools' clusters);
//     clusters link to the clusters they share most tools (or procedures)
//     with; a tap expands a cluster into its procedures, another collapses
//     it;
//   - focus + context: a selected node's neighbourhood stays, the rest fades;
//   - labels tell procedures apart by their tools (not the proc__ name), the
//     prefix every tool shares dropped (named once in the legend), wrapped,
//     never cut; labels that would overlap a more important one are hidden
//     (declutter, from cytoscape's label boxes), so none overlap;
//   - search-to-focus: a name, tool or cause expands its cluster and focuses it;
//   - the layout is stretched to the canvas's shape.
// Colours are the states' (style.css :root, dom.js stateColour).
import { h, route, withQuery, download, errorBox, visibleText, stateColour, stateBadge, nameLink, notify, STATES } from '../dom.js';
import { get, api } from '../api.js';

const LAYOUTS = ['auto', 'cose', 'breadthfirst', 'concentric', 'circle', 'grid'];
const GROUPS = ['auto', 'cause', 'tool', 'none'];

// AGGREGATE_AT: with group auto, a graph with more procedures than this is
// shown in clusters by cause.
export const AGGREGATE_AT = 60;

// LINKS: each cluster keeps its strongest links to this many clusters.
const LINKS = 3;

// PAGE: with no start, the explorer begins from this many of the most
// frequent procedures and loads this many more on demand (the API's limit
// and next_offset).
const PAGE = 100;

// LABEL_PX: the smallest label, in screen pixels, at the zoom the layout
// fits the view to: labels grow in the model where the view is zoomed out.
const LABEL_PX = 11;

// explorer is the page's state, also reachable from tests and benchmarks
// as window.procgraphExplorer.
const explorer = { cy: null, starts: { procedure: [], cause: [], tool: [] }, depth: 1, layout: 'auto', group: 'auto', ready: false, expandedClusters: new Set() };
window.procgraphExplorer = explorer;

// load draws a graph answer (the shape of GET /v1/graph) in the page's
// explorer: what the benchmarks and the 1k tests use to draw graphs
// larger than the server's neighbourhood cap.
explorer.load = (graph) => {
  explorer.source = 'loaded';
  return show(graph, document.getElementById('cy'));
};

let cytoscapeLoaded = null;

// loadCytoscape loads the vendored cytoscape.js once, when the explorer
// first opens (the other pages do not pay for parsing it).
export function loadCytoscape() {
  if (window.cytoscape) return Promise.resolve();
  if (!cytoscapeLoaded) {
    cytoscapeLoaded = new Promise((resolve, reject) => {
      const s = document.createElement('script');
      s.src = 'vendor/cytoscape.min.js';
      s.onload = () => resolve();
      s.onerror = () => { cytoscapeLoaded = null; reject(new Error('cytoscape.js did not load')); };
      document.head.append(s);
    });
  }
  return cytoscapeLoaded;
}

export async function graphPage(ctx) {
  const [kind, name] = ctx.args;
  explorer.depth = Number(ctx.query.get('depth') || 1);
  explorer.layout = ctx.query.get('layout') || 'auto';
  explorer.group = GROUPS.includes(ctx.query.get('group')) ? ctx.query.get('group') : 'auto';
  explorer.starts = { procedure: [], cause: [], tool: [] };
  explorer.source = 'server';
  if (kind in explorer.starts && name) explorer.starts[kind].push(name);
  const container = h('div', { id: 'cy', class: 'graph' });
  const status = h('p', { id: 'graph-status', class: 'muted' }, 'Loading…');
  explorer.status = status;
  explorer.side = h('aside', { id: 'g-details', class: 'graph-side' }, h('p', { class: 'muted' }, 'Select a node to see it here.'));
  explorer.legendNote = h('span', { id: 'g-prefix', class: 'muted' });
  ctx.show(h('h1', null, 'Graph explorer'), controls(kind, name), status, h('div', { class: 'graph-wrap' }, container, explorer.side),
    h('p', { class: 'legend' }, legend('read-only', 'read_only'), legend('state-changing', 'state_changing'), legend('unknown', 'unknown'), legend('cause', 'cause'),
      ' · circles are causes, rounded boxes procedures, boxes tools, large circles clusters (their pie: the share of each class); tap a cluster to expand it, a node to focus it ',
      explorer.legendNote));
  explorer.paged = !kind;
  let graph;
  try {
    [graph] = await Promise.all([get('/v1/graph', query(explorer.paged ? { limit: PAGE } : {})), loadCytoscape()]);
  } catch (e) {
    status.replaceChildren(errorBox(e));
    return;
  }
  if (!ctx.isCurrent()) return;
  show(graph, container);
}

// loadMore adds the next page of the most frequent procedures (and their
// neighbourhoods) from the server to the view.
async function loadMore() {
  const m = explorer.model;
  if (!m || m.next === null) return;
  let graph;
  try {
    graph = await get('/v1/graph', query({ limit: PAGE, offset: m.next }));
  } catch (e) {
    explorer.status.replaceChildren(errorBox(e));
    return;
  }
  explorer.model = merged(m, graph);
  explorer.model.next = graph.next_offset === undefined ? null : graph.next_offset;
  explorer.model.truncated = !!graph.truncated;
  await rebuild(true);
}

// merged is model m with graph's nodes and edges added.
function merged(m, graph) {
  const seen = new Set(m.edges.map((x) => x.id));
  const more = model({ nodes: [...[...m.nodes.values()].map((n) => ({ id: n.id, kind: n.kind, label: n.label, properties: { class: n.cls, frequency: n.frequency, signature: n.signature } })), ...(graph.nodes || [])],
    edges: [...m.edges, ...(graph.edges || []).filter((e) => !seen.has(e.source + '\u0000' + e.kind + '\u0000' + e.target))],
    truncated: m.truncated || graph.truncated, total_procedures: graph.total_procedures ?? m.total, total_edges: graph.total_edges ?? m.totalEdges, next_offset: m.next });
  return more;
}

function legend(text, cls) {
  return h('span', { class: 'legend-item ' + cls }, text);
}

function query(extra) {
  return { ...explorer.starts, depth: explorer.depth, ...(extra || {}) };
}

function controls(kind, name) {
  const cause = h('input', { id: 'g-cause', name: 'cause', placeholder: 'cause', value: kind === 'cause' ? name : '' });
  const tool = h('input', { id: 'g-tool', name: 'tool', placeholder: 'tool', value: kind === 'tool' ? name : '' });
  const depth = h('select', { id: 'g-depth' }, [1, 2, 3].map((d) => h('option', { value: String(d), selected: d === explorer.depth }, 'depth ' + d)));
  const layout = h('select', { id: 'g-layout', onchange: () => { explorer.layout = layout.value; runLayout(true); } },
    LAYOUTS.map((l) => h('option', { value: l, selected: l === explorer.layout }, l)));
  const group = h('select', { id: 'g-group', onchange: () => { explorer.group = group.value; explorer.expandedClusters.clear(); rebuild(true); } },
    GROUPS.map((g) => h('option', { value: g, selected: g === explorer.group }, g === 'none' ? 'no clusters' : g === 'auto' ? 'clusters: auto' : 'clusters by ' + g)));
  const find = h('input', { id: 'g-find', type: 'search', placeholder: 'find a procedure, tool or cause', 'aria-label': 'find in the graph' });
  const form = h('form', { class: 'filters', id: 'graph-filters', onsubmit: (ev) => {
    ev.preventDefault();
    const q = { depth: depth.value, layout: layout.value, group: group.value === 'auto' ? '' : group.value };
    if (cause.value) location.hash = withQuery(route('graph', 'cause', cause.value), q);
    else if (tool.value) location.hash = withQuery(route('graph', 'tool', tool.value), q);
    else location.hash = withQuery(route('graph'), q);
  } }, h('label', null, 'Cause ', cause), h('label', null, 'Tool ', tool), depth, h('button', { type: 'submit', id: 'g-apply' }, 'Show'),
  h('label', null, ' Layout ', layout), group,
  h('span', { class: 'exports' }, 'Export ',
    h('button', { type: 'button', id: 'export-png', onclick: exportPNG }, 'PNG'),
    h('button', { type: 'button', id: 'export-graphml', onclick: () => exportText('graphml') }, 'GraphML'),
    h('button', { type: 'button', id: 'export-dot', onclick: () => exportText('dot') }, 'DOT')));
  const findForm = h('form', { class: 'filters', id: 'graph-find', onsubmit: (ev) => { ev.preventDefault(); findAndFocus(find.value); } },
    h('label', null, 'Find ', find), h('button', { type: 'submit', id: 'g-find-go' }, 'Focus'),
    h('button', { type: 'button', id: 'g-unfocus', onclick: () => { unfocus(); } }, 'Clear focus'));
  return [form, findForm];
}

// sharedPrefix is the prefix (ending in "_") every name shares, when it
// leaves each name something to tell it apart; "" otherwise.
export function sharedPrefix(names) {
  if (names.length < 2) return '';
  let p = names[0];
  for (const n of names) {
    while (p && !n.startsWith(p)) p = p.slice(0, -1);
    if (!p) return '';
  }
  p = p.slice(0, p.lastIndexOf('_') + 1);
  return p.length >= 3 && names.every((n) => n.length > p.length) ? p : '';
}

// model turns a graph answer into the explorer's model: the nodes by id,
// the edges, and each procedure's causes (by edge frequency) and tools.
function model(graph) {
  const nodes = new Map();
  for (const n of graph.nodes || []) {
    const p = n.properties || {};
    nodes.set(n.id, { id: n.id, kind: n.kind, label: n.label, cls: p.class || (n.kind === 'cause' ? 'cause' : 'unknown'),
      frequency: Number(p.frequency || 0), signature: Array.isArray(p.signature) ? p.signature.map(String) : null, causes: [], tools: [] });
  }
  const edges = [];
  for (const e of graph.edges || []) {
    if (!nodes.has(e.source) || !nodes.has(e.target)) continue;
    edges.push({ id: e.source + '\u0000' + e.kind + '\u0000' + e.target, source: e.source, target: e.target, kind: e.kind, frequency: Number(e.frequency || 0) });
    if (e.kind === 'INVESTIGATED_BY') nodes.get(e.target).causes.push([e.source, Number(e.frequency || 0)]);
    if (e.kind === 'CALLS') nodes.get(e.source).tools.push(e.target);
  }
  for (const n of nodes.values()) n.causes.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const toolNames = [...nodes.values()].filter((n) => n.kind === 'tool').map((n) => n.label);
  for (const n of nodes.values()) for (const t of n.signature || []) toolNames.push(t);
  const prefix = sharedPrefix([...new Set(toolNames)]);
  for (const n of nodes.values()) { n.text = labelOf(n, prefix); n.shown = visibleText(n.text, true); }
  const total = Number.isInteger(graph.total_procedures) ? graph.total_procedures : null;
  const next = Number.isInteger(graph.next_offset) ? graph.next_offset : null;
  const totalEdges = Number.isInteger(graph.total_edges) ? graph.total_edges : null;
  return { nodes, edges, prefix, truncated: !!graph.truncated, total, totalEdges, next };
}

// labelOf is what tells a node apart: a procedure's tools (its signature,
// else its name without proc__), each without the prefix all tools share;
// a tool's name without it; a cause's name.
function labelOf(n, prefix) {
  const strip = (t) => (prefix && t.startsWith(prefix) ? t.slice(prefix.length) : t);
  if (n.kind === 'tool') return strip(n.label);
  if (n.kind !== 'procedure') return n.label;
  const tools = n.signature && n.signature.length ? n.signature : String(n.label).replace(/^proc__/, '').split('__');
  return tools.map(strip).join(' · ');
}

// grouping is the view's clustering: cause, tool or none.
function grouping(m) {
  if (explorer.group !== 'auto') return explorer.group;
  let procs = 0;
  for (const n of m.nodes.values()) if (n.kind === 'procedure') procs++;
  return procs > AGGREGATE_AT ? 'cause' : 'none';
}

// clusters groups m's procedures: by cause, each procedure in the cluster of
// its most frequent cause ("no cause" for none); by tool, each in every
// one of its tools' clusters. Returns [{id, of, anchor, label, members}].
function clusters(m, by) {
  const out = new Map();
  const add = (key, anchor, label, member) => {
    if (!out.has(key)) out.set(key, { id: 'cluster:' + key, of: by, anchor, label, members: [] });
    out.get(key).members.push(member);
  };
  for (const n of m.nodes.values()) {
    if (n.kind !== 'procedure') continue;
    if (by === 'cause') {
      const c = n.causes.length ? m.nodes.get(n.causes[0][0]) : null;
      add(c ? c.id : 'none', c ? c.id : null, c ? c.label : '(no cause)', n.id);
    } else {
      if (!n.tools.length) add('none', null, '(no tool)', n.id);
      for (const t of n.tools) add(t, t, m.nodes.get(t).label, n.id);
    }
  }
  return [...out.values()];
}

// viewElements is what the view draws: with no grouping, the graph; else
// the clusters (each linked to the LINKS clusters it shares most with),
// and, for each expanded cluster, its procedures with their edges to what
// is shown (and, by cause, their tools).
function viewElements(m, by) {
  const els = [];
  const node = (n, extra) => els.push({ group: 'nodes', data: { id: n.id, label: n.label, shown: n.shown, kind: n.kind, cls: n.cls, frequency: n.frequency, ...extra } });
  if (by === 'none') {
    for (const n of m.nodes.values()) node(n);
    for (const e of m.edges) els.push({ group: 'edges', data: { ...e } });
    explorer.clusterOf = new Map();
    return els;
  }
  const cs = clusters(m, by);
  const clusterOf = new Map(); // procedure id → its clusters
  for (const c of cs) for (const p of c.members) { if (!clusterOf.has(p)) clusterOf.set(p, []); clusterOf.get(p).push(c.id); }
  explorer.clusterOf = clusterOf;
  explorer.clusters = new Map(cs.map((c) => [c.id, c]));
  const shown = new Set();
  for (const c of cs) {
    const counts = { read_only: 0, state_changing: 0, unknown: 0 };
    let freq = 0;
    for (const p of c.members) { const n = m.nodes.get(p); counts[n.cls in counts ? n.cls : 'unknown']++; freq += n.frequency; }
    const k = c.members.length;
    const anchor = c.anchor ? m.nodes.get(c.anchor) : null;
    const base = anchor && by === 'tool' ? anchor.shown : visibleText(c.label, true);
    els.push({ group: 'nodes', data: { id: c.id, label: c.label, shown: base + ' (' + k + ')', kind: 'cluster', of: by, cls: anchor && by === 'tool' ? anchor.cls : 'cause',
      count: k, frequency: freq, ro: (100 * counts.read_only) / k, sc: (100 * counts.state_changing) / k, un: (100 * counts.unknown) / k,
      expanded: explorer.expandedClusters.has(c.id) } });
    shown.add(c.id);
  }
  // Links: between clusters, weighted by the tools (by cause) or the
  // procedures (by tool) they share; each keeps its LINKS strongest.
  const weight = new Map();
  const bump = (a, b) => { if (a === b) return; const key = a < b ? a + '\u0000' + b : b + '\u0000' + a; weight.set(key, (weight.get(key) || 0) + 1); };
  if (by === 'cause') {
    const usedBy = new Map(); // tool → clusters
    for (const c of cs) for (const p of c.members) for (const t of m.nodes.get(p).tools) { if (!usedBy.has(t)) usedBy.set(t, new Set()); usedBy.get(t).add(c.id); }
    for (const set of usedBy.values()) { const l = [...set]; for (let i = 0; i < l.length; i++) for (let j = i + 1; j < l.length; j++) bump(l[i], l[j]); }
  } else {
    for (const list of clusterOf.values()) for (let i = 0; i < list.length; i++) for (let j = i + 1; j < list.length; j++) bump(list[i], list[j]);
  }
  const best = new Map();
  for (const [key, w] of weight) for (const id of key.split('\u0000')) { if (!best.has(id)) best.set(id, []); best.get(id).push([w, key]); }
  const kept = new Set();
  for (const list of best.values()) { list.sort((a, b) => b[0] - a[0] || (a[1] < b[1] ? -1 : 1)); for (const [, key] of list.slice(0, LINKS)) kept.add(key); }
  for (const key of [...kept].sort()) {
    const [a, b] = key.split('\u0000');
    els.push({ group: 'edges', data: { id: 'link:' + key, source: a, target: b, kind: 'LINK', frequency: weight.get(key) } });
  }
  // Expanded clusters: their procedures, and by cause their tools.
  for (const c of cs) {
    if (!explorer.expandedClusters.has(c.id)) continue;
    for (const p of c.members) {
      if (!shown.has(p)) { node(m.nodes.get(p), { member: c.id }); shown.add(p); }
      if (by === 'cause') for (const t of m.nodes.get(p).tools) if (!shown.has(t)) { node(m.nodes.get(t)); shown.add(t); }
    }
  }
  const edgeIds = new Set();
  for (const [p, list] of clusterOf) {
    if (!shown.has(p)) continue;
    for (const cid of list) {
      const id = 'member:' + cid + '\u0000' + p;
      if (!edgeIds.has(id)) { edgeIds.add(id); els.push({ group: 'edges', data: { id, source: cid, target: p, kind: 'MEMBER', frequency: 1 } }); }
    }
  }
  for (const e of m.edges) if (e.kind !== 'INVESTIGATED_BY' && shown.has(e.source) && shown.has(e.target)) els.push({ group: 'edges', data: { ...e } });
  return els;
}

// style is the graph's look. Labels wrap (never cut); .nolabel hides the
// labels declutter found overlapping; .faded is the context around a focus.
function style(px = 10) {
  // Nodes and edges grow with the labels, less than they do (the layout
  // spaced them for their first size).
  const k = Math.sqrt(px / 10);
  const col = { read_only: stateColour('read_only'), state_changing: stateColour('state_changing'), unknown: stateColour('unknown'), cause: stateColour('cause') };
  return [
    { selector: 'node', style: {
      label: 'data(shown)', 'font-size': px, 'text-valign': 'bottom', 'text-margin-y': Math.ceil(px / 3),
      'text-wrap': 'wrap', 'text-max-width': px * 12, color: '#222', 'text-background-color': '#fff', 'text-background-opacity': 0.7, 'text-background-padding': 1,
      width: `mapData(frequency, 0, 20, ${16 * k}, ${40 * k})`, height: `mapData(frequency, 0, 20, ${16 * k}, ${40 * k})`, 'background-color': '#868e96' } },
    { selector: 'node[cls = "read_only"]', style: { 'background-color': col.read_only } },
    { selector: 'node[cls = "state_changing"]', style: { 'background-color': col.state_changing } },
    { selector: 'node[cls = "unknown"]', style: { 'background-color': col.unknown } },
    { selector: 'node[kind = "cause"]', style: { shape: 'ellipse', 'background-color': col.cause, width: 24 * k, height: 24 * k } },
    { selector: 'node[kind = "procedure"]', style: { shape: 'round-rectangle' } },
    { selector: 'node[kind = "tool"]', style: { shape: 'rectangle', width: 18 * k, height: 18 * k } },
    { selector: 'node[kind = "cluster"]', style: { shape: 'ellipse', width: `mapData(count, 1, 60, ${26 * k}, ${80 * k})`, height: `mapData(count, 1, 60, ${26 * k}, ${80 * k})`,
      'font-size': Math.ceil(px * 1.15), 'font-weight': 600, 'border-width': 3 * k, 'border-color': col.cause,
      'pie-size': '100%', 'pie-1-background-color': col.read_only, 'pie-1-background-size': 'data(ro)',
      'pie-2-background-color': col.state_changing, 'pie-2-background-size': 'data(sc)',
      'pie-3-background-color': col.unknown, 'pie-3-background-size': 'data(un)' } },
    { selector: 'node[kind = "cluster"][of = "tool"][cls = "read_only"]', style: { 'border-color': col.read_only } },
    { selector: 'node[kind = "cluster"][of = "tool"][cls = "state_changing"]', style: { 'border-color': col.state_changing } },
    { selector: 'node[kind = "cluster"][of = "tool"][cls = "unknown"]', style: { 'border-color': col.unknown } },
    { selector: 'node[?expanded]', style: { 'border-style': 'double', 'border-width': 6 } },
    { selector: 'node:selected', style: { 'border-width': 3, 'border-color': '#000' } },
    { selector: 'edge', style: { width: `mapData(frequency, 0, 10, ${k}, ${6 * k})`, 'line-color': '#adb5bd', 'target-arrow-color': '#adb5bd',
      'target-arrow-shape': 'triangle', 'curve-style': 'haystack', 'arrow-scale': 0.8, opacity: 0.8 } },
    { selector: 'edge[kind = "INVESTIGATED_BY"]', style: { 'line-color': '#91a7ff' } },
    { selector: 'edge[kind = "LINK"]', style: { 'line-color': '#ced4da', width: `mapData(frequency, 1, 20, ${k}, ${6 * k})` } },
    { selector: 'edge[kind = "MEMBER"]', style: { 'line-color': '#91a7ff', 'line-style': 'dashed', width: 1 } },
    { selector: '.nolabel', style: { label: '' } },
    { selector: '.faded', style: { opacity: 0.12, label: '' } },
    { selector: 'edge.focus', style: { opacity: 1, 'line-color': '#495057' } },
  ];
}

// show draws graph into container (a new cytoscape instance) and lays it
// out; explorer.ready is set once the layout (and declutter) is done.
function show(graph, container) {
  explorer.ready = false;
  explorer.expandedClusters = new Set();
  explorer.focus = null;
  const start = performance.now();
  explorer.model = model(graph);
  if (explorer.cy) explorer.cy.destroy();
  explorer.timing = { start, modelled: performance.now() };
  const by = grouping(explorer.model);
  explorer.by = by;
  const els = viewElements(explorer.model, by);
  const big = els.length > 1500;
  const cy = window.cytoscape({
    container, elements: els, style: style(),
    wheelSensitivity: 0.3, textureOnViewport: big, hideEdgesOnViewport: big, pixelRatio: big ? 1 : 'auto', minZoom: 0.05, maxZoom: 4,
  });
  explorer.cy = cy;
  explorer.fontPx = 10;
  explorer.timing.built = performance.now();
  cy.on('tap', 'node', (ev) => tapNode(ev.target));
  cy.on('tap', (ev) => { if (ev.target === cy) unfocus(); });
  explorer.legendNote.replaceChildren(explorer.model.prefix ? `· tool names shown without the prefix they all share, “${visibleText(explorer.model.prefix, true)}”` : '');
  updateStatus();
  return runLayout(true);
}

// rebuild redraws the view of the same model (another grouping, a cluster
// expanded or collapsed), keeping the positions of what stays.
function rebuild(fresh) {
  const cy = explorer.cy;
  if (!cy) return Promise.resolve();
  const by = grouping(explorer.model);
  explorer.by = by;
  const old = new Map(cy.nodes().map((n) => [n.id(), { ...n.position() }]));
  const els = viewElements(explorer.model, by);
  cy.batch(() => {
    cy.elements().remove();
    for (const el of els) {
      if (el.group !== 'nodes') continue;
      const at = old.get(el.data.id) || old.get(el.data.member) || null;
      if (at) el.position = { x: at.x + (old.has(el.data.id) ? 0 : (Math.random() - 0.5) * 40), y: at.y + (old.has(el.data.id) ? 0 : (Math.random() - 0.5) * 40) };
    }
    cy.add(els);
  });
  updateStatus();
  return runLayout(fresh);
}

// updateStatus says how many procedures the store holds, how many
// procedures, tools, causes and edges the view holds, how it groups them,
// and offers the next page while there is one.
function updateStatus() {
  const m = explorer.model;
  const count = { procedure: 0, tool: 0, cause: 0 };
  for (const n of m.nodes.values()) count[n.kind] = (count[n.kind] || 0) + 1;
  const plural = (n, one) => `${n} ${one}${n === 1 ? '' : 's'}`;
  const parts = [];
  if (m.total !== null) parts.push(h('strong', { id: 'g-total' }, plural(m.total, 'procedure') + (m.totalEdges !== null ? ' and ' + plural(m.totalEdges, 'edge') : '') + ' in the store'));
  parts.push(h('span', { id: 'g-shown' }, `${parts.length ? ' · ' : ''}shown: ${plural(count.procedure, 'procedure')}, ${plural(count.tool, 'tool')}, ${plural(count.cause, 'cause')}, ${plural(m.edges.length, 'edge')}`));
  if (explorer.by !== 'none') parts.push(` · grouped by ${explorer.by} into ${plural(explorer.clusters.size, 'cluster')} (${explorer.expandedClusters.size} expanded; a cluster's label counts its procedures)`);
  if (m.truncated) parts.push(h('span', { id: 'g-truncated' }, m.next !== null && explorer.paged ? ' · the most frequent first: more are left out' : ' · cut short by the server: narrow the query'));
  if (m.next !== null && explorer.paged && explorer.source !== 'loaded') {
    parts.push(' ', h('button', { type: 'button', id: 'g-more', onclick: loadMore }, `Load ${Math.min(PAGE, (m.total ?? Infinity) - m.next)} more`));
  }
  explorer.status.replaceChildren(...parts);
}

function layoutOptions(name, n, fresh) {
  if (name === 'auto') name = n > 400 ? 'concentric' : 'cose';
  const base = { name, animate: false, fit: true, padding: 30 };
  if (name === 'cose') {
    return { ...base, randomize: fresh, nodeDimensionsIncludeLabels: true, numIter: n > 150 ? 600 : 1200, nodeRepulsion: () => 60000,
      idealEdgeLength: () => 70, edgeElasticity: () => 60, gravity: 0.6, componentSpacing: 60, nodeOverlap: 20 };
  }
  if (name === 'concentric') return { ...base, concentric: (node) => ({ cluster: 4, cause: 3, procedure: 2, tool: 1 }[node.data('kind')] || 0), levelWidth: () => 1, minNodeSpacing: 6 };
  if (name === 'breadthfirst') return { ...base, directed: true, spacingFactor: 0.9 };
  return base;
}

// runLayout lays the view out, stretches it to the canvas's shape, hides
// the labels that would overlap (declutter) and sets explorer.ready.
function runLayout(fresh, again) {
  const cy = explorer.cy;
  if (!cy) return Promise.resolve();
  explorer.ready = false;
  const layout = cy.layout(layoutOptions(explorer.layout, cy.nodes().length, fresh !== false && !again));
  const done = layout.promiseOn('layoutstop').then(() => {
    if (cy !== explorer.cy) return undefined;
    if (explorer.timing) explorer.timing.layout = performance.now();
    if (explorer.layout === 'auto' || explorer.layout === 'cose') stretch(cy);
    // Labels grown to stay readable at the fitted zoom take room the
    // layout did not give them: a force layout runs once more from where
    // it is, spacing nodes for their labels.
    if (readableLabels(cy) && !again && layoutOptions(explorer.layout, cy.nodes().length, false).name === 'cose') return runLayout(false, true);
    declutter();
    explorer.ready = true;
    if (explorer.timing) explorer.timing.laidOut = performance.now();
    explorer.layouts = (explorer.layouts || 0) + 1;
    return undefined;
  });
  layout.run();
  return done;
}

// stretch scales the layout's positions so that its bounding box has the
// canvas's aspect ratio (a force layout comes out round; the canvas is
// wide), then fits it.
function stretch(cy) {
  const nodes = cy.nodes();
  if (nodes.length < 3) { cy.fit(undefined, 30); return; }
  const bb = nodes.boundingBox({ includeLabels: false });
  const w = Math.max(bb.w, 1), h0 = Math.max(bb.h, 1);
  const target = cy.width() / Math.max(cy.height(), 1);
  const sx = Math.max(1, (target * h0) / w), sy = Math.max(1, w / (target * h0));
  const cx = (bb.x1 + bb.x2) / 2, cyy = (bb.y1 + bb.y2) / 2;
  cy.batch(() => nodes.positions((n) => { const p = n.position(); return { x: cx + (p.x - cx) * sx, y: cyy + (p.y - cyy) * sy }; }));
  cy.fit(undefined, 30);
}

// readableLabels sizes the labels so that, at the zoom the view was fitted
// to, none is drawn smaller than LABEL_PX screen pixels (declutter then
// hides those that would overlap); it reports whether they grew much.
function readableLabels(cy) {
  // A small view is not blown up past 1.5× to fill the canvas.
  if (cy.zoom() > 1.5) cy.zoom({ level: 1.5, renderedPosition: { x: cy.width() / 2, y: cy.height() / 2 } });
  const z = cy.zoom() || 1;
  const px = Math.max(10, Math.ceil(LABEL_PX / z));
  const grown = px > explorer.fontPx * 1.2;
  if (explorer.fontPx !== px) cy.style(style(px));
  explorer.fontPx = px;
  explorer.labelPx = px * z;
  return grown;
}

// priority orders nodes for their labels: the focus, its neighbourhood,
// clusters by size, causes, procedures by frequency, tools.
function priority(n) {
  const focus = explorer.focus;
  const rank = { cluster: 4, cause: 3, procedure: 2, tool: 1 }[n.data('kind')] || 0;
  return (focus && n.id() === focus ? 1e9 : 0) + (n.hasClass('near') ? 1e8 : 0) + rank * 1e6 + Number(n.data('count') || 0) * 1e3 + Number(n.data('frequency') || 0);
}

// declutter hides the label of every node whose box (node and label, from
// cytoscape's model) would overlap a more important labelled one, using a
// grid of cells to compare only neighbours. Faded nodes show no label.
function declutter() {
  const cy = explorer.cy;
  cy.nodes().removeClass('nolabel');
  const candidates = cy.nodes().filter((n) => !n.hasClass('faded') && n.data('shown')).toArray().sort((a, b) => priority(b) - priority(a));
  const CELL = 120;
  const GAP = 2; // model units kept between two labelled boxes
  const grid = new Map();
  const hide = [];
  const cells = (b) => { const out = []; for (let x = Math.floor(b.x1 / CELL); x <= Math.floor(b.x2 / CELL); x++) for (let y = Math.floor(b.y1 / CELL); y <= Math.floor(b.y2 / CELL); y++) out.push(x + ',' + y); return out; };
  for (const n of candidates) {
    const r = n.boundingBox({ includeLabels: true });
    const b = { x1: r.x1 - GAP, y1: r.y1 - GAP, x2: r.x2 + GAP, y2: r.y2 + GAP };
    const cs = cells(b);
    let clash = false;
    for (const c of cs) {
      for (const o of grid.get(c) || []) if (b.x1 < o.x2 && o.x1 < b.x2 && b.y1 < o.y2 && o.y1 < b.y2) { clash = true; break; }
      if (clash) break;
    }
    if (clash) { hide.push(n); continue; }
    for (const c of cs) { if (!grid.has(c)) grid.set(c, []); grid.get(c).push(b); }
  }
  cy.batch(() => { for (const n of hide) n.addClass('nolabel'); });
  explorer.hiddenLabels = hide.length;
}

// tapNode: a cluster expands or collapses; any node takes the focus; in a
// server view without clusters a procedure, cause or tool also adds its
// neighbourhood from the server.
async function tapNode(node) {
  if (node.data('kind') === 'cluster') {
    const id = node.id();
    if (explorer.expandedClusters.has(id)) explorer.expandedClusters.delete(id);
    else explorer.expandedClusters.add(id);
    explorer.focus = id;
    await rebuild(false);
    focusOn(id);
    bringIntoView(explorer.cy.getElementById(id));
    return;
  }
  focusOn(node.id());
  if (explorer.source === 'server' && explorer.by === 'none') await expand(node);
}

// focusOn selects a node, fades everything outside its neighbourhood and
// shows it in the side panel.
function focusOn(id) {
  const cy = explorer.cy;
  const node = cy.getElementById(id);
  if (node.empty()) return;
  explorer.focus = id;
  const near = node.closedNeighborhood();
  cy.batch(() => {
    cy.elements().removeClass('near focus').addClass('faded');
    near.removeClass('faded').addClass('near');
    near.edges().addClass('focus');
    cy.$(':selected').unselect();
    node.select();
  });
  declutter();
  details(node);
}

function unfocus() {
  const cy = explorer.cy;
  if (!cy) return;
  explorer.focus = null;
  cy.batch(() => { cy.elements().removeClass('faded near focus'); cy.$(':selected').unselect(); });
  declutter();
  explorer.side.replaceChildren(h('p', { class: 'muted' }, 'Select a node to see it here.'));
}

// details shows the focused node in the side panel, as text.
function details(node) {
  const kind = node.data('kind');
  const label = node.data('label');
  const m = explorer.model;
  const out = [h('h3', { id: 'g-details-title' }, kind === 'cluster' ? 'Cluster: ' + label : label)];
  if (kind === 'procedure') {
    const n = m.nodes.get(node.id());
    out.push(h('p', null, stateBadge(n.cls)), h('p', null, 'Tools: ', (n.signature || []).join(', ') || '—'), h('p', null, nameLink('open the procedure', 'procedure', label)));
  } else if (kind === 'tool') {
    out.push(h('p', null, stateBadge(node.data('cls'))), h('p', null, nameLink('graph of this tool', 'graph', 'tool', label)));
  } else if (kind === 'cause') {
    out.push(h('p', null, nameLink('open the cause', 'cause', label)));
  } else {
    const c = explorer.clusters.get(node.id());
    const open = explorer.expandedClusters.has(node.id());
    out.push(h('p', null, `${c.members.length} procedures, by ${c.of}; `, open ? 'expanded (tap again to collapse)' : 'tap to expand'),
      h('p', { class: 'badges' }, Object.keys(STATES).map((s) => [stateBadge(s), ' ' + Math.round(node.data({ read_only: 'ro', state_changing: 'sc', unknown: 'un' }[s])) + '% '])),
      h('ul', { class: 'members' }, c.members.slice(0, 50).map((p) => h('li', null, nameLink(m.nodes.get(p).text, 'procedure', m.nodes.get(p).label)))),
      c.members.length > 50 ? h('p', { class: 'muted' }, `and ${c.members.length - 50} more`) : null);
  }
  explorer.side.replaceChildren(...out.filter(Boolean));
}

// bringIntoView fits the view to a node's neighbourhood (zoomed in at most
// 1.5 times).
function bringIntoView(node) {
  if (node.empty()) return;
  const cy = explorer.cy;
  cy.fit(node.closedNeighborhood(), 60);
  if (cy.zoom() > 1.5) cy.zoom({ level: 1.5, position: node.position() });
}

// findAndFocus finds the best match for text among every node of the
// model (shown or inside a cluster): an exact name first, then a name or
// shown label starting with it, then one containing it; expands the
// cluster hiding it, focuses it and brings it into view.
async function findAndFocus(text) {
  const q = String(text).trim().toLowerCase();
  if (!q || !explorer.cy) return;
  const m = explorer.model;
  let best = null, score = 0, matches = 0;
  for (const n of m.nodes.values()) {
    const label = String(n.label).toLowerCase(), shown = String(n.shown).toLowerCase();
    const s = label === q ? 4 : label.startsWith(q) || shown.startsWith(q) ? 3 : label.includes(q) || shown.includes(q) ? 2 : 0;
    if (s) matches++;
    if (s > score || (s === score && s && best && n.frequency > best.frequency)) { best = n; score = s; }
  }
  if (!best) {
    explorer.status.replaceChildren(h('span', { id: 'g-not-found' }, 'Nothing in the graph matches “', text, '”.'));
    explorer.found = null;
    return;
  }
  let id = best.id;
  if (explorer.cy.getElementById(id).empty()) {
    const cs = (explorer.clusterOf && explorer.clusterOf.get(id)) || [];
    if (cs.length) {
      explorer.expandedClusters.add(cs[0]);
      await rebuild(false);
    } else {
      const c = [...(explorer.clusters || new Map()).values()].find((x) => x.anchor === id);
      if (c) id = c.id;
    }
  }
  focusOn(id);
  bringIntoView(explorer.cy.getElementById(id));
  explorer.found = id;
  updateStatus();
  notify(`Focused ${best.label}` + (matches > 1 ? ` (best of ${matches} matches)` : ''));
}

// expand adds a node's neighbourhood (one hop) from the server to the view.
async function expand(node) {
  const kind = node.data('kind');
  const label = node.data('label');
  let graph;
  try {
    graph = await get('/v1/graph', { [kind]: label, depth: 1 });
  } catch (e) {
    explorer.status.replaceChildren(errorBox(e));
    return;
  }
  if (!explorer.starts[kind].includes(label)) explorer.starts[kind].push(label);
  explorer.model = merged(explorer.model, graph);
  explorer.expanded = (explorer.expanded || 0) + 1;
  await rebuild(false);
  focusOn(node.id());
}

function exportPNG() {
  if (!explorer.cy) return;
  download('procgraph.png', explorer.cy.png({ full: true, output: 'blob', bg: '#ffffff' }));
  notify('Exported the view as procgraph.png.');
}

// exportText downloads the server's export of the view's query: its start
// nodes (the filter and every expanded node) at its depth.
async function exportText(format) {
  try {
    const text = await api('GET', '/v1/graph', { query: query({ format }), raw: true });
    download('procgraph.' + format, text, format === 'dot' ? 'text/vnd.graphviz' : 'application/graphml+xml');
    notify('Exported the graph as procgraph.' + format + '.');
  } catch (e) {
    notify('The export failed: ' + e.message, true);
    explorer.status.replaceChildren(errorBox(e));
  }
}
