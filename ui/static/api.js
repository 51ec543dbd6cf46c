// api.js: calls to procgraph's HTTP API (the console uses nothing else).
// With tokens configured, the token entered once (or taken from the URL's
// fragment, see takeTokenFromURL) is kept in this tab's sessionStorage and
// sent as a bearer token.

const KEY = 'procgraph.token';

export const token = {
  get: () => sessionStorage.getItem(KEY) || '',
  set: (t) => sessionStorage.setItem(KEY, t),
  clear: () => sessionStorage.removeItem(KEY),
};

// takeTokenFromURL keeps the token of a URL whose fragment carries one —
// #token=TOKEN (the console URL serve prints), or a deep link such as
// #/approvals&token=TOKEN or #/audit?kind=turn&token=TOKEN (a fragment is
// never sent to a server, so never logged there, nor in a Referer) — for
// this tab, and replaces the fragment at once, without the token, so that
// it stays neither in the address bar nor in the tab's history; a deep
// link keeps its page. Call it before anything renders or fetches.
export function takeTokenFromURL() {
  const { route, token: raw } = splitToken(location.hash);
  if (raw === null) return;
  history.replaceState(null, '', location.pathname + location.search + route);
  let t = '';
  try { t = decodeURIComponent(raw).trim(); } catch (_) { t = ''; }
  if (t) token.set(t);
}

// splitToken splits a fragment into its route without the token (#/procedures
// when nothing else is left) and the token's raw text (null: none).
export function splitToken(hash) {
  const m = /(^#|[&?])token=([^&]*)/.exec(hash);
  if (!m) return { route: hash, token: null };
  let rest = hash.slice(0, m.index) + (m[1] === '#' ? '#' : '') + hash.slice(m.index + m[0].length);
  if (m[1] === '?' && rest.charAt(m.index) === '&') rest = rest.slice(0, m.index) + '?' + rest.slice(m.index + 1);
  rest = rest.replace(/[?&]$/, '');
  if (rest === '#' || rest === '') rest = '#/procedures';
  return { route: rest, token: m[2] };
}

// ApiError is an error answer: status, the API's code, message, details.
export class ApiError extends Error {
  constructor(status, body, text) {
    const err = (body && body.error) || {};
    super(err.message || text || 'HTTP ' + status);
    this.status = status;
    this.code = err.code || 'http_' + status;
    this.details = err.details || {};
  }
}

// queryString is query as "?k=v&…" ("" when empty), skipping empty values;
// arrays repeat their key.
export function queryString(query) {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query || {})) {
    for (const x of [].concat(v)) if (x !== '' && x !== null && x !== undefined) qs.append(k, String(x));
  }
  const s = qs.toString();
  return s ? '?' + s : '';
}

// api sends one request; it returns the decoded JSON (or the text with
// raw) and throws ApiError for an error answer. A 401 also fires
// procgraph:unauthorized so the page asks for a token.
export async function api(method, path, opts = {}) {
  const resp = await fetch(path + queryString(opts.query), fetchOpts(opts.body, { method }));
  const text = await resp.text();
  if (resp.ok && opts.raw) return text;
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (_) { data = null; }
  if (!resp.ok) {
    if (resp.status === 401) window.dispatchEvent(new CustomEvent('procgraph:unauthorized'));
    throw new ApiError(resp.status, data, text);
  }
  return data;
}

// fetchOpts are the fetch options of every request (api and follow): this
// tab's token as a bearer token (none without one), body as JSON when
// given, no cookies, no cache; extra adds options (method, signal).
function fetchOpts(body, extra) {
  const headers = {};
  const t = token.get();
  if (t) headers.Authorization = 'Bearer ' + t;
  const opts = { ...extra, headers, credentials: 'omit', cache: 'no-store' };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    opts.body = JSON.stringify(body);
  }
  return opts;
}

export const get = (path, query) => api('GET', path, { query });

const whoCache = new Map();

// whoami is the holder of this tab's token and its scopes (GET /v1/whoami,
// read once per token); null when the API cannot say (no valid token).
export function whoami() {
  const k = token.get();
  if (!whoCache.has(k)) {
    whoCache.set(k, get('/v1/whoami').catch(() => {
      whoCache.delete(k);
      return null;
    }));
  }
  return whoCache.get(k);
}

// hasScope reports whether this tab's token holds scope (e.g. grant or
// admin).
export async function hasScope(scope) {
  const me = await whoami();
  return !!me && me.scopes.includes(scope);
}

// follow streams the change feed (GET /v1/changes, Server-Sent Events)
// and calls onChange with each change — and with {kind: 'connected'} each
// time the stream (re)opens, since changes may have been missed meanwhile.
// The stream is read with fetch, so the bearer token travels as for any
// call; after a drop it reconnects in 2 s. It returns the function that
// stops it. A change names what changed, never values: pages reread.
export function follow(onChange) {
  const ctl = new AbortController();
  let stopped = false;
  const run = async () => {
    while (!stopped) {
      try {
        const resp = await fetch('/v1/changes', fetchOpts(undefined, { signal: ctl.signal }));
        if (!resp.ok || !resp.body) throw new Error('HTTP ' + resp.status);
        onChange({ kind: 'connected' });
        const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
        let buf = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += value;
          let i;
          while ((i = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, i);
            buf = buf.slice(i + 2);
            const data = block.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
            if (!data) continue;
            let change = null;
            try { change = JSON.parse(data); } catch (_) { change = null; }
            if (change) onChange(change);
          }
        }
      } catch (_) {
        if (stopped) return;
      }
      if (!stopped) onChange({ kind: 'disconnected' });
      if (!stopped) await new Promise((r) => setTimeout(r, 2000));
    }
  };
  run();
  return () => { stopped = true; ctl.abort(); };
}
