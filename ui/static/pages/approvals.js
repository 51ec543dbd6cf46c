// pages/approvals.js: the pending approvals (the turn gate): code beside
// the signature, classification and code hash the server computed,
// read-only badges and a deadline countdown; approve (run once, auto-run,
// always ask), reject, or edit the code and approve. The agent's text is
// shown visibly (dom.js visible): hidden characters are marked escapes. The queue
// follows the change feed (GET /v1/changes) without reloading: new
// approvals appear, resolved ones leave, and what an operator is typing
// stays. A slow poll covers approvals created on another instance. Each
// card shows its turn's id (trn_…, what the CLI takes); a resolution is
// confirmed in the notice bar; the history lists the resolved approvals
// (GET /v1/approvals without a status: choice, who, when, reason).
// Each card shows every procedure the block may reach, each level, with
// the code and code hash the approval binds to (a truncated one loads
// whole with one click), and what each answer covers; an answer that
// grants durable auto-run asks for a confirmation that says what it
// grants. A card whose turn changed since it was read is read anew.
// A turn paused at a call (review at the call) shows that call first —
// its tool, its arguments as evaluated, its schema hash —, then the
// reads it made before it (bounded by the server, shown visibly), the
// code with the stopping line marked, and the answers for that call.
import { h, badge, stateBadge, when, errorBox, editableText, notify, table, codeHash, section } from '../dom.js';
import { api, get, hasScope, follow } from '../api.js';
import { highlight } from '../highlight.js';

// FALLBACK_MS: the feed names this instance's changes at once; approvals
// created through another instance are seen by this slower poll.
const FALLBACK_MS = 60000;

// HISTORY is how many of the latest approvals the history reads.
const HISTORY = 100;

// historyTable lists resolved approvals: the turn, what was decided (the
// operator's choice, or the status when no one decided: expired,
// cancelled), by whom, when and why.
function historyTable(resolved) {
  if (!resolved.length) return h('p', { class: 'muted', id: 'no-history' }, 'No resolved approvals yet.');
  return table([
    ['Turn', (a) => h('code', { class: 'turn-id' }, a.id)],
    ['Summary', (a) => a.summary || '—'],
    ['Class', (a) => stateBadge(a.read_only)],
    ['Decision', (a) => badge(a.resolution ? a.resolution.choice : a.status, a.resolution && a.resolution.choice !== 'reject' ? 'ok' : 'warn')],
    ['By', (a) => (a.resolution && a.resolution.by) || '—'],
    ['At', (a) => when(a.resolution && a.resolution.at)],
    ['Reason', (a) => (a.resolution && a.resolution.reason) || '—'],
    ['Status', (a) => a.status],
    ['Code hash', (a) => codeHash(a.code_hash, 12)],
  ], resolved, { id: 'history', class: 'grid' });
}

export async function approvalsPage(ctx) {
  const canGrant = await hasScope('grant');
  const list = h('div', { id: 'approvals' });
  const status = h('p', { id: 'approvals-status', class: 'muted' });
  const cards = new Map();
  const history = h('div', { id: 'approvals-history' });
  ctx.show(h('h1', null, 'Approvals'), canGrant ? null : h('p', { class: 'muted', id: 'no-grant' }, 'Deciding needs a token with the grant scope.'), status, list,
    section('History', h('p', { class: 'muted' }, 'The latest resolved approvals, newest first.'), history));

  const refresh = async () => {
    let answer, recent;
    try {
      [answer, recent] = await Promise.all([get('/v1/approvals', { status: 'pending', limit: 100 }), get('/v1/approvals', { limit: HISTORY })]);
    } catch (e) {
      status.replaceChildren(errorBox(e));
      return;
    }
    history.replaceChildren(historyTable((recent.approvals || []).filter((a) => a.status !== 'pending')));
    const pending = answer.approvals || [];
    const keys = new Set(pending.map(cardKey));
    for (const [key, card] of cards) if (!keys.has(key)) { card.el.remove(); cards.delete(key); }
    for (const a of pending) {
      const key = cardKey(a);
      if (!cards.has(key)) {
        // A card whose turn changed since it was shown (a resolution's
        // conflict: review it again) is dropped and read anew.
        const card = approvalCard(a, canGrant, refresh, () => { cards.get(key)?.el.remove(); cards.delete(key); return refresh(); });
        card.tick();
        cards.set(key, card);
        list.append(card.el);
      }
    }
    status.replaceChildren(`${pending.length} pending · updated ${when(new Date().toISOString())}`);
  };
  await refresh();
  const tick = () => { for (const c of cards.values()) c.tick(); };
  tick();
  const stopFeed = follow((c) => {
    if (!ctx.isCurrent()) return;
    if (c.kind === 'connected') status.dataset.live = 'true';
    if (c.kind === 'disconnected') status.dataset.live = 'false';
    if (['connected', 'approval', 'lost', 'remote'].includes(c.kind)) refresh();
  });
  const stop = () => { stopFeed(); clearInterval(timer); clearInterval(clock); };
  const timer = setInterval(() => { if (ctx.isCurrent()) refresh(); else stop(); }, FALLBACK_MS);
  const clock = setInterval(() => { if (ctx.isCurrent()) tick(); else stop(); }, 1000);
}

