// pages/graph.js: the graph explorer (cytoscape.js): causes → procedures →
// tools from GET /v1/graph; node size by frequency, edge width by edge
// frequency, colour by read-only / state-changing / unknown; click a node
// to expand it; filter by cause or tool; pick a layout; export.
import { h, route, withQuery, download, errorBox, visibleText } from '../dom.js';
import { get, api } from '../api.js';

const LAYOUTS = ['auto', 'cose', 'breadthfirst', 'concentric', 'circle', 'grid'];
const COLOURS = { read_only: '#2f9e44', state_changing: '#e03131', unknown: '#f08c00' };

// explorer is the page's state, also reachable from tests and benchmarks
// as window.procgraphExplorer.
const explorer = { cy: null, starts: { procedure: [], cause: [], tool: [] }, depth: 1, layout: 'auto', ready: false };
window.procgraphExplorer = explorer;

// load draws a graph answer (the shape of GET /v1/graph) in the page's
// explorer: what the benchmarks use to draw graphs larger than the
// server's neighbourhood cap.
explorer.load = (graph) => show(graph, document.getElementById('cy'), explorer.status);

export async function graphPage(ctx) {
  const [kind, name] = ctx.args;
  explorer.depth = Number(ctx.query.get('depth') || 1);
  explorer.layout = ctx.query.get('layout') || 'auto';
  explorer.starts = { procedure: [], cause: [], tool: [] };
  if (kind in explorer.starts && name) explorer.starts[kind].push(name);
  const container = h('div', { id: 'cy', class: 'graph' });
  const status = h('p', { id: 'graph-status', class: 'muted' }, 'Loading…');
  ctx.show(h('h1', null, 'Graph explorer'), controls(kind, name), status, container,
    h('p', { class: 'legend' }, legend('read-only', 'read_only'), legend('state-changing', 'state_changing'), legend('unknown', 'unknown'),
      ' · circles are causes, rounded boxes procedures, boxes tools; click a node to expand it'));
  let graph;
  try {
    graph = await get('/v1/graph', query());
  } catch (e) {
    status.replaceChildren(errorBox(e));
    return;
  }
  if (!ctx.isCurrent()) return;
  show(graph, container, status);
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
  const layout = h('select', { id: 'g-layout', onchange: () => { explorer.layout = layout.value; runLayout(); } },
    LAYOUTS.map((l) => h('option', { value: l, selected: l === explorer.layout }, l)));
  const form = h('form', { class: 'filters', id: 'graph-filters', onsubmit: (ev) => {
    ev.preventDefault();
    const q = { depth: depth.value, layout: layout.value };
    if (cause.value) location.hash = withQuery(route('graph', 'cause', cause.value), q);
    else if (tool.value) location.hash = withQuery(route('graph', 'tool', tool.value), q);
    else location.hash = withQuery(route('graph'), q);
  } }, h('label', null, 'Cause ', cause), h('label', null, 'Tool ', tool), depth, h('button', { type: 'submit', id: 'g-apply' }, 'Show'),
  h('label', null, ' Layout ', layout),
  h('span', { class: 'exports' }, 'Export ',
    h('button', { type: 'button', id: 'export-png', onclick: exportPNG }, 'PNG'),
    h('button', { type: 'button', id: 'export-graphml', onclick: () => exportText('graphml') }, 'GraphML'),
    h('button', { type: 'button', id: 'export-dot', onclick: () => exportText('dot') }, 'DOT')));
  return form;
}

function elements(graph) {
  const els = [];
  for (const n of graph.nodes || []) {
    const p = n.properties || {};
    els.push({ group: 'nodes', data: { id: n.id, label: n.label, shown: visibleText(n.label, true), kind: n.kind, cls: p.class || (n.kind === 'cause' ? 'cause' : 'unknown'), frequency: Number(p.frequency || 0) } });
  }
  for (const e of graph.edges || []) {
    els.push({ group: 'edges', data: { id: e.source + '\u0000' + e.kind + '\u0000' + e.target, source: e.source, target: e.target, kind: e.kind, frequency: Number(e.frequency || 0) } });
  }
  return els;
}

