// login.js — the browser's way in: before the app starts, ask the server
// who this browser is (GET /api/auth/state) and show the sign-in or
// create-account screen until someone is signed in. Any later 401 (signed
// out everywhere, a revoked session, a disabled account) brings the screen
// back in place of the app, keeping the URL's hash so that signing in
// returns there. The desktop app never comes here: its caller is the owner.
//
// Also here: the service worker, registered only in a browser and only in
// a secure context (https, or http on loopback).

import { html, render, useState, useEffect, useRef } from '../../vendor/htm-preact/standalone.module.js';
import { authState, authPost, onSignedOut, stopEvents, isDesktop, followAs } from '../core/transport.js';
import { setSignedInUser } from '../core/store.js';
import { Field, FormError, PasswordField, PasswordPair, pairProblem, useFormError } from '../core/fields.js';

let root = null;
let appStarted = false;
let startApp = null;

/**
 * bootBrowser starts the app once the browser is signed in; until then it
 * shows the sign-in screen in #app. start mounts the app.
 */
export function bootBrowser(rootEl, start) {
  root = rootEl;
  startApp = start;
  onSignedOut(() => {
    authState().then((st) => showLogin(st, 'ended'), () => showLogin(null, 'ended'));
  });
  check();
}

function check() {
  authState().then(
    (st) => {
      if (!st || st.signedIn || st.desktop) {
        enter(st && st.user);
        return;
      }
      showLogin(st, '');
    },
    (err) => {
      // A server from before accounts has no such route: everyone is the owner.
      if (err.kind === 'not_found') {
        enter(null);
        return;
      }
      screen(html`<${Unreachable} error=${err} onRetry=${check} />`);
    },
  );
}

function enter(user) {
  if (appStarted) {
    // Another person may have signed in: start over with nothing of the
    // previous session's state in memory. The hash survives the reload.
    location.reload();
    return;
  }
  appStarted = true;
  setSignedInUser(user || null);
  if (user) followAs(user); // the event stream need not ask again
  if (root.dataset.auth) render(null, root); // the sign-in screen
  delete root.dataset.auth;
  root.textContent = '';
  startApp();
}

// screen replaces whatever #app shows (the loading line, or the app).
function screen(vnode) {
  if (!appStarted && !root.dataset.auth) {
    root.textContent = '';
    root.dataset.auth = '1';
  }
  render(vnode, root);
}

function showLogin(state, reason) {
  const st = state || {};
  document.title = `Sign in · ${st.instanceName || 'LLeMbas'}`;
  screen(html`<${LoginScreen} key=${'login-' + Date.now()} state=${st} reason=${reason} onSignedIn=${(u) => enter(u)} />`);
}

// ---------- Screens ----------

function Brand({ name }) {
  return html`
    <div class="auth-brand">
      <img class="auth-mark" src="img/mark.svg" alt="" width="96" height="96" />
      <p class="auth-instance">${name || 'LLeMbas'}</p>
      <p class="auth-motto" aria-hidden="true">Speak, friend, and enter.</p>
    </div>`;
}

function Unreachable({ error, onRetry }) {
  return html`
    <main class="auth">
      <div class="auth-panel">
        <${Brand} name="LLeMbas" />
        <section class="card auth-card error-card" role="alert" aria-labelledby="auth-down-title">
          <header class="card-header"><h1 id="auth-down-title" class="card-title">Could not reach the server</h1></header>
          <div class="card-body form-grid">
            <p class="error-message">${error.message}</p>
            <p class="muted">The beacons are unlit. Check that the server is running, then try again.</p>
          </div>
          <div class="card-actions"><button type="button" class="btn btn-primary" onClick=${onRetry}>Try again</button></div>
        </section>
      </div>
    </main>`;
}

function InsecureNote() {
  return html`
    <p class="warning-note" id="auth-insecure">
      This page is served over plain HTTP, so your password travels unencrypted. Whoever runs this
      server should put HTTPS in front of it (see “Running it on a home server” in the LLeMbas README).
    </p>`;
}

// useCountdown returns the seconds left until `until` (ms), ticking.
function useCountdown(until) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (!until || until <= Date.now()) return undefined;
    const t = setInterval(() => {
      setNow(Date.now());
      if (Date.now() >= until) clearInterval(t);
    }, 250);
    return () => clearInterval(t);
  }, [until]);
  return until ? Math.max(0, Math.ceil((until - now) / 1000)) : 0;
}

