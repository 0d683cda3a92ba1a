// admin-users.js — Settings → Users (administrators): a searchable list
// filtered by status beside one account's details. The details carry the
// actions (approve, disable or enable, administrator rights, a new
// password); "Create user" opens the same pane as a form. The selection is
// in the route (#/settings/users/ID, …/new), so Back works on a phone.

import { html, useState, useEffect, useRef, useCallback } from '../../vendor/htm-preact/standalone.module.js';
import { call } from '../core/transport.js';
import { hrefs, navigate } from '../core/router.js';
import { useMe, loadMe } from '../core/store.js';
import { CloseButton, Icon, Pager, confirmAction, toast, toastError, trapTab } from '../core/ui.js';
import { formatDate, monogram } from '../core/format.js';
import { Field, FilterBar, FormError, PasswordPair, pairProblem, useFormError } from '../core/fields.js';

const LIMIT = 50;

const STATUS_LABEL = { active: 'Active', pending: 'Waiting for approval', disabled: 'Disabled' };
const STATUS_OPTIONS = [{ value: '', label: 'All' }, ...Object.entries(STATUS_LABEL).map(([value, label]) => ({ value, label }))];

export function userName(u) {
  return (u && (u.displayName || u.username)) || '';
}

/** loadAllUsers lists up to 1000 accounts, for member and access pickers. */
export async function loadAllUsers() {
  const r = await call('Admin.Users', { query: '', status: '', offset: 0, limit: 1000 });
  return (r && Array.isArray(r.users)) ? r.users : [];
}

export function UserBadges({ u }) {
  const items = [];
  if (u.owner) items.push(['owner', 'Owner', 'badge-role']);
  if (u.admin) items.push(['admin', 'Administrator', 'badge-role']);
  if (u.status === 'pending') items.push(['pending', 'Waiting for approval', 'badge-warn']);
  if (u.status === 'disabled') items.push(['disabled', 'Disabled', 'badge-off']);
  if (u.hasPassword === false) items.push(['nopw', 'No password', '']);
  if (items.length === 0) return null;
  return html`<ul class="badges" aria-label="Status">${items.map(([k, l, c]) => html`<li class=${'badge ' + c} key=${k}>${l}</li>`)}</ul>`;
}

function UserAvatar({ u, size = '' }) {
  return html`<span class=${'avatar avatar-monogram' + (size ? ' avatar-' + size : '')} aria-hidden="true">${monogram(userName(u))}</span>`;
}

function UserRow({ u, selected, onApprove, busy }) {
  return html`
    <li class=${'model-row user-row' + (selected ? ' is-selected' : '') + (u.status === 'disabled' ? ' is-disabled' : '')}>
      <a class="model-row-main" href=${hrefs.settings('users', String(u.id))} aria-current=${selected ? 'true' : undefined}>
        <${UserAvatar} u=${u} />
        <span class="model-row-text">
          <span class="model-row-name">${userName(u)}</span>
          <span class="model-row-sub">@${u.username}</span>
          <${UserBadges} u=${u} />
        </span>
      </a>
      ${u.status === 'pending' && html`
        <div class="model-row-tools">
          <button type="button" class="btn btn-sm btn-primary" disabled=${busy} aria-label=${`Approve ${userName(u)}`}
            onClick=${() => onApprove(u)}>Approve</button>
        </div>`}
    </li>`;
}

// ---------- Password dialog ----------

function PasswordDialog({ user, onClose }) {
  const ref = useRef(null);
  const [pw, setPw] = useState('');
  const [confirm, setConfirm] = useState('');
  const { error, fail } = useFormError();
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open && typeof d.showModal === 'function') d.showModal();
    const f = d && d.querySelector('input:not([tabindex="-1"])');
    if (f) f.focus();
  }, []);
  const close = (done) => {
    const d = ref.current;
    if (d && d.open) d.close();
    onClose(done);
  };
  const submit = async (e) => {
    e.preventDefault();
    const problem = pairProblem(pw, confirm, 'Enter the new password.');
    if (problem) return fail(problem);
    setBusy(true);
    try {
      await call('Admin.ResetPassword', user.id, pw);
      toast(`New password set for ${userName(user)}. Their sessions were signed out.`);
      close(true);
      return;
    } catch (err) {
      fail(err.message);
    }
    setBusy(false);
  };
  return html`
    <dialog class="dialog" ref=${ref} aria-labelledby="reset-title" id="reset-dialog"
      oncancel=${(e) => { e.preventDefault(); close(false); }} onKeyDown=${(e) => trapTab(e, ref.current)}>
      <form class="dialog-form" onSubmit=${submit} noValidate>
        <h2 id="reset-title" class="dialog-title">New password for ${userName(user)}</h2>
        <p class="dialog-body">Tell them the new password in person or another private way; they can change it under Settings → Account.</p>
        <input type="text" class="visually-hidden" autocomplete="username" value=${user.username} readOnly tabindex="-1" aria-hidden="true" />
        <${PasswordPair} id="reset-password" confirmId="reset-confirm" label="New password" confirmLabel="Repeat it"
          hint="At least 10 characters." value=${pw} confirm=${confirm} onValue=${setPw} onConfirm=${setConfirm} />
        <${FormError} error=${error} />
        <div class="dialog-actions">
          <button type="button" class="btn" onClick=${() => close(false)}>Cancel</button>
          <button type="submit" class="btn btn-primary" disabled=${busy}>${busy ? 'Saving…' : 'Set password'}</button>
        </div>
      </form>
    </dialog>`;
}

