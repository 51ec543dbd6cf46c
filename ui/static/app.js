// app.js: the console's router, navigation and token form.
import { h, errorBox, notify } from './dom.js';
import { token, takeTokenFromURL } from './api.js';
import { proceduresPage } from './pages/procedures.js';
import { procedurePage } from './pages/procedure.js';
import { graphPage } from './pages/graph.js';
import { causesPage, causePage } from './pages/causes.js';
import { auditPage } from './pages/audit.js';
import { cataloguePage } from './pages/catalogue.js';
import { approvalsPage } from './pages/approvals.js';
import { driftPage } from './pages/drift.js';
import { healthPage } from './pages/health.js';

const pages = {
  procedures: proceduresPage,
  procedure: procedurePage,
  graph: graphPage,
  causes: causesPage,
  cause: causePage,
  audit: auditPage,
  catalogue: cataloguePage,
  approvals: approvalsPage,
  drift: driftPage,
  health: healthPage,
};

const nav = [['Procedures', 'procedures'], ['Graph', 'graph'], ['Causes', 'causes'], ['Approvals', 'approvals'], ['Drift', 'drift'], ['Health', 'health'], ['Audit log', 'audit'], ['Catalogue', 'catalogue']];

let current = 0;
let needToken = false;

// parseHash splits #/page/arg...?query into its parts.
function parseHash() {
  const hash = location.hash.replace(/^#\/?/, '');
  const [path, qs] = hash.split('?');
  const parts = path.split('/').filter(Boolean).map((p) => { try { return decodeURIComponent(p); } catch (_) { return p; } });
  return { page: parts[0] || 'procedures', args: parts.slice(1), query: new URLSearchParams(qs || '') };
}

async function render() {
  const seq = ++current;
  const { page, args, query } = parseHash();
  const view = document.getElementById('view');
  renderNav(page);
  renderAuth();
  const ctx = {
    args, query,
    isCurrent: () => seq === current,
    show: (...nodes) => { if (seq === current) view.replaceChildren(...nodes.flat(Infinity).filter((n) => n !== null && n !== undefined && n !== false)); },
    rerender: render,
  };
  view.setAttribute('data-page', page);
  view.setAttribute('data-ready', 'false');
  try {
    await (pages[page] || proceduresPage)(ctx);
  } catch (e) {
    ctx.show(h('h1', null, 'Error'), errorBox(e));
  }
  if (seq === current) {
    // The benchmarks read this mark (ms since the navigation began).
    performance.mark('procgraph:rendered', { detail: location.hash });
    view.setAttribute('data-ready', 'true');
    view.setAttribute('data-rendered', location.hash);
  }
}

function renderNav(page) {
  const active = page === 'procedure' ? 'procedures' : page === 'cause' ? 'causes' : page;
  document.getElementById('nav').replaceChildren(...nav.map(([title, p]) =>
    h('a', { href: '#/' + p, class: p === active ? 'active' : '' }, title)));
}

function renderAuth() {
  const box = document.getElementById('auth');
  if (token.get()) {
    box.replaceChildren(h('span', { class: 'muted' }, 'token set for this tab '),
      h('button', { type: 'button', id: 'forget-token', onclick: () => { token.clear(); needToken = true; notify('The token is forgotten in this tab.'); render(); } }, 'Forget'));
    return;
  }
  if (!needToken) { box.replaceChildren(); return; }
  const input = h('input', { type: 'password', id: 'token', placeholder: 'bearer token', autocomplete: 'off' });
  const form = h('form', { id: 'token-form', onsubmit: (ev) => {
    ev.preventDefault();
    if (!input.value) return;
    token.set(input.value.trim());
    needToken = false;
    notify('Token set for this tab.');
    render();
  } }, h('label', { for: 'token' }, 'This server needs a token: '), input, h('button', { type: 'submit' }, 'Use token'));
  box.replaceChildren(form);
}

takeTokenFromURL();
window.addEventListener('procgraph:unauthorized', () => { needToken = true; renderAuth(); });
window.addEventListener('hashchange', () => { takeTokenFromURL(); render(); });
render();