// style is the graph's look. On a big graph labels are drawn only for the
// selected node and its neighbours (measuring thousands of labels is most
// of the drawing time).
function style(big) {
  const labels = big ? [
    { selector: 'node', style: { label: '' } },
    { selector: 'node:selected, node.near', style: { label: 'data(shown)' } },
  ] : [];
  return [
    { selector: 'node', style: {
      label: 'data(shown)', 'font-size': 10, 'min-zoomed-font-size': 7, 'text-valign': 'bottom', 'text-margin-y': 3,
      'text-wrap': 'ellipsis', 'text-max-width': 160, color: '#222',
      width: 'mapData(frequency, 0, 20, 18, 60)', height: 'mapData(frequency, 0, 20, 18, 60)', 'background-color': '#868e96' } },
    { selector: 'node[cls = "read_only"]', style: { 'background-color': COLOURS.read_only } },
    { selector: 'node[cls = "state_changing"]', style: { 'background-color': COLOURS.state_changing } },
    { selector: 'node[cls = "unknown"]', style: { 'background-color': COLOURS.unknown } },
    { selector: 'node[kind = "cause"]', style: { shape: 'ellipse', 'background-color': '#4c6ef5', width: 26, height: 26 } },
    { selector: 'node[kind = "procedure"]', style: { shape: 'round-rectangle' } },
    { selector: 'node[kind = "tool"]', style: { shape: 'rectangle', width: 20, height: 20 } },
    { selector: 'node:selected', style: { 'border-width': 3, 'border-color': '#000' } },
    { selector: 'edge', style: { width: 'mapData(frequency, 0, 10, 1, 8)', 'line-color': '#adb5bd', 'target-arrow-color': '#adb5bd',
      'target-arrow-shape': 'triangle', 'curve-style': 'haystack', 'arrow-scale': 0.8 } },
    { selector: 'edge[kind = "INVESTIGATED_BY"]', style: { 'line-color': '#91a7ff', 'curve-style': big ? 'haystack' : 'bezier' } },
    ...labels,
  ];
}

// show draws graph into container (a new cytoscape instance) and lays it
// out; explorer.ready is set once the layout is done.
function show(graph, container, status) {
  const big = (graph.nodes || []).length > 400;
  explorer.ready = false;
  if (explorer.cy) explorer.cy.destroy();
  const cy = window.cytoscape({
    container, elements: elements(graph), style: style(big),
    wheelSensitivity: 0.3, textureOnViewport: big, hideEdgesOnViewport: big, pixelRatio: big ? 1 : 'auto', minZoom: 0.05, maxZoom: 4,
  });
  explorer.cy = cy;
  explorer.timing = { built: performance.now() };
  cy.on('tap', 'node', (ev) => expand(ev.target));
  if (big) {
    cy.on('select', 'node', (ev) => ev.target.closedNeighborhood('node').addClass('near'));
    cy.on('unselect', 'node', (ev) => ev.target.closedNeighborhood('node').removeClass('near'));
  }
  explorer.status = status;
  updateStatus(graph.truncated);
  runLayout();
}

function updateStatus(truncated) {
  const cy = explorer.cy;
  explorer.status.replaceChildren(`${cy.nodes().length} nodes, ${cy.edges().length} edges` + (truncated ? ' (truncated by the server: narrow the query)' : ''));
}

function layoutOptions(name, n) {
  if (name === 'auto') name = n > 300 ? 'concentric' : 'cose';
  const base = { name, animate: false, fit: true, padding: 20 };
  if (name === 'cose') return { ...base, numIter: n > 150 ? 300 : 1000, nodeRepulsion: () => 8000, idealEdgeLength: () => 60 };
  if (name === 'concentric') return { ...base, concentric: (node) => ({ cause: 3, procedure: 2, tool: 1 }[node.data('kind')] || 0), levelWidth: () => 1, minNodeSpacing: 4 };
  if (name === 'breadthfirst') return { ...base, directed: true, spacingFactor: 0.9 };
  return base;
}

function runLayout() {
  const cy = explorer.cy;
  if (!cy) return Promise.resolve();
  explorer.ready = false;
  const layout = cy.layout(layoutOptions(explorer.layout, cy.nodes().length));
  const done = layout.promiseOn('layoutstop').then(() => { explorer.ready = true; if (explorer.timing) explorer.timing.laidOut = performance.now(); explorer.layouts = (explorer.layouts || 0) + 1; });
  layout.run();
  return done;
}

// expand adds a node's neighbourhood (one hop) to the view.
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
  const cy = explorer.cy;
  const fresh = elements(graph).filter((el) => cy.getElementById(el.data.id).empty());
  cy.add(fresh);
  explorer.expanded = (explorer.expanded || 0) + 1;
  updateStatus(graph.truncated);
  await runLayout();
}

function exportPNG() {
  if (!explorer.cy) return;
  download('procgraph.png', explorer.cy.png({ full: true, output: 'blob', bg: '#ffffff' }));
}

// exportText downloads the server's export of the view's query: its start
// nodes (the filter and every expanded node) at its depth.
async function exportText(format) {
  try {
    const text = await api('GET', '/v1/graph', { query: query({ format }), raw: true });
    download('procgraph.' + format, text, format === 'dot' ? 'text/vnd.graphviz' : 'application/graphml+xml');
  } catch (e) {
    explorer.status.replaceChildren(errorBox(e));
  }
}