// ---------- Details ----------

function UserDetail({ user, groups, selfId, onChanged, onClose }) {
  const [busy, setBusy] = useState('');
  const [error, setError] = useState('');
  const [resetting, setResetting] = useState(false);
  const heading = useRef(null);
  const self = user.id === selfId;

  useEffect(() => {
    if (heading.current) heading.current.focus({ preventScroll: true });
  }, [user.id]);

  const run = async (what, fn, done) => {
    setBusy(what);
    setError('');
    try {
      await fn();
      if (done) toast(done);
      await onChanged();
    } catch (err) {
      setError(err.message);
    }
    setBusy('');
  };

  const setStatus = async (status) => {
    if (status === 'disabled') {
      const ok = await confirmAction({
        title: `Disable ${userName(user)}?`,
        body: 'They are signed out at once and cannot sign in until the account is enabled again. Their chats are kept.',
        confirmLabel: 'Disable account',
        danger: true,
      });
      if (!ok) return;
    }
    const done = status === 'active' ? (user.status === 'pending' ? `${userName(user)} can sign in now.` : `${userName(user)} is enabled again.`) : `${userName(user)} is disabled.`;
    run('status', () => call('Admin.SetStatus', user.id, status), done);
  };

  const setAdmin = async (on) => {
    const ok = await confirmAction(on ? {
      title: `Make ${userName(user)} an administrator?`,
      body: 'Administrators manage connections, models and every account on this server, yours included.',
      confirmLabel: 'Make administrator',
    } : {
      title: `Remove ${userName(user)}'s administrator rights?`,
      body: 'They keep their account and chats.',
      confirmLabel: 'Remove administrator',
      danger: true,
    });
    if (!ok) return;
    run('admin', () => call('Admin.SetAdmin', user.id, on), on ? `${userName(user)} is an administrator.` : `${userName(user)} is no longer an administrator.`);
  };

  const groupNames = (user.groups || []).map((id) => {
    const g = groups.find((x) => x.id === id);
    return g ? g.name : `#${id}`;
  });

  return html`
    <section class="card model-detail user-detail" aria-labelledby="user-detail-title" id="user-detail">
      <header class="card-header">
        <div class="model-detail-head">
          <${UserAvatar} u=${user} size="lg" />
          <div>
            <h2 class="card-title" id="user-detail-title" tabindex="-1" ref=${heading}>${userName(user)}</h2>
            <p class="card-subtitle mono">@${user.username}</p>
          </div>
        </div>
        <${CloseButton} label="Close the details" onClose=${onClose} />
      </header>
      <div class="card-body form-grid">
        <dl class="kv">
          <dt>Status</dt><dd id="user-status">${STATUS_LABEL[user.status] || user.status}</dd>
          <dt>Role</dt><dd>${user.owner ? 'Owner and administrator' : user.admin ? 'Administrator' : 'Member'}</dd>
          <dt>Created</dt><dd>${user.createdAt ? formatDate(user.createdAt) : 'unknown'}</dd>
          <dt>Password</dt><dd>${user.hasPassword === false ? 'None set (cannot sign in from a browser)' : 'Set'}</dd>
          <dt>Groups</dt><dd>${groupNames.length ? html`<ul class="chips">${groupNames.map((g) => html`<li class="chip chip-plain" key=${g}>${g}</li>`)}</ul>` : html`<span class="muted">None</span>`}</dd>
        </dl>
        ${self && html`<p class="field-help">This is you: you cannot disable your own account or remove your own administrator rights here.</p>`}
        ${error && html`<p class="error-note" role="alert" id="user-error">${error}</p>`}
      </div>
      <div class="card-actions wrap">
        ${user.status === 'pending' && html`
          <button type="button" class="btn btn-primary" disabled=${!!busy} onClick=${() => setStatus('active')}>Approve</button>`}
        ${user.status === 'disabled' && html`
          <button type="button" class="btn" disabled=${!!busy} onClick=${() => setStatus('active')}>Enable</button>`}
        ${user.status !== 'disabled' && !self && html`
          <button type="button" class="btn btn-danger-ghost" disabled=${!!busy} onClick=${() => setStatus('disabled')}>${user.status === 'pending' ? 'Decline' : 'Disable'}</button>`}
        ${!self && user.status !== 'pending' && html`
          <button type="button" class="btn" disabled=${!!busy} onClick=${() => setAdmin(!user.admin)}>${user.admin ? 'Remove admin' : 'Make admin'}</button>`}
        <button type="button" class="btn" disabled=${!!busy} onClick=${() => setResetting(true)}>Reset password…</button>
      </div>
      ${resetting && html`<${PasswordDialog} user=${user} onClose=${(done) => { setResetting(false); if (done) onChanged(); }} />`}
    </section>`;
}

