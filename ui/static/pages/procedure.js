// pages/procedure.js: one procedure: what it is, its code and versions (with
// a diff between any two), its grant with the actions, and its audit trail.
import { h, link, nameLink, table, yesNo, stateBadge, badge, when, section, errorBox, notify, codeHash } from '../dom.js';
import { api, get, hasScope } from '../api.js';
import { highlight } from '../highlight.js';
import { diffView } from '../diff.js';
import { driftBadges } from './drift.js';
import { successRate, failureBadges, durations } from './health.js';

export async function procedurePage(ctx) {
  const name = ctx.args[0] || '';
  const path = '/v1/procedures/' + encodeURIComponent(name);
  const [p, versions, audit, canGrant, canAdmin] = await Promise.all([
    get(path), get(path + '/versions'), get('/v1/decisions', { procedure: name, limit: 50 }), hasScope('grant'), hasScope('admin'),
  ]);
  const ar = p.auto_run || {};
  ctx.show(
    h('h1', { id: 'proc-name' }, p.name),
    h('p', { class: 'badges' },
      stateBadge(p.read_only), ' ', yesNo(p.exposed, 'exposed', 'not exposed'), ' ',
      ar.active ? badge('auto-run active', 'ok') : ar.enabled ? badge('auto-run granted, inactive', 'warn') : badge('auto-run off', 'off'), ' ',
      badge(p.status, p.status === 'succeeded' ? 'ok' : 'warn'), p.retired ? badge('retired', 'warn') : null, p.opaque ? badge('opaque', 'warn') : null,
      p.stale ? h('a', { href: '#/drift', id: 'stale-badge' }, badge('stale', 'warn')) : null),
    p.stale ? h('p', { id: 'drift', class: 'drift' }, 'Since it last worked: ', driftBadges(p.drift)) : null,
    section('Summary', h('p', { id: 'summary' }, p.summary || '—'), h('p', { id: 'description', class: 'muted' }, p.description || '')),
    h('dl', { class: 'facts' },
      fact('Signature', (p.signature || []).flatMap((t, i) => [i ? ' · ' : '', link(t, 'graph', 'tool', t)])),
      fact('Frequency', p.frequency), fact('Uses', p.use_count),
      fact('Health', h('span', { id: 'health' }, successRate(p.health, p.demoted), ' ', failureBadges(p.health), durations(p.health))),
      fact('Dialect', p.dialect),
      fact('Code hash', codeHash(p.code_hash, 16)), fact('State-changing tools', (p.state_changing_tools || []).join(', ') || '—'),
      fact('Unknown tools', (p.unknown_tools || []).join(', ') || '—'), fact('Created', when(p.created_at)),
      fact('Last used', when(p.last_used_at))),
    section('Code', h('div', { id: 'code' }, highlight(p.code || ''))),
    section('Parameters', h('p', { id: 'parameters' }, (p.parameters || []).join(', ') || 'none'),
      h('pre', { id: 'input-schema', class: 'code' }, JSON.stringify(p.input_schema, null, 2))),
    section('Causes', table([
      ['Cause', (c) => link(c.name, 'cause', c.name)], ['Edge frequency', (c) => c.frequency],
    ], p.causes || [], { id: 'causes', class: 'grid' })),
    p.demoted ? demotionSection(ctx, p, canAdmin) : null,
    versionsSection(ctx, p, versions.versions || [], canGrant),
    grantSection(ctx, p, canGrant),
    section('Audit trail', auditTable(audit.decisions || [])),
  );
}

// GRANT_REFUSALS say why the API would refuse a grant (auto_run.grant_refusal).
const GRANT_REFUSALS = {
  not_read_only: 'it changes state and this server runs with mutating auto-run off',
  procedure_not_succeeded: 'its current version did not succeed',
};

function fact(title, ...value) {
  return [h('dt', null, title), h('dd', null, ...value)];
}

function reasonInput(id) {
  return h('input', { id, placeholder: 'reason (required)', maxlength: 2048 });
}

