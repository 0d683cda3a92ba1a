// account.js — the signed-in person's chip in the sidebar, and Settings →
// Account: display name, preferences, password, sessions and signing out
// (who is signed in is the store's: useMe). In the desktop app the caller
// is the owner and never signs in, so the signing-out controls are hidden
// there.

import { html, useState, useEffect, useRef } from '../../vendor/htm-preact/standalone.module.js';
import { call, isDesktop } from '../core/transport.js';
import { useStore, refreshModels, useMe, loadMe, usePrefs, setPrefs, savePrefs, getState } from '../core/store.js';
import { hrefs } from '../core/router.js';
import { signOut, showSignedOut } from './login.js';
import { confirmAction, toast, toastError } from '../core/ui.js';
import { formatWhen, formatDate, monogram } from '../core/format.js';
import { formatSize } from '../chat/attachments.js';
import { Field, FormError, PasswordPair, pairProblem, modelOptions, useFormError } from '../core/fields.js';

function displayOf(u) {
  if (!u) return '';
  return u.displayName || u.username || '';
}

/** AccountChip is the signed-in person in the sidebar, linking to the Account tab. */
export function AccountChip({ active }) {
  const { me: u } = useMe();
  if (!u || !u.username) return null;
  const name = displayOf(u);
  return html`
    <a class=${'account-chip' + (active ? ' is-active' : '')} href=${hrefs.settings('account')} id="account-chip"
      aria-current=${active ? 'page' : undefined} title="Your account">
      <span class="avatar avatar-sm avatar-monogram" aria-hidden="true">${monogram(name)}</span>
      <span class="account-chip-text">
        <span class="account-chip-name">${name}</span>
        ${u.displayName && u.displayName !== u.username ? html`<span class="account-chip-user">@${u.username}</span>` : null}
      </span>
      <span class="visually-hidden">, your account</span>
    </a>`;
}

// ---------- Settings → Account ----------

function RoleBadges({ u }) {
  if (!u) return null;
  const items = [];
  if (u.owner) items.push(['owner', 'Owner']);
  if (u.admin) items.push(['admin', 'Administrator']);
  if (items.length === 0) return null;
  return html`<ul class="badges" aria-label="Roles">${items.map(([k, l]) => html`<li class=${'badge badge-role'} key=${k}>${l}</li>`)}</ul>`;
}

function ProfileCard({ u, onSaved }) {
  const [name, setName] = useState(u.displayName || '');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const dirty = name.trim() !== (u.displayName || '');
  const save = async (e) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    try {
      await call('Account.SetDisplayName', name.trim());
      toast('Display name saved.');
      onSaved();
    } catch (err) {
      setError(err.message);
    }
    setBusy(false);
  };
  return html`
    <form class="card" id="account-profile" aria-labelledby="account-profile-title" onSubmit=${save}>
      <header class="card-header profile-header">
        <div class="profile-head">
          <span class="avatar avatar-lg avatar-monogram" aria-hidden="true">${monogram(displayOf(u))}</span>
          <div>
            <h2 class="card-title" id="account-profile-title">${displayOf(u)}</h2>
            <p class="card-subtitle">Signed in as <span class="mono" id="account-username">${u.username}</span></p>
          </div>
        </div>
        <${RoleBadges} u=${u} />
      </header>
      <div class="card-body form-grid">
        <${Field} id="account-display" label="Display name" value=${name} autocomplete="name" placeholder=${u.username} onValue=${setName}
          beside=${html`<button type="submit" class="btn btn-primary" disabled=${busy || !dirty}>${busy ? 'Saving…' : 'Save'}</button>`} />
        ${error && html`<p class="error-note" role="alert">${error}</p>`}
        <${StorageLine} />
      </div>
    </form>`;
}

// StorageLine says how much the caller's files take, and of how much when
// the server sets a limit.
function StorageLine() {
  const [lim, setLim] = useState(null);
  useEffect(() => {
    call('Files.Limits').then(setLim, () => {});
  }, []);
  if (!lim) return null;
  const used = formatSize(lim.used || 0);
  return html`
    <p class="field-help" id="account-storage">
      ${lim.quota > 0
        ? `Your files take ${used} of the ${formatSize(lim.quota)} this server allows each person. Deleting chats with files, and emptying the trash, makes room.`
        : `Your files take ${used}.`}
    </p>`;
}