// cardKey names a pending approval's card: its turn, and the call it is
// paused at (review at the call), so that a turn paused at its next call
// is a new card, never the last call's answered again.
function cardKey(a) {
  return a.call ? `${a.id}@${a.call.position}:${a.call.args_digest}` : a.id;
}

const CHOICES = { run_once: 'approved to run once', run_all: 'approved with every later call', auto_run: 'approved with auto-run', always_ask: 'approved, always ask', reject: 'rejected' };

function approvalCard(a, canGrant, refresh, reread) {
  // call: the call a turn reviewed at the call is paused at (null otherwise).
  const call = a.status === 'pending' && a.call ? a.call : null;
  const countdown = h('span', { class: 'countdown' });
  const deadline = Date.parse(a.deadline);
  const tick = () => {
    const s = Math.max(0, Math.round((deadline - Date.now()) / 1000));
    countdown.replaceChildren(s > 0 ? `expires in ${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}` : 'expired');
  };
  const out = h('div', { class: 'approval-result' });
  const reason = h('input', { class: 'approval-reason', placeholder: 'reason (required)', maxlength: 2048 });
  // The editor holds the code as the card shows it (dom.js editableText):
  // a hidden character as its escape (\u001b, as text). What an operator
  // edits and submits is what they read; unedited, the code runs as the
  // server holds it.
  const code = a.code || '';
  const edited = editableText(code);
  const editor = h('textarea', { class: 'approval-code', rows: 8, cols: 80, spellcheck: 'false', value: edited });
  editor.hidden = true;
  const resolve = async (choice) => {
    const r = reason.value.trim();
    if (!r) { out.replaceChildren(h('p', { class: 'error', role: 'alert' }, 'A reason is required.')); reason.focus(); return; }
    const body = { choice, reason: r };
    // An answer at a call names it: the server refuses it once the turn
    // paused at another (an answer read at one pause never answers the next).
    if (call) body.call = { position: call.position, args_digest: call.args_digest };
    if (!editor.hidden && choice !== 'reject' && editor.value !== edited) body.code = editor.value;
    try {
      const answer = await api('POST', '/v1/approvals/' + encodeURIComponent(a.id) + '/resolve', { body });
      const st = answer && answer.turn ? answer.turn.status : choice;
      notify(`${a.id}: ${CHOICES[choice]} (${st}) — reason: ${r}`);
      await refresh();
    } catch (e) {
      notify(`${a.id}: not resolved: ${e.message}`, true);
      out.replaceChildren(errorBox(e));
      if (e.status === 409 && e.details && e.details.turn) await reread();
    }
  };
  // A choice that grants durable auto-run (its cover names grants) is
  // confirmed first: the confirmation step says exactly what it grants.
  const confirmBox = h('div', { class: 'grant-confirm', role: 'alertdialog' });
  confirmBox.hidden = true;
  const ask = (choice) => {
    const cover = (a.covers || []).find((c) => c.choice === choice);
    // Edited code grants what its own calls say: the confirmation says so.
    const text = cover && cover.if_edited && !editor.hidden && editor.value !== edited ? cover.if_edited : null;
    if (!text && (!cover || !(cover.grants || []).length)) { resolve(choice); return; }
    confirmBox.replaceChildren(h('p', null, h('strong', null, 'Confirm the durable grant: '), text || cover.text),
      h('button', { type: 'button', class: 'confirm-grant', onclick: () => { confirmBox.hidden = true; resolve(choice); } }, 'Confirm grant'),
      ' ', h('button', { type: 'button', class: 'cancel-grant', onclick: () => { confirmBox.hidden = true; } }, 'Cancel'));
    confirmBox.hidden = false;
  };
  const button = (choice, text) => h('button', { type: 'button', class: 'resolve', 'data-choice': choice, onclick: () => ask(choice) }, text);
  const buttons = call
    ? [button('run_once', 'Run this call'), button('run_all', 'Run this and every later call'), button('auto_run', 'Auto-run'), button('always_ask', 'Run this call, always ask'), button('reject', 'Reject')]
    : [button('run_once', 'Run once'), button('auto_run', 'Auto-run'), button('always_ask', 'Always ask'), button('reject', 'Reject')];
  const el = h('article', { class: 'approval' + (call ? ' at-call' : ''), 'data-id': a.id },
    call ? pausedCall(call) : null,
    h('h3', null, h('code', { class: 'turn-id' }, a.id), ' ', a.summary || '(no summary)'),
    h('p', { class: 'badges' }, stateBadge(a.read_only), a.opaque ? badge('opaque', 'warn') : null,
      ' ', countdown),
    h('p', { class: 'muted' }, `session ${a.session_id} · ${a.phase} · requested by ${a.requested_by} at ${when(a.requested_at)}`),
    h('p', { class: 'signature' }, 'Signature: ', (a.signature || []).map((t) => badge(t, 'tool')),
      (a.state_changing_tools || []).length ? h('span', { class: 'muted' }, ' state-changing: ' + a.state_changing_tools.join(', ')) : null),
    (a.unknown_tools || []).length ? h('p', { class: 'unknown-tools' }, 'Unknown tools (refused at run time): ', a.unknown_tools.map((t) => badge(t, 'warn'))) : null,
    (a.procedures || []).length ? h('p', null, 'Procedures: ', a.procedures.map((p) => badge(p.name + (p.read_only ? ' (read-only)' : ''), 'tool'))) : null,
    h('p', { class: 'muted code-hash' }, 'code hash ', codeHash(a.code_hash || '')),
    call ? readsMade(a.reads) : null,
    call ? markedCode(a.code || '', call.line) : highlight(a.code || ''),
    a.arguments ? h('pre', { class: 'code approval-arguments' }, JSON.stringify(a.arguments, null, 2)) : null,
    (a.nested || []).map(nestedProcedure),
    (a.covers || []).length ? h('div', { class: 'covers' }, h('p', null, 'What each answer covers:'),
      h('ul', null, a.covers.map((c) => h('li', { 'data-choice': c.choice }, c.text)))) : null,
    canGrant ? [editor, h('div', { class: 'actions' }, reason,
      buttons,
      h('button', { type: 'button', class: 'edit', onclick: () => { editor.hidden = !editor.hidden; } }, 'Edit code')), confirmBox, out] : null);
  return { el, tick };
}