// act runs an action that needs a reason, confirms it (notify: the
// confirmation outlives the re-render), then re-renders the page.
async function act(ctx, reasonEl, out, what, call, refused) {
  const reason = reasonEl.value.trim();
  if (!reason) {
    out.replaceChildren(h('p', { class: 'error', role: 'alert' }, 'A reason is required.'));
    reasonEl.focus();
    return;
  }
  try {
    await call(reason);
    notify(what + ' — reason: ' + reason);
    await ctx.rerender();
  } catch (e) {
    notify((refused || what + ' failed') + ': ' + e.message, true);
    out.replaceChildren(errorBox(e));
  }
}

function grantSection(ctx, p, canGrant) {
  const ar = p.auto_run || {};
  const state = h('dl', { class: 'facts', id: 'grant-state' },
    fact('Granted', ar.enabled ? 'yes' : 'no'), fact('Active', ar.active ? 'yes' : 'no'),
    fact('Granted by', ar.granted_by || '—'), fact('Granted at', when(ar.granted_at)),
    fact('Reason', ar.reason || '—'), fact('Inactive because', ar.inactive_reason || '—'));
  if (!canGrant) return section('Auto-run', state, h('p', { class: 'muted', id: 'no-grant' }, 'Granting needs a token with the grant scope.'));
  const reason = reasonInput('grant-reason');
  const out = h('div', { id: 'grant-result' });
  const path = '/v1/procedures/' + encodeURIComponent(p.name) + '/auto-run';
  // Grant is offered only where the API says a grant would be accepted
  // (auto_run.grantable, the rule of PUT auto-run).
  const grant = ar.grantable ? h('button', { type: 'button', id: 'grant', disabled: ar.enabled, onclick: () => act(ctx, reason, out, 'Auto-run granted for ' + p.name,
    (r) => api('PUT', path, { body: { enabled: true, reason: r } }), 'Auto-run was not granted for ' + p.name) }, 'Grant auto-run') : null;
  const why = ar.grantable ? null : h('p', { class: 'muted', id: 'not-grantable' }, 'Auto-run cannot be granted: ' + (GRANT_REFUSALS[ar.grant_refusal] || ar.grant_refusal || 'the server refuses it') + '.');
  if (!grant && !ar.enabled) return section('Auto-run', state, why);
  return section('Auto-run', state, why, h('div', { class: 'actions' }, reason, grant,
    h('button', { type: 'button', id: 'revoke', disabled: !ar.enabled, onclick: () => act(ctx, reason, out, 'Auto-run revoked for ' + p.name, (r) => api('DELETE', path, { body: { reason: r } })) }, 'Revoke')), out);
}

// demotionSection says why a demoted procedure is demoted and what lifts
// it; an admin lifts it here (DELETE …/demotion), audited with the reason.
function demotionSection(ctx, p, canAdmin) {
  const why = h('p', { id: 'demotion' }, 'Demoted: its current version failed for more than one caller (the last: ',
    (p.health && p.health.last_failure_class) || '—', '). It is not offered to planners and does not run unattended. ',
    'No run lifts it: a verification against its recordings that passes does, a promote does, or an admin here.');
  if (!canAdmin) return section('Demotion', why, h('p', { class: 'muted', id: 'no-undemote' }, 'Lifting it needs a token with the admin scope.'));
  const reason = reasonInput('undemote-reason');
  const out = h('div', { id: 'undemote-result' });
  const path = '/v1/procedures/' + encodeURIComponent(p.name) + '/demotion';
  return section('Demotion', why, h('div', { class: 'actions' }, reason,
    h('button', { type: 'button', id: 'undemote', onclick: () => act(ctx, reason, out, 'Demotion lifted for ' + p.name, (r) => api('DELETE', path, { body: { reason: r } })) }, 'Lift demotion')), out);
}