function PrefsCard() {
  const store = useStore();
  const { prefs, error: loadError } = usePrefs();
  const error = loadError ? loadError.message : '';
  useEffect(() => {
    refreshModels();
  }, []);
  const change = async (v) => {
    const id = Number(v) || 0;
    setPrefs({ ...getState().prefs, defaultModel: id });
    try {
      await savePrefs({ defaultModel: id });
      toast(id ? 'Default model saved.' : 'New chats use the server’s default model.');
    } catch (err) {
      toastError('Could not save the default model', err);
    }
  };
  const value = prefs ? String(prefs.defaultModel || 0) : '0';
  const serverDefault = prefs && prefs.instanceDefaultModel ? store.models.find((m) => m.id === prefs.instanceDefaultModel) : null;
  const options = modelOptions(store.models, value, serverDefault ? `The server’s default (${serverDefault.name})` : 'The server’s default');
  return html`
    <section class="card" id="account-prefs" aria-labelledby="account-prefs-title">
      <header class="card-header"><h2 class="card-title" id="account-prefs-title">Preferences</h2></header>
      <div class="card-body form-grid">
        <${Field} id="account-default-model" label="Default model for new chats" as="select" inputClass="field-narrow"
          value=${value} options=${options} disabled=${!prefs} onValue=${change}
          hint="Used when you start a chat; the picker can change it for each chat. The theme is at the bottom of the sidebar." />
        ${error && html`<p class="error-note" role="alert">${error}</p>`}
      </div>
    </section>`;
}

function PasswordCard({ u, onSaved }) {
  const has = u.hasPassword !== false;
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [confirm, setConfirm] = useState('');
  const [busy, setBusy] = useState(false);
  const { error, fail, clear } = useFormError();
  const save = async (e) => {
    e.preventDefault();
    if (has && !current) return fail('Enter your current password.');
    const problem = pairProblem(next, confirm, 'Enter the new password.', 'The two new passwords differ.');
    if (problem) return fail(problem);
    setBusy(true);
    clear();
    try {
      await call('Account.ChangePassword', has ? current : '', next);
      setCurrent('');
      setNext('');
      setConfirm('');
      toast(has ? 'Password changed. Your other sessions were signed out.' : 'Password set. You can sign in from other devices now.');
      onSaved();
    } catch (err) {
      fail(err.kind === 'unauthorized' || (err.kind === 'forbidden' && has) ? 'The current password is wrong.' : err.message);
    }
    setBusy(false);
  };
  const title = has ? 'Change password' : 'Set a password for signing in from other devices';
  return html`
    <form class="card" id="account-password" aria-labelledby="account-password-title" onSubmit=${save} noValidate>
      <header class="card-header">
        <div>
          <h2 class="card-title" id="account-password-title">${title}</h2>
          <p class="card-subtitle">${has
            ? 'Changing it signs out your other devices.'
            : 'This desktop app needs none; a password lets you sign in to this LLeMbas from a browser when it runs as a household server.'}</p>
        </div>
      </header>
      <div class="card-body form-grid">
        <input type="text" class="visually-hidden" autocomplete="username" value=${u.username} readOnly tabindex="-1" aria-hidden="true" />
        ${has && html`
          <${Field} id="account-current" label="Current password" type="password" inputClass="field-narrow" value=${current}
            autocomplete="current-password" onValue=${setCurrent} />`}
        <${PasswordPair} id="account-new" confirmId="account-confirm" label="New password" confirmLabel="Repeat the new password"
          hint="At least 10 characters." inputClass="field-narrow" value=${next} confirm=${confirm} onValue=${setNext} onConfirm=${setConfirm} />
        <${FormError} error=${error} id="account-password-error" />
      </div>
      <div class="card-actions">
        <button type="submit" class="btn btn-primary" disabled=${busy}>${busy ? 'Saving…' : has ? 'Change password' : 'Set password'}</button>
      </div>
    </form>`;
}

// describeAgent turns a User-Agent into "Firefox on Linux"-like words.
export function describeAgent(ua) {
  const s = String(ua || '');
  if (!s) return 'Unknown device';
  const browser = /Edg\//.test(s) ? 'Edge'
    : /OPR\/|Opera/.test(s) ? 'Opera'
      : /Firefox\//.test(s) ? 'Firefox'
        : /Chrom(e|ium)\//.test(s) ? (/HeadlessChrome/.test(s) ? 'Headless Chromium' : 'Chrome')
          : /Safari\//.test(s) ? 'Safari'
            : /lembas|Wails/i.test(s) ? 'LLeMbas app' : '';
  const os = /Android/.test(s) ? 'Android'
    : /iPhone|iPad|iPod/.test(s) ? 'iOS'
      : /Windows/.test(s) ? 'Windows'
        : /Mac OS X|Macintosh/.test(s) ? 'macOS'
          : /CrOS/.test(s) ? 'ChromeOS'
            : /Linux/.test(s) ? 'Linux' : '';
  if (browser && os) return `${browser} on ${os}`;
  return browser || os || s.slice(0, 60);
}

