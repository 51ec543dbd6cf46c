// pages/health.js: a version's health (docs/api.md "health"): its success
// rate over its runs, its failures by class (whether each counts toward
// demotion), and its demotion streak; and the health overview page
// (healthPage).
import { h, badge, table, section, nameLink, when, errorBox } from '../dom.js';
import { get } from '../api.js';

// NEUTRAL are the failure classes that do not count toward demotion
// (procedures.CountsTowardDemotion): an outage or a slow server is not the
// procedure's fault.
const NEUTRAL = ['upstream_unavailable', 'timeout'];

// successRate is "N% of R runs" ("never run" before the first), with a
// demoted badge while the procedure is demoted.
export function successRate(health, demoted) {
  const flag = demoted ? [' ', h('span', { class: 'badge warn demoted', title: 'its current version failed for more than one caller: not offered to planners, its grant inactive; a passing verification, a promote or an admin lifts it' }, 'demoted')] : [];
  if (!health || !health.runs) return h('span', { class: 'muted health' }, 'never run', ...flag);
  const pct = Math.round(100 * health.success_rate);
  const kind = health.consecutive_failures > 0 ? 'warn' : 'ok';
  return h('span', { class: 'health' }, badge(`${pct}% of ${health.runs} run${health.runs === 1 ? '' : 's'}`, kind), ...flag);
}

// failureBadges shows the failures by class ("tool_error ×3"), each
// saying whether it counts toward demotion, after the last runs' failing
// streak and the demotion streak (with how many callers ran it) when
// there is one.
export function failureBadges(health) {
  if (!health) return '';
  const out = [];
  if (health.consecutive_failures > 0) {
    out.push(badge(`last ${health.consecutive_failures} failed`, 'warn'), ' ');
  }
  if (health.demotion_streak > 0) {
    const callers = health.demotion_callers > 1 ? 'several callers' : 'one caller';
    out.push(h('span', { class: 'badge warn streak', title: 'failures counting toward demotion since the last success; a demotion needs them from two callers or more' },
      `demotion streak ${health.demotion_streak}, ${callers}`), ' ');
  }
  for (const [cls, n] of Object.entries(health.failures || {}).sort()) {
    const neutral = NEUTRAL.includes(cls);
    out.push(h('span', { class: 'badge off failure' + (neutral ? ' neutral' : ''), 'data-class': cls,
      title: neutral ? 'not the procedure\'s fault: does not count toward demotion' : 'counts toward demotion' },
    `${cls} ×${n}`, neutral ? ' (not counted)' : ''), ' ');
  }
  return out;
}

// durations is "p50 ≤ X ms, p95 ≤ Y ms" ("" before the first run).
export function durations(health) {
  if (!health || health.p50_ms == null) return '';
  return `p50 ≤ ${health.p50_ms} ms, p95 ≤ ${health.p95_ms} ms`;
}

// OVERVIEW_PAGE and OVERVIEW_MAX bound what the overview reads: pages of
// GET /v1/procedures, the most frequent first, at most OVERVIEW_MAX
// procedures (it says so when the store holds more).
const OVERVIEW_PAGE = 500;
const OVERVIEW_MAX = 5000;
const SLOWEST = 20;

// healthPage is the health overview: the demoted procedures, those whose
// last run failed, the failures by class, and the slowest, from the
// procedures' health as GET /v1/procedures gives it.
export async function healthPage(ctx) {
  let procs = [];
  let total = 0;
  try {
    for (let offset = 0; offset < OVERVIEW_MAX; offset += OVERVIEW_PAGE) {
      const page = await get('/v1/procedures', { limit: OVERVIEW_PAGE, offset: offset || '' });
      total = page.total;
      procs = procs.concat(page.procedures || []);
      if (procs.length >= total || !(page.procedures || []).length) break;
    }
  } catch (e) {
    ctx.show(h('h1', null, 'Health'), errorBox(e));
    return;
  }
  const run = procs.filter((p) => p.health && p.health.runs > 0);
  const demoted = procs.filter((p) => p.demoted);
  const failing = run.filter((p) => !p.demoted && p.health.consecutive_failures > 0)
    .sort((a, b) => b.health.consecutive_failures - a.health.consecutive_failures || a.name.localeCompare(b.name));
  const classes = new Map();
  for (const p of run) {
    for (const [cls, n] of Object.entries(p.health.failures || {})) {
      const c = classes.get(cls) || { cls, failures: 0, procedures: 0 };
      c.failures += n;
      c.procedures++;
      classes.set(cls, c);
    }
  }
  const byClass = [...classes.values()].sort((a, b) => b.failures - a.failures || a.cls.localeCompare(b.cls));
  const slowest = run.filter((p) => p.health.p95_ms != null)
    .sort((a, b) => b.health.p95_ms - a.health.p95_ms || b.health.p50_ms - a.health.p50_ms || a.name.localeCompare(b.name)).slice(0, SLOWEST);
  const proc = (p) => nameLink(p.name, 'procedure', p.name);
  const rate = (p) => successRate(p.health, p.demoted);
  const cut = procs.length < total;
  ctx.show(h('h1', null, 'Health'),
    h('p', { id: 'health-summary' },
      `${procs.length} procedure${procs.length === 1 ? '' : 's'}${cut ? ` (the ${procs.length} most frequent of ${total})` : ''}: `,
      badge(`${demoted.length} demoted`, demoted.length ? 'warn' : 'ok'), ' ', badge(`${failing.length} failing`, failing.length ? 'warn' : 'ok'), ' ',
      badge(`${run.filter((p) => !p.demoted && p.health.consecutive_failures === 0).length} healthy`, 'ok'), ' ',
      badge(`${procs.length - run.length} never run`, 'off')),
    section('Demoted', demoted.length ? table([
      ['Procedure', proc], ['Health', rate], ['Failing streak', (p) => String((p.health && p.health.consecutive_failures) || 0)],
      ['Last failure', (p) => (p.health && p.health.last_failure_class) || '—'], ['At', (p) => when(p.health && p.health.last_failure_at)],
    ], demoted, { id: 'health-demoted', class: 'grid' }) : h('p', { class: 'muted', id: 'health-demoted' }, 'None: no procedure failed its last runs enough to be demoted.')),
    section('Failing', failing.length ? table([
      ['Procedure', proc], ['Health', rate], ['Failing streak', (p) => String(p.health.consecutive_failures)],
      ['Last failure', (p) => p.health.last_failure_class || '—'], ['At', (p) => when(p.health.last_failure_at)],
    ], failing, { id: 'health-failing', class: 'grid' }) : h('p', { class: 'muted', id: 'health-failing' }, 'None: every procedure that ran succeeded on its last run.')),
    section('By failure class', byClass.length ? table([
      ['Class', (c) => badge(c.cls, 'off')], ['Failures', (c) => String(c.failures)], ['Procedures', (c) => String(c.procedures)],
    ], byClass, { id: 'health-classes', class: 'grid' }) : h('p', { class: 'muted', id: 'health-classes' }, 'No failures.')),
    section('Slowest', slowest.length ? table([
      ['Procedure', proc], ['p95', (p) => `≤ ${p.health.p95_ms} ms`], ['p50', (p) => `≤ ${p.health.p50_ms} ms`], ['Runs', (p) => String(p.health.runs)], ['Health', rate],
    ], slowest, { id: 'health-slowest', class: 'grid' }) : h('p', { class: 'muted', id: 'health-slowest' }, 'No runs yet.')));
}
