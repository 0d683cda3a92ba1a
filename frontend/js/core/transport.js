// transport.js — the one way the frontend talks to the Go core.
//
// In the desktop app, calls go to the Wails bridge (window.go.main.Bridge.Call)
// and events come from the Wails runtime. In a browser, calls are
// POST /api/<Facade>.<Method> and events come from /api/events, one stream
// per user shared by the browser's tabs (events-worker.js). Which one
// applies is decided by <meta name="lembas-transport">, whose content the Go
// server rewrites to "desktop" in the desktop app. We never test whether
// window.go exists: an element with id="go" anywhere in the page makes it
// truthy (DOM clobbering).

import { openStream, backoff } from './eventstream.js';

/** Error kinds the dispatcher reports. */
const KINDS = new Set(['invalid', 'not_found', 'forbidden', 'unauthorized', 'conflict', 'unavailable', 'internal', 'rate_limited']);

/**
 * Error thrown by call(): `kind` is one of KINDS, `message` is for people.
 * `retryAfter` is the number of seconds a rate-limited request should wait
 * (from the Retry-After header), 0 when not told.
 */
export class ApiError extends Error {
  constructor(kind, message, retryAfter = 0) {
    const k = KINDS.has(kind) ? kind : 'internal';
    super(typeof message === 'string' && message !== '' ? message : defaultMessage(k));
    this.name = 'ApiError';
    this.kind = k;
    this.retryAfter = retryAfter > 0 ? retryAfter : 0;
  }
}

function defaultMessage(kind) {
  switch (kind) {
    case 'invalid': return 'The request was not valid.';
    case 'not_found': return 'Not found.';
    case 'forbidden': return 'You are not allowed to do that.';
    case 'unauthorized': return 'Please sign in.';
    case 'conflict': return 'That conflicts with a change made elsewhere.';
    case 'unavailable': return 'The server could not be reached.';
    case 'rate_limited': return 'Too many attempts; wait a moment and try again.';
    default: return 'Something went wrong.';
  }
}

// Read once, when the module is first evaluated: module scripts run after the
// document's <head> is parsed, and nothing added to the page later (rendered
// model output, say) can change the answer.
const DESKTOP = (() => {
  const meta = document.head && document.head.querySelector('meta[name="lembas-transport"]');
  return !!meta && meta.getAttribute('content') === 'desktop';
})();

/** True iff this page runs inside the desktop app. */
export function isDesktop() {
  return DESKTOP;
}

const WAIT_MS = 5000;
const POLL_MS = 25;

// waitFor resolves with get()'s first truthy value, polling for up to 5 s
// (the Wails runtime and bindings are injected shortly after page load).
function waitFor(get, what) {
  const found = get();
  if (found) return Promise.resolve(found);
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const timer = setInterval(() => {
      const v = get();
      if (v) {
        clearInterval(timer);
        resolve(v);
      } else if (Date.now() - started >= WAIT_MS) {
        clearInterval(timer);
        reject(new ApiError('unavailable', `The desktop ${what} did not start.`));
      }
    }, POLL_MS);
  });
}

function bridgeCall() {
  const fn = window.go && window.go.main && window.go.main.Bridge && window.go.main.Bridge.Call;
  return typeof fn === 'function' ? fn : null;
}

function runtimeEventsOn() {
  const fn = window.runtime && window.runtime.EventsOn;
  return typeof fn === 'function' ? fn : null;
}

// toApiError turns whatever a transport reports into an ApiError.
function toApiError(err, fallbackKind = 'internal') {
  if (err instanceof ApiError) return err;
  if (err && typeof err === 'object') {
    return new ApiError(typeof err.kind === 'string' ? err.kind : fallbackKind,
      typeof err.message === 'string' ? err.message : undefined);
  }
  if (typeof err === 'string' && err !== '') return new ApiError(fallbackKind, err);
  return new ApiError(fallbackKind);
}

const STATUS_KINDS = {
  400: 'invalid', 401: 'unauthorized', 403: 'forbidden', 404: 'not_found', 409: 'conflict',
  422: 'invalid', 429: 'rate_limited', 502: 'unavailable', 503: 'unavailable', 504: 'unavailable',
};

/**
 * call runs a facade method, e.g. call('Chats.List', {…}), and resolves to
 * its result. It rejects with an ApiError.
 */