function SessionsCard({ desktop }) {
  const [list, setList] = useState(null);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState('');
  const load = () => call('Account.Sessions').then(
    (l) => { setList(Array.isArray(l) ? l : []); setError(''); },
    (err) => setError(err.message),
  );
  useEffect(() => { load(); }, []);

  const revoke = async (s) => {
    if (s.current) {
      signOut();
      return;
    }
    setBusy(s.id);
    try {
      await call('Account.RevokeSession', s.id);
      toast(`Signed out ${describeAgent(s.userAgent)}.`);
      await load();
    } catch (err) {
      toastError('Could not sign that session out', err);
    }
    setBusy('');
  };

  const everywhere = async () => {
    const ok = await confirmAction({
      title: 'Sign out everywhere?',
      body: 'Every browser signed in to this account, this one included, must sign in again.',
      confirmLabel: 'Sign out everywhere',
      danger: true,
    });
    if (!ok) return;
    try {
      await call('Account.SignOutEverywhere');
    } catch (err) {
      if (err.kind !== 'unauthorized') {
        toastError('Could not sign out everywhere', err);
        return;
      }
    }
    showSignedOut();
  };

  if (desktop && list && list.length === 0) return null;
  // The sign-out buttons appear with the list, not before it: a list that
  // arrived later would push them down under a finger about to tap.
  return html`
    <section class="card" id="account-sessions" aria-labelledby="account-sessions-title">
      <header class="card-header">
        <div>
          <h2 class="card-title" id="account-sessions-title">${desktop ? 'Browsers signed in' : 'Where you are signed in'}</h2>
          <p class="card-subtitle">${desktop ? 'Browsers signed in to this account on the household server.' : 'Sign out a device you no longer use or do not recognise.'}</p>
        </div>
      </header>
      <div class="card-body">
        ${error && html`<p class="error-note" role="alert">${error}</p>`}
        ${!list && !error ? html`<p class="loading-line" role="status">Counting the travellers…</p>` : null}
        ${list && list.length === 0 && html`<p class="muted">No sessions.</p>`}
        ${list && list.length > 0 && html`
          <ul class="session-list" aria-label="Sessions">
            ${list.map((s) => html`
              <li class=${'session-row' + (s.current ? ' is-current' : '')} key=${s.id}>
                <div class="session-text">
                  <span class="session-agent">${describeAgent(s.userAgent)}
                    ${s.current ? html` <span class="badge badge-current">This device</span>` : null}</span>
                  <span class="session-meta">
                    ${s.ip ? html`<span class="mono">${s.ip}</span> · ` : null}
                    Active ${formatWhen(s.lastSeenAt)} · signed in ${formatDate(s.createdAt)}
                  </span>
                </div>
                ${(!s.current || !desktop) && html`
                  <button type="button" class="btn btn-sm" disabled=${busy === s.id}
                    aria-label=${`Sign out ${describeAgent(s.userAgent)}${s.current ? ' (this device)' : ''}`}
                    onClick=${() => revoke(s)}>Sign out</button>`}
              </li>`)}
          </ul>`}
      </div>
      ${!desktop && (list || error) && html`
        <div class="card-actions wrap">
          <button type="button" class="btn" id="account-signout" onClick=${() => signOut()}>Sign out</button>
          <button type="button" class="btn btn-danger-ghost" id="account-signout-all" onClick=${everywhere}>Sign out everywhere</button>
        </div>`}
    </section>`;
}

export function AccountSettings() {
  const { me: u, failed } = useMe();
  const [key, setKey] = useState(0);
  const desktop = isDesktop();
  const saved = () => {
    loadMe();
    setKey((k) => k + 1);
  };
  return html`
    <section class="settings-section" aria-labelledby="account-title">
      <div class="section-head">
        <h2 id="account-title" class="section-title">Account</h2>
      </div>
      ${!u && !failed && html`<p class="loading-line" role="status">Looking you up in the Red Book…</p>`}
      ${failed && html`<p class="error-note" role="alert">Could not load your account. <button type="button" class="link-button" onClick=${loadMe}>Try again</button></p>`}
      ${u && html`
        <div class="account-grid">
          <${ProfileCard} key=${'p' + key + (u.displayName || '')} u=${u} onSaved=${saved} />
          <${PrefsCard} />
          ${(!desktop || u.hasPassword !== undefined) && html`<${PasswordCard} key=${'w' + key} u=${u} onSaved=${saved} />`}
          <${SessionsCard} key=${'s' + key} desktop=${desktop} />
        </div>`}
    </section>`;
}
