// pages/approvals.js: the pending approvals (the turn gate): code beside
// the signature, classification and code hash the server computed,
// read-only badges and a deadline countdown; approve (run once, auto-run,
// always ask), reject, or edit the code and approve. The agent's text is
// shown visibly (dom.js visible): hidden characters are marked escapes. The queue
// follows the change feed (GET /v1/changes) without reloading: new
// approvals appear, resolved ones leave, and what an operator is typing
// stays. A slow poll covers approvals created on another instance.
import { h, badge, when, errorBox, editableText } from '../dom.js';
import { api, get, hasScope, follow } from '../api.js';
import { highlight } from '../highlight.js';

// FALLBACK_MS: the feed names this instance's changes at once; approvals
// created through another instance are seen by this slower poll.
const FALLBACK_MS = 60000;

export async function approvalsPage(ctx) {
  const canGrant = await hasScope('grant');
  const list = h('div', { id: 'approvals' });
  const status = h('p', { id: 'approvals-status', class: 'muted' });
  const cards = new Map();
  ctx.show(h('h1', null, 'Approvals'), canGrant ? null : h('p', { class: 'muted', id: 'no-grant' }, 'Deciding needs a token with the grant scope.'), status, list);

  const refresh = async () => {
    let answer;
    try {
      answer = await get('/v1/approvals', { status: 'pending', limit: 100 });
    } catch (e) {
      status.replaceChildren(errorBox(e));
      return;
    }
    const pending = answer.approvals || [];
    const ids = new Set(pending.map((a) => a.id));
    for (const [id, card] of cards) if (!ids.has(id)) { card.el.remove(); cards.delete(id); }
    for (const a of pending) {
      if (!cards.has(a.id)) {
        const card = approvalCard(a, canGrant, refresh);
        card.tick();
        cards.set(a.id, card);
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

function approvalCard(a, canGrant, refresh) {
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
    if (!editor.hidden && choice !== 'reject' && editor.value !== edited) body.code = editor.value;
    try {
      await api('POST', '/v1/approvals/' + encodeURIComponent(a.id) + '/resolve', { body });
      await refresh();
    } catch (e) {
      out.replaceChildren(errorBox(e));
    }
  };
  const button = (choice, text) => h('button', { type: 'button', class: 'resolve', 'data-choice': choice, onclick: () => resolve(choice) }, text);
  const el = h('article', { class: 'approval', 'data-id': a.id },
    h('h3', null, a.summary || '(no summary)'),
    h('p', { class: 'badges' }, a.read_only ? badge('read-only', 'ok') : badge('state-changing', 'warn'), a.opaque ? badge('opaque', 'warn') : null,
      ' ', countdown),
    h('p', { class: 'muted' }, `session ${a.session_id} · ${a.phase} · requested by ${a.requested_by} at ${when(a.requested_at)}`),
    h('p', { class: 'signature' }, 'Signature: ', (a.signature || []).map((t) => badge(t, 'tool')),
      (a.state_changing_tools || []).length ? h('span', { class: 'muted' }, ' state-changing: ' + a.state_changing_tools.join(', ')) : null),
    (a.unknown_tools || []).length ? h('p', { class: 'unknown-tools' }, 'Unknown tools (refused at run time): ', a.unknown_tools.map((t) => badge(t, 'warn'))) : null,
    (a.procedures || []).length ? h('p', null, 'Procedures: ', a.procedures.map((p) => badge(p.name + (p.read_only ? ' (read-only)' : ''), 'tool'))) : null,
    h('p', { class: 'muted code-hash' }, 'code hash ' + (a.code_hash || '')),
    highlight(a.code || ''),
    a.arguments ? h('pre', { class: 'code approval-arguments' }, JSON.stringify(a.arguments, null, 2)) : null,
    canGrant ? [editor, h('div', { class: 'actions' }, reason,
      button('run_once', 'Run once'), button('auto_run', 'Auto-run'), button('always_ask', 'Always ask'), button('reject', 'Reject'),
      h('button', { type: 'button', class: 'edit', onclick: () => { editor.hidden = !editor.hidden; } }, 'Edit code')), out] : null);
  return { el, tick };
}