// pausedCall shows the call a turn paused at, the first thing of its card:
// the tool, its arguments as the program evaluated them (sent with the
// grant scope only; otherwise their digest), where it stopped and the
// tool's schema hash. Nothing of the call was sent.
function pausedCall(c) {
  const args = c.arguments !== undefined && c.arguments !== null
    ? h('pre', { class: 'code call-arguments' }, JSON.stringify(c.arguments, null, 2))
    : h('p', { class: 'muted call-arguments hidden-arguments' }, 'Arguments not shown: reading them needs the grant scope (digest ', h('code', null, c.args_digest || ''), ').');
  return h('section', { class: 'paused-call', role: 'region', 'aria-label': 'the call to review' },
    h('h3', null, 'Paused before ', h('code', { class: 'call-tool' }, 'tools.' + c.tool + '(…)'), ' ', badge('state-changing', 'warn')),
    h('p', { class: 'muted' }, `call ${c.position + 1} of the run${c.line ? ', line ' + c.line : ''} · nothing of it was sent · schema hash `,
      codeHash(c.schema_hash || '(none)', 12), ' · arguments digest ', codeHash(c.args_digest || '', 12)),
    args);
}

// readsMade lists the reads a paused turn made before its call: each tool,
// its arguments and its answer as the server bounds it (marked when
// truncated), shown as text.
function readsMade(reads) {
  const rs = reads || [];
  return h('section', { class: 'reads' }, h('h4', null, `Reads so far (${rs.length}), answered before the call`),
    rs.length ? h('ol', null, rs.map((r) => h('li', { class: 'read' },
      h('code', null, 'tools.' + r.tool), ' ', h('code', { class: 'read-arguments' }, JSON.stringify(r.arguments)),
      h('pre', { class: 'code read-response' }, String(r.response ?? '')),
      r.truncated ? h('p', { class: 'warn truncated' }, `Truncated: ${String(r.response ?? '').length} of ${r.bytes} bytes shown.`) : null))) : h('p', { class: 'muted' }, 'None.'));
}