function SignInForm({ state, reason, onSignedIn, onCreate }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const { error, fail, clear } = useFormError();
  const [busy, setBusy] = useState(false);
  const [waitUntil, setWaitUntil] = useState(0);
  const left = useCountdown(waitUntil);
  const first = useRef(null);

  useEffect(() => {
    if (first.current) first.current.focus();
  }, []);

  const submit = async (e) => {
    e.preventDefault();
    if (busy || left > 0) return;
    if (!username.trim() || !password) {
      fail('Enter your username and password.');
      return;
    }
    setBusy(true);
    clear();
    try {
      const r = await authPost('login', { username: username.trim(), password });
      onSignedIn(r && r.user);
      return;
    } catch (err) {
      let text = err.message;
      if (err.kind === 'unauthorized') text = 'Wrong username or password.';
      if (err.kind === 'rate_limited') {
        const s = err.retryAfter || 30;
        setWaitUntil(Date.now() + s * 1000);
        text = `Too many attempts; try again in ${s} ${s === 1 ? 'second' : 'seconds'}.`;
      }
      fail(text, { kind: err.kind });
      setPassword('');
    }
    setBusy(false);
  };

  const canCreate = state.needsFirstUser || (state.signUpMode && state.signUpMode !== 'closed');
  return html`
    <section class="card auth-card" aria-labelledby="auth-title">
      <header class="card-header"><h1 id="auth-title" class="card-title">Sign in</h1></header>
      <form class="card-body form-grid" id="login-form" noValidate onSubmit=${submit}>
        ${reason === 'ended' && html`<p class="warning-note" role="status" id="auth-ended">Your session has ended. Sign in again to continue.</p>`}
        ${state.insecure && html`<${InsecureNote} />`}
        <${Field} id="login-username" inputRef=${first} label="Username" value=${username} required autocomplete="username"
          autocapitalize="off" spellcheck="false" onValue=${setUsername} />
        <${PasswordField} id="login-password" label="Password" value=${password} onValue=${setPassword} autocomplete="current-password" required />
        <div class="auth-error" aria-live="assertive">
          ${error && error.kind !== 'rate_limited' && html`<p class="error-note" role="alert" id="login-error" key=${error.n}>${error.text}</p>`}
          ${error && error.kind === 'rate_limited' && html`
            <p class="error-note" role="alert" id="login-error" key=${error.n}>
              <span class="visually-hidden">${error.text}</span>
              <span aria-hidden="true">${left > 0 ? `Too many attempts; try again in ${left} ${left === 1 ? 'second' : 'seconds'}.` : 'You can try again now.'}</span>
            </p>`}
        </div>
        <button type="submit" class="btn btn-primary auth-submit" disabled=${busy || left > 0}>${busy ? 'Signing in…' : 'Sign in'}</button>
      </form>
      <footer class="auth-foot">
        ${canCreate
          ? html`<p>New here? <button type="button" class="link-button" id="auth-to-signup" onClick=${onCreate}>Create account</button></p>`
          : html`<p class="muted">Accounts on this server are created by an administrator.</p>`}
      </footer>
    </section>`;
}

function SignUpForm({ state, onSignedIn, onPending, onBack }) {
  const first = !!state.needsFirstUser;
  const [username, setUsername] = useState('');
  const [displayName, setDisplayName] = useState('');
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const { error, fail, clear } = useFormError();
  const [busy, setBusy] = useState(false);
  const firstRef = useRef(null);

  useEffect(() => {
    if (firstRef.current) firstRef.current.focus();
  }, []);

  const submit = async (e) => {
    e.preventDefault();
    if (busy) return;
    if (!username.trim()) return fail('Choose a username.');
    const problem = pairProblem(password, confirm, 'Choose a password.');
    if (problem) return fail(problem);
    setBusy(true);
    clear();
    try {
      const r = await authPost('signup', { username: username.trim(), displayName: displayName.trim(), password });
      if (r && r.pending) {
        onPending();
        return;
      }
      if (r && r.signedIn) {
        onSignedIn(r.user);
        return;
      }
      onBack('Your account was created. Sign in with it.');
      return;
    } catch (err) {
      fail(err.kind === 'forbidden' && !err.message ? 'This server does not take new accounts.' : err.message);
    }
    setBusy(false);
  };

  return html`
    <section class="card auth-card" aria-labelledby="auth-title">
      <header class="card-header">
        <div>
          <h1 id="auth-title" class="card-title">${first ? 'Create the administrator account' : 'Create account'}</h1>
          ${first
            ? html`<p class="card-subtitle">This is the first account on this server: it becomes the administrator, who adds connections and manages the other accounts.</p>`
            : state.signUpMode === 'approval'
              ? html`<p class="card-subtitle">An administrator approves new accounts before they can sign in.</p>`
              : null}
        </div>
      </header>
      <form class="card-body form-grid" id="signup-form" noValidate onSubmit=${submit}>
        ${state.insecure && html`<${InsecureNote} />`}
        <${Field} id="signup-username" inputRef=${firstRef} label="Username" value=${username} required autocomplete="username"
          autocapitalize="off" spellcheck="false" onValue=${setUsername} hint="Letters a–z, digits and . _ - — you sign in with it." />
        <${Field} id="signup-display" label="Display name" value=${displayName} autocomplete="name" onValue=${setDisplayName}
          hint="How the app greets you; any name. Optional." />
        <${PasswordPair} id="signup-password" confirmId="signup-confirm" toggle required value=${password} confirm=${confirm}
          onValue=${setPassword} onConfirm=${setConfirm} hint="At least 10 characters. A few unrelated words make a good one." />
        <${FormError} className="auth-error" error=${error} id="signup-error" />
        <button type="submit" class="btn btn-primary auth-submit" disabled=${busy}>${busy ? 'Creating…' : first ? 'Create administrator account' : 'Create account'}</button>
      </form>
      ${!first && html`
        <footer class="auth-foot">
          <p>Have an account? <button type="button" class="link-button" id="auth-to-signin" onClick=${() => onBack('')}>Sign in</button></p>
        </footer>`}
    </section>`;
}

