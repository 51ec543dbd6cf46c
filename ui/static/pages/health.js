// pages/health.js: a version's health (docs/api.md "health"): its success
// rate over its runs, and its failures by class.
import { h, badge } from '../dom.js';

// successRate is "N% of R runs" ("never run" before the first), with a
// demoted badge while the procedure is demoted.
export function successRate(health, demoted) {
  const flag = demoted ? [' ', h('span', { class: 'badge warn demoted', title: 'its current version failed its last runs: not offered to planners, its grant inactive; a success or a promote lifts it' }, 'demoted')] : [];
  if (!health || !health.runs) return h('span', { class: 'muted health' }, 'never run', ...flag);
  const pct = Math.round(100 * health.success_rate);
  const kind = health.consecutive_failures > 0 ? 'warn' : 'ok';
  return h('span', { class: 'health' }, badge(`${pct}% of ${health.runs} run${health.runs === 1 ? '' : 's'}`, kind), ...flag);
}

// failureBadges shows the failures by class ("tool_error ×3"), the last
// runs' failing streak first when there is one.
export function failureBadges(health) {
  if (!health) return '';
  const out = [];
  if (health.consecutive_failures > 0) {
    out.push(badge(`last ${health.consecutive_failures} failed`, 'warn'), ' ');
  }
  for (const [cls, n] of Object.entries(health.failures || {}).sort()) {
    out.push(badge(`${cls} ×${n}`, 'off'), ' ');
  }
  return out;
}

// durations is "p50 ≤ X ms, p95 ≤ Y ms" ("" before the first run).
export function durations(health) {
  if (!health || health.p50_ms == null) return '';
  return `p50 ≤ ${health.p50_ms} ms, p95 ≤ ${health.p95_ms} ms`;
}