function CreateUser({ onCreated, onClose }) {
  const [username, setUsername] = useState('');
  const [displayName, setDisplayName] = useState('');
  const [pw, setPw] = useState('');
  const [confirm, setConfirm] = useState('');
  const [admin, setAdmin] = useState(false);
  const { error, fail } = useFormError();
  const [busy, setBusy] = useState(false);
  const first = useRef(null);
  useEffect(() => {
    if (first.current) first.current.focus();
  }, []);
  const submit = async (e) => {
    e.preventDefault();
    if (!username.trim()) return fail('Choose a username.');
    const problem = pairProblem(pw, confirm, 'Choose a password.');
    if (problem) return fail(problem);
    setBusy(true);
    try {
      const u = await call('Admin.CreateUser', { username: username.trim(), displayName: displayName.trim(), password: pw, admin });
      toast(`Created ${displayName.trim() || username.trim()}.`);
      onCreated(u && (u.id || (u.user && u.user.id)));
      return;
    } catch (err) {
      fail(err.message);
    }
    setBusy(false);
  };
  return html`
    <form class="card model-detail" aria-labelledby="user-new-title" id="user-new" onSubmit=${submit} noValidate>
      <header class="card-header">
        <div>
          <h2 class="card-title" id="user-new-title">Create user</h2>
          <p class="card-subtitle">The account can sign in at once.</p>
        </div>
        <${CloseButton} label="Close the form" onClose=${onClose} />
      </header>
      <div class="card-body form-grid">
        <${Field} id="user-new-username" inputRef=${first} label="Username" value=${username} autocomplete="off" autocapitalize="off"
          spellcheck="false" onValue=${setUsername} hint="Letters a–z, digits and . _ -" />
        <${Field} id="user-new-display" label="Display name" value=${displayName} autocomplete="off" onValue=${setDisplayName} />
        <${PasswordPair} id="user-new-password" confirmId="user-new-confirm" value=${pw} confirm=${confirm} onValue=${setPw} onConfirm=${setConfirm}
          hint="At least 10 characters. They can change it after signing in." />
        <label class="check"><input type="checkbox" id="user-new-admin" checked=${admin} onChange=${(e) => setAdmin(e.currentTarget.checked)} />
          <span>Administrator</span></label>
        <${FormError} error=${error} id="user-new-error" />
      </div>
      <div class="card-actions">
        <span class="spacer"></span>
        <button type="button" class="btn" onClick=${onClose}>Cancel</button>
        <button type="submit" class="btn btn-primary" disabled=${busy}>${busy ? 'Creating…' : 'Create user'}</button>
      </div>
    </form>`;
}

// ---------- The tab ----------