export async function call(method, ...args) {
  if (typeof method !== 'string' || !/^[A-Za-z][A-Za-z0-9]*\.[A-Za-z][A-Za-z0-9]*$/.test(method)) {
    throw new ApiError('invalid', `Not a method name: ${String(method)}`);
  }
  return DESKTOP ? callDesktop(method, args) : callHTTP(method, args);
}

async function callDesktop(method, args) {
  const Call = await waitFor(bridgeCall, 'bridge');
  let res;
  try {
    res = await Call(method, args);
  } catch (err) {
    throw toApiError(err);
  }
  if (res && res.error) throw toApiError(res.error);
  return res ? res.result : undefined;
}

async function callHTTP(method, args) {
  let res;
  try {
    res = await fetch('/api/' + method, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(args),
      credentials: 'same-origin',
    });
  } catch {
    throw new ApiError('unavailable', 'Could not reach the server. Check the connection and try again.');
  }
  return readResponse(res, false);
}

// readResponse turns an HTTP answer into its JSON body or an ApiError. A 401
// outside the sign-in routes means the session is gone (signed out
// elsewhere, revoked, the account disabled): the app is told, once.
async function readResponse(res, authRoute) {
  let text;
  try {
    text = await res.text();
  } catch {
    throw new ApiError('unavailable', 'The connection was lost while reading the response.');
  }
  let body;
  let parsed = false;
  if (text !== '') {
    try {
      body = JSON.parse(text);
      parsed = true;
    } catch {
      // handled below
    }
  }
  if (res.ok) {
    if (text === '') return undefined;
    if (!parsed) throw new ApiError('internal', 'The server sent a response that is not JSON.');
    return body;
  }
  if (res.status === 401 && !authRoute) signedOut();
  const retryAfter = res.status === 429 ? retryAfterSeconds(res.headers.get('Retry-After')) : 0;
  if (parsed && body && typeof body.error === 'object' && body.error !== null) {
    const e = toApiError(body.error, STATUS_KINDS[res.status] || 'internal');
    e.retryAfter = retryAfter;
    throw e;
  }
  const kind = STATUS_KINDS[res.status] || 'internal';
  throw new ApiError(kind, `${defaultMessage(kind)} (HTTP ${res.status})`, retryAfter);
}

// retryAfterSeconds reads a Retry-After header: seconds, or an HTTP date.
function retryAfterSeconds(v) {
  if (!v) return 0;
  const n = Number(v);
  if (Number.isFinite(n)) return Math.max(0, Math.ceil(n));
  const when = Date.parse(v);
  return Number.isFinite(when) ? Math.max(0, Math.ceil((when - Date.now()) / 1000)) : 0;
}

// ---------- Accounts (browser only) ----------

/**
 * authState asks GET /api/auth/state who this browser is signed in as:
 * {instanceName, signUpMode, needsFirstUser, signedIn, user, insecure,
 * desktop}. It works signed out.
 */
export async function authState() {
  let res;
  try {
    res = await fetch('/api/auth/state', { credentials: 'same-origin', headers: { Accept: 'application/json' } });
  } catch {
    throw new ApiError('unavailable', 'Could not reach the server. Check the connection and try again.');
  }
  return readResponse(res, true);
}

/**
 * authPost posts JSON to one of the sign-in routes (login, signup, logout)
 * and resolves to its body. A 401 here is a wrong password, not a lost
 * session.
 */
export async function authPost(route, body) {
  if (!['login', 'signup', 'logout'].includes(route)) throw new ApiError('invalid', `Not an account route: ${route}`);
  let res;
  try {
    res = await fetch('/api/auth/' + route, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body || {}),
      credentials: 'same-origin',
    });
  } catch {
    throw new ApiError('unavailable', 'Could not reach the server. Check the connection and try again.');
  }
  return readResponse(res, true);
}

const signedOutFns = new Set();
let signedOutTold = false;

/**
 * onSignedOut calls fn once when the browser's session turns out to be
 * gone (a 401 from any call or from the event stream). Returns the
 * unsubscribe. Never called in the desktop app.
 */
export function onSignedOut(fn) {
  signedOutFns.add(fn);
  return () => signedOutFns.delete(fn);
}

function signedOut() {
  if (DESKTOP) return;
  stopEvents();
  if (signedOutTold) return;
  signedOutTold = true;
  for (const fn of [...signedOutFns]) safely(fn);
}

// ---------- Events ----------