function Pending({ onBack }) {
  const ref = useRef(null);
  useEffect(() => {
    if (ref.current) ref.current.focus();
  }, []);
  return html`
    <section class="card auth-card" aria-labelledby="auth-title" id="auth-pending">
      <header class="card-header"><h1 id="auth-title" class="card-title" tabindex="-1" ref=${ref}>Account created</h1></header>
      <div class="card-body form-grid">
        <p role="status">Your account is waiting for an administrator's approval. Once it is approved, sign in with your username and password.</p>
        <p class="muted">Even the swiftest eagles take a little while.</p>
      </div>
      <div class="card-actions"><button type="button" class="btn" onClick=${() => onBack('')}>Back to sign in</button></div>
    </section>`;
}

function LoginScreen({ state, reason, onSignedIn }) {
  const [mode, setMode] = useState(state.needsFirstUser ? 'signup' : 'signin');
  const [notice, setNotice] = useState('');
  const back = (msg) => {
    setNotice(msg || '');
    setMode('signin');
  };
  useEffect(() => {
    const what = mode === 'signup' ? 'Create account' : mode === 'pending' ? 'Account created' : 'Sign in';
    document.title = `${what} · ${state.instanceName || 'LLeMbas'}`;
  }, [mode]);
  return html`
    <main class="auth" id="main">
      <div class="auth-panel">
        <${Brand} name=${state.instanceName} />
        ${notice && html`<p class="success-note auth-notice" role="status">${notice}</p>`}
        ${mode === 'signin' && html`<${SignInForm} state=${state} reason=${notice ? '' : reason} onSignedIn=${onSignedIn}
          onCreate=${() => { setNotice(''); setMode('signup'); }} />`}
        ${mode === 'signup' && html`<${SignUpForm} state=${state} onSignedIn=${onSignedIn} onPending=${() => setMode('pending')} onBack=${back} />`}
        ${mode === 'pending' && html`<${Pending} onBack=${back} />`}
      </div>
    </main>`;
}

// ---------- Signing out ----------

/** signOut ends this browser's session and shows the sign-in screen. */
export async function signOut() {
  try {
    await authPost('logout', {});
  } catch (err) {
    console.warn('lembas: signing out failed:', err.message);
  }
  showSignedOut();
}

/**
 * showSignedOut replaces the app with the sign-in screen, after this
 * browser's session was ended on purpose (signing out, everywhere or here).
 */
export function showSignedOut() {
  stopEvents();
  authState().then((st) => {
    if (st && st.signedIn) {
      location.reload();
      return;
    }
    showLogin(st, '');
  }, () => showLogin(null, ''));
}

// ---------- Service worker ----------

/**
 * registerServiceWorker installs /sw.js (the app shell for offline use) in
 * a browser on a secure context. Never in the desktop app.
 */
export function registerServiceWorker() {
  if (isDesktop() || !window.isSecureContext || !('serviceWorker' in navigator)) return;
  navigator.serviceWorker.register('/sw.js', { scope: '/' }).catch((err) => {
    console.warn('lembas: the service worker did not register:', err && err.message);
  });
}
