// pages/health.js: a version's health (docs/api.md "health"): its success
// rate over its runs, its failures by class (whether each counts toward
// demotion), and its demotion streak.
import { h, badge } from '../dom.js';

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