const listeners = new Map(); // topic → Set of functions; '*' gets every event
let started = false;

function dispatch(env) {
  if (!env || typeof env !== 'object' || typeof env.topic !== 'string') return;
  const exact = listeners.get(env.topic);
  const all = listeners.get('*');
  for (const fn of exact ? [...exact] : []) safely(fn, env.data);
  for (const fn of all ? [...all] : []) safely(fn, env.data, env.topic);
}

function safely(fn, ...args) {
  try {
    fn(...args);
  } catch (err) {
    console.error('lembas: event listener failed', err);
  }
}

// The browser's events come from one stream per user for the whole browser
// (events-worker.js, a SharedWorker), not one per tab: browsers allow six
// HTTP/1.1 connections per host, and with a stream per tab the sixth tab's
// calls queued behind the others' streams for minutes. Without
// SharedWorker (Chrome on Android), the tab keeps its own stream.
let link = null; // {retry(), close()} while this tab follows a stream
let conn = DESKTOP ? 'open' : 'connecting';
const connFns = new Set();

function setConnection(s) {
  if (s === conn) return;
  conn = s;
  for (const fn of [...connFns]) safely(fn, s);
}

/**
 * connection is the state of the browser's event stream: 'connecting'
 * (not open yet), 'open', or 'lost' (the server cannot be reached; it is
 * being retried). Always 'open' in the desktop app.
 */
export function connection() {
  return conn;
}

/** onConnection calls fn(state) when connection() changes; returns the unsubscribe. */
export function onConnection(fn) {
  connFns.add(fn);
  return () => connFns.delete(fn);
}

function start() {
  if (started || signedOutTold) return;
  started = true;
  if (DESKTOP) {
    waitFor(runtimeEventsOn, 'runtime').then(
      (EventsOn) => EventsOn('lembas', dispatch),
      (err) => { started = false; console.error('lembas: events unavailable:', err.message); },
    );
    return;
  }
  follow();
}

// follow learns who this tab is signed in as (the stream is per user, and
// so is the worker), then joins that user's stream.
let following = 0; // counts starts, so that a stopped start cannot carry on
let known = null; // the user the page was just told it is signed in as

/**
 * followAs tells the events who the page found signed in (login.js, from
 * /api/auth/state at start), so that the first stream follows them
 * without asking the server again. A stream refused later asks anew.
 */
export function followAs(user) {
  known = user && typeof user.id === 'number' ? user : null;
}

async function follow() {
  const mine = ++following;
  const stale = () => !started || signedOutTold || mine !== following;
  let st = known ? { signedIn: true, user: known } : null;
  known = null;
  for (let attempt = 0; !st; attempt++) {
    try {
      st = await authState();
    } catch {
      setConnection('lost');
      await new Promise((r) => setTimeout(r, backoff(attempt)));
      if (stale()) return;
    }
  }
  if (stale()) return;
  if (!st.signedIn || !st.user) {
    signedOut();
    return;
  }
  link = joinShared(st.user.id) || ownStream(st.user.id);
}

// recheck runs when a stream was ended as signed out: the session it
// began with is gone, but this browser may have signed in again as the
// same person since (in another tab), whose tabs carry on with a new
// stream. Anyone else, or no one: this tab is signed out.
async function recheck(user, restart) {
  let st = null;
  try {
    st = await authState();
  } catch {
    // Unreachable: the new stream keeps trying and asks again if refused.
  }
  if (!started || signedOutTold) return;
  if (!st || (st.signedIn && st.user && st.user.id === user)) restart();
  else signedOut();
}

// ownStream is this tab's own stream, where it cannot share one.
function ownStream(user) {
  let s = null;
  let closed = false;
  const open = () => {
    if (closed) return;
    s = openStream('/api/events', user, {
      onEvent: dispatch,
      onState: setConnection,
      onSignedOut: () => recheck(user, open),
    });
  };
  open();
  return {
    retry: () => s.retry(),
    close: () => { closed = true; s.close(); },
  };
}