export function UsersSettings({ sub }) {
  const { me } = useMe();
  const [query, setQuery] = useState('');
  const [status, setStatus] = useState('');
  const [offset, setOffset] = useState(0);
  const [data, setData] = useState(null); // {users, total, offset}
  const [pending, setPending] = useState(0);
  const [groups, setGroups] = useState([]);
  const [error, setError] = useState(null);
  const [busyId, setBusyId] = useState(0);
  const [picked, setPicked] = useState(null); // the selected user when not on this page
  const seq = useRef(0);
  const timer = useRef(0);

  const selectedId = /^\d+$/.test(sub || '') ? Number(sub) : 0;
  const creating = sub === 'new';

  const load = useCallback(async (q, st, off) => {
    const n = ++seq.current;
    try {
      const [r, p] = await Promise.all([
        call('Admin.Users', { query: q.trim(), status: st, offset: off, limit: LIMIT }),
        call('Admin.Users', { query: '', status: 'pending', offset: 0, limit: 1 }),
      ]);
      if (n !== seq.current) return;
      setData({ users: (r && r.users) || [], total: (r && r.total) || 0, offset: off });
      setPending((p && p.total) || 0);
      setError(null);
    } catch (err) {
      if (n === seq.current) setError(err);
    }
  }, []);

  useEffect(() => {
    call('Admin.Groups').then((g) => setGroups(Array.isArray(g) ? g : []), () => {});
  }, []);

  useEffect(() => {
    clearTimeout(timer.current);
    timer.current = setTimeout(() => load(query, status, offset), query ? 250 : 0);
    return () => clearTimeout(timer.current);
  }, [query, status, offset]);

  const reload = () => load(query, status, offset);

  // The selected account may be off this page or filtered out: fetch it.
  const listed = data && selectedId ? data.users.find((u) => u.id === selectedId) : null;
  useEffect(() => {
    if (!selectedId || listed || !data) return;
    let live = true;
    loadAllUsers().then((all) => {
      if (live) setPicked(all.find((u) => u.id === selectedId) || { id: selectedId, missing: true });
    }, () => {});
    return () => { live = false; };
  }, [selectedId, !!listed, data]);
  const selected = listed || (picked && picked.id === selectedId ? picked : null);

  const changed = async () => {
    await reload();
    if (selectedId && !listed) {
      const all = await loadAllUsers().catch(() => []);
      setPicked(all.find((u) => u.id === selectedId) || { id: selectedId, missing: true });
    }
    if (me && selectedId === me.id) loadMe();
  };

  const approve = async (u) => {
    setBusyId(u.id);
    try {
      await call('Admin.SetStatus', u.id, 'active');
      toast(`${userName(u)} can sign in now.`);
      await reload();
    } catch (err) {
      toastError(`Could not approve ${userName(u)}`, err);
    }
    setBusyId(0);
  };

  const close = () => navigate(hrefs.settings('users'));
  const total = data ? data.total : 0;
  const filtered = query.trim() !== '' || status !== '';
  const hasDetail = creating || !!selectedId;

  return html`
    <section class="settings-section" aria-labelledby="users-title">
      <div class="section-head">
        <div>
          <h2 id="users-title" class="section-title">Users</h2>
          <p class="muted">Accounts on this server. Open one to approve, disable or give it a new password.</p>
        </div>
        <a class="btn btn-primary" href=${hrefs.settings('users', 'new')} id="users-create"><${Icon} name="plus" /><span>Create user</span></a>
      </div>
      ${pending > 0 && status !== 'pending' && html`
        <p class="warning-note pending-note" id="users-pending-note">
          ${pending === 1 ? 'One account is' : `${pending} accounts are`} waiting for approval.
          <button type="button" class="link-button" onClick=${() => { setStatus('pending'); setOffset(0); }}>Show ${pending === 1 ? 'it' : 'them'}</button>
        </p>`}
      <div class=${'models-layout' + (hasDetail ? ' has-detail' : '')}>
        <div class="models-list-pane">
          <${FilterBar}
            search=${{ id: 'users-query', label: 'Search users', placeholder: 'Username or display name', value: query,
              onValue: (v) => { setQuery(v); setOffset(0); } }}
            filters=${[{ id: 'users-status', label: 'Status', value: status, options: STATUS_OPTIONS,
              onValue: (v) => { setStatus(v); setOffset(0); } }]} />
          ${error && html`<p class="error-note" role="alert">${error.message}</p>`}
          ${!data && !error ? html`<p class="loading-line" role="status">Calling the roll of the Fellowship…</p>` : null}
          ${data && data.users.length === 0 && html`
            <div class="empty-state">
              <p class="empty-state-title">${filtered ? 'No account matches.' : 'No accounts yet.'}</p>
              <p>${filtered ? 'Try another search or status.' : 'Create one, or let people sign up.'}</p>
            </div>`}
          ${data && data.users.length > 0 && html`
            <ul class="model-list" aria-label="Users" id="users-list">
              ${data.users.map((u) => html`<${UserRow} key=${u.id} u=${u} selected=${u.id === selectedId} onApprove=${approve} busy=${busyId === u.id} />`)}
            </ul>`}
          ${data && html`<${Pager} offset=${data.offset} limit=${LIMIT} shown=${data.users.length} total=${total} onOffset=${setOffset} />`}
        </div>
        ${hasDetail && html`
          <div class="models-detail-pane">
            ${creating && html`<${CreateUser} onClose=${close} onCreated=${(id) => { reload(); navigate(id ? hrefs.settings('users', String(id)) : hrefs.settings('users')); }} />`}
            ${selected && selected.missing && html`
              <div class="empty-state"><p class="empty-state-title">No such account.</p><p>It may have been removed.</p></div>`}
            ${selectedId > 0 && selected && !selected.missing && html`<${UserDetail} key=${selected.id} user=${selected} groups=${groups}
              selfId=${me ? me.id : 0} onChanged=${changed} onClose=${close} />`}
            ${selectedId > 0 && !selected && data && html`<p class="loading-line" role="status">Looking for that account…</p>`}
          </div>`}
      </div>
    </section>`;
}