// markedCode is a block's code, each line numbered, the line the run
// stopped at marked (class stop-line).
function markedCode(code, line) {
  const lines = String(code).replace(/\n$/, '').split('\n');
  return h('pre', { class: 'code marked-code' }, lines.map((l, i) => h('div', { class: 'code-line' + (i + 1 === line ? ' stop-line' : ''), 'data-line': i + 1 },
    h('span', { class: 'line-no' }, (i + 1 === line ? '▶ ' : '  ') + String(i + 1).padStart(3)), ' ', highlight(l).firstChild)));
}

// nestedProcedure shows one procedure the block may reach (an approval's
// nested entry): its level and callers, classification and the code hash
// the approval binds to, and its code; a truncated one says so, with a
// button that loads the whole version (GET /v1/procedures/{name}/versions/{hash}).
function nestedProcedure(r) {
  const by = (r.called_by || []).filter((c) => c !== '');
  const head = h('h4', null, 'Runs procedure ', h('code', null, r.name), ` · level ${r.depth} · called by ${by.length ? by.join(', ') : 'the block'} `,
    stateBadge(r.read_only), (r.state_changing_tools || []).length ? h('span', { class: 'muted' }, ' state-changing: ' + r.state_changing_tools.join(', ')) : null);
  if (r.code_hash === 'absent') return h('section', { class: 'nested', 'data-name': r.name }, head, h('p', { class: 'warn' }, 'No such procedure: its call is refused.'));
  const hash = h('p', { class: 'muted code-hash' }, 'code hash ', codeHash(r.code_hash));
  if (r.unavailable) return h('section', { class: 'nested', 'data-name': r.name }, head, hash, h('p', { class: 'warn' }, 'This version is not in the store: resolving asks for a review again.'));
  const code = h('div', { class: 'nested-code' }, highlight(r.code || ''));
  let more = null;
  if (r.truncated) {
    const note = h('p', { class: 'warn truncated' }, `Truncated: ${(r.code || '').length} of ${r.code_bytes} bytes shown. `);
    const load = h('button', { type: 'button', class: 'show-whole', onclick: async () => {
      try {
        const v = await get('/v1/procedures/' + encodeURIComponent(r.name) + '/versions/' + encodeURIComponent(r.code_hash));
        code.replaceChildren(highlight(v.code || ''));
        note.replaceChildren(`The whole code: ${r.code_bytes} bytes.`);
      } catch (e) {
        note.replaceChildren(errorBox(e));
      }
    } }, 'Show the whole code');
    note.append(load);
    more = note;
  }
  return h('section', { class: 'nested', 'data-name': r.name }, head, hash, code, more);
}