function joinShared(user) {
  if (typeof SharedWorker !== 'function') return null;
  let worker;
  try {
    // A test sets window.__lembasEventsPingMs to see a crashed tab dropped
    // in less than a minute (events-worker.js).
    const url = new URL('./events-worker.js', import.meta.url);
    if (window.__lembasEventsPingMs) url.searchParams.set('ping', String(window.__lembasEventsPingMs));
    worker = new SharedWorker(url, { type: 'module', name: `lembas-events-2:${user}` });
  } catch (err) {
    console.warn('lembas: no shared event stream, this tab keeps its own:', err && err.message);
    return null;
  }
  const port = worker.port;
  let fallback = null;
  let closed = false;
  port.onmessage = (e) => {
    const msg = e.data || {};
    if (closed) return;
    if (msg.type === 'event') dispatch(msg.env);
    else if (msg.type === 'state') setConnection(msg.state);
    else if (msg.type === 'signed-out') recheck(user, () => port.postMessage({ type: 'retry' }));
    else if (msg.type === 'ping') {
      port.postMessage({ type: 'pong' });
      if (window.__lembasEventsPingMs) window.__lembasEventsPorts = msg.ports;
    } else if (msg.type === 'dropped' && link === handle) {
      // This tab was frozen past two pings (the back-forward cache, or the
      // browser freezing a background tab): join again and reload what
      // it shows, since events went by meanwhile.
      handle.close();
      link = joinShared(user) || ownStream(user);
      dispatch({ topic: 'resync', data: { reason: 'restored' } });
    }
  };
  // A worker that cannot start (a browser without module workers): keep a
  // stream of our own instead.
  worker.onerror = () => {
    if (closed || fallback) return;
    console.warn('lembas: the shared event stream failed to start; this tab keeps its own');
    fallback = ownStream(user);
  };
  port.start();
  const bye = () => {
    try {
      port.postMessage({ type: 'bye' });
    } catch {
      // already gone
    }
  };
  // A tab going away says so, or the worker keeps posting to it. One kept
  // in the back-forward cache stays on (what was posted meanwhile waits
  // for it) and reloads what it shows when it comes back.
  const onHide = (e) => {
    if (!e.persisted) bye();
  };
  const onShow = (e) => {
    if (!e.persisted || closed) return;
    port.postMessage({ type: 'retry' });
    dispatch({ topic: 'resync', data: { reason: 'restored' } });
  };
  window.addEventListener('pagehide', onHide);
  window.addEventListener('pageshow', onShow);
  const handle = {
    retry() {
      if (fallback) fallback.retry();
      else port.postMessage({ type: 'retry' });
    },
    close() {
      closed = true;
      window.removeEventListener('pagehide', onHide);
      window.removeEventListener('pageshow', onShow);
      if (fallback) fallback.close();
      bye();
      port.close();
    },
  };
  return handle;
}

// Back online, or back to the tab: do not wait out the backoff.
if (!DESKTOP) {
  const retryNow = () => {
    if (link && conn !== 'open') link.retry();
  };
  window.addEventListener('online', retryNow);
  document.addEventListener('visibilitychange', () => {
    if (!document.hidden) retryNow();
  });
}

/** stopEvents closes the browser's event stream (after signing out). */
export function stopEvents() {
  following++;
  if (link) {
    const l = link;
    link = null;
    l.close();
  }
  if (!DESKTOP) started = false;
}

/**
 * on calls fn(data) for each event with the given topic, or fn(data, topic)
 * for every event when topic is '*'. It returns a function that
 * unsubscribes.
 */
export function on(topic, fn) {
  if (typeof topic !== 'string' || typeof fn !== 'function') {
    throw new TypeError('on(topic, fn) needs a topic string and a function');
  }
  let set = listeners.get(topic);
  if (!set) listeners.set(topic, (set = new Set()));
  set.add(fn);
  start();
  return () => {
    const s = listeners.get(topic);
    if (!s) return;
    s.delete(fn);
    if (s.size === 0) listeners.delete(topic);
  };
}

// ---------- Links ----------

const EXTERNAL_SCHEMES = new Set(['http:', 'https:', 'mailto:']);

/**
 * openExternal opens an http(s) or mailto URL outside the app: in the system
 * browser on the desktop, in a new tab otherwise. Any other scheme, or a
 * string that is not an absolute URL, is ignored. Resolves to true if the
 * URL was handed on.
 */
export async function openExternal(url) {
  let u;
  try {
    u = new URL(String(url));
  } catch {
    return false;
  }
  if (!EXTERNAL_SCHEMES.has(u.protocol)) return false;
  if (DESKTOP) {
    await call('App.OpenURL', u.href);
  } else {
    window.open(u.href, '_blank', 'noopener,noreferrer');
  }
  return true;
}