function versionsSection(ctx, p, versions, canGrant) {
  // By default the diff goes from the previous capture to the latest.
  // captured_at is compared as a time (RFC 3339 texts with fractions of
  // varying length do not sort as text: ".12Z" > ".123Z"); two captures in
  // one millisecond tie, and the current one is then the older (the first
  // succeeded version stays current until a promote).
  const older = (x, y) => Date.parse(x.captured_at) - Date.parse(y.captured_at) || Number(!!y.current) - Number(!!x.current);
  const byTime = versions.map((v, i) => i).sort((i, j) => older(versions[i], versions[j]));
  const newest = byTime.length ? byTime[byTime.length - 1] : 0;
  const previous = byTime.length > 1 ? byTime[byTime.length - 2] : 0;
  const pick = (id, sel) => h('select', { id }, versions.map((v, i) => h('option', { value: v.code_hash, selected: i === sel },
    v.code_hash.slice(0, 12) + ' · ' + when(v.captured_at) + (v.current ? ' (current)' : ''))));
  const a = pick('diff-a', previous);
  const b = pick('diff-b', newest);
  const out = h('div', { id: 'diff-out' });
  const showDiff = async () => {
    try {
      const base = '/v1/procedures/' + encodeURIComponent(p.name) + '/versions/';
      const [va, vb] = await Promise.all([get(base + encodeURIComponent(a.value)), get(base + encodeURIComponent(b.value))]);
      out.replaceChildren(h('p', { class: 'muted' }, `${va.code_hash.slice(0, 12)} → ${vb.code_hash.slice(0, 12)}`), diffView(va.code || '', vb.code || ''));
    } catch (e) {
      out.replaceChildren(errorBox(e));
    }
  };
  const reason = canGrant ? reasonInput('promote-reason') : null;
  const promoteOut = h('div', { id: 'promote-result' });
  const rows = table([
    ['Code hash', (v) => codeHash(v.code_hash, 16)], ['Captured', (v) => when(v.captured_at)],
    ['Frequency', (v) => v.frequency], ['Status', (v) => v.status], ['Current', (v) => (v.current ? badge('current', 'ok') : '')], ['Drift', (v) => (v.stale ? driftBadges(v.drift) : '')],
    ['Health', (v) => [successRate(v.health), ' ', failureBadges(v.health)]],
    ['', (v) => (!canGrant || v.current ? '' : h('button', { type: 'button', class: 'promote', 'data-hash': v.code_hash,
      onclick: () => promote(v.code_hash) }, 'Promote'))],
  ], versions, { id: 'versions', class: 'grid' });
  // The reason input has its own button: it promotes the version picked
  // beside it (the rows' buttons promote their row's).
  const promote = (hash) => act(ctx, reason, promoteOut, 'Version ' + hash.slice(0, 12) + ' promoted',
    (r) => api('POST', '/v1/procedures/' + encodeURIComponent(p.name) + '/versions/' + encodeURIComponent(hash) + '/promote', { body: { reason: r } }));
  const others = versions.filter((v) => !v.current);
  const target = h('select', { id: 'promote-version', 'aria-label': 'version to promote' },
    others.map((v) => h('option', { value: v.code_hash }, v.code_hash.slice(0, 12) + '… · ' + when(v.captured_at))));
  const promoteBar = reason && others.length ? h('div', { class: 'actions' }, reason, target,
    h('button', { type: 'button', id: 'promote', onclick: () => promote(target.value) }, 'Promote'), promoteOut) : null;
  return section('Versions', rows, promoteBar,
    versions.length > 1 ? h('div', { class: 'actions' }, 'Diff ', a, ' → ', b, h('button', { type: 'button', id: 'show-diff', onclick: showDiff }, 'Show diff')) : h('p', { class: 'muted' }, 'One version.'),
    out);
}

export function auditTable(decisions) {
  return table([
    ['When', (d) => when(d.at)], ['Kind', (d) => d.kind], ['Procedure', (d) => (d.procedure ? nameLink(d.procedure, 'procedure', d.procedure) : '—')],
    ['Outcome', (d) => badge(d.outcome, d.outcome === 'allowed' ? 'ok' : 'warn')],
    ['Result', (d) => (d.result ? badge(d.result, d.result === 'succeeded' ? 'ok' : 'warn') : '')], ['Reason', (d) => d.reason], ['Note', (d) => d.note || ''], ['Actor', (d) => d.actor],
    ['Phase', (d) => d.phase || ''], ['Code hash', (d) => (d.code_hash ? codeHash(d.code_hash, 12) : '')],
  ], decisions, { class: 'grid audit' });
}
