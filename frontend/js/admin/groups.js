// admin-groups.js — Settings → Groups (administrators): groups grant
// permissions on top of the baseline everyone has, and can be given access
// to models. A list beside one group's form: its name, the permissions it
// grants, and its members.

import { html, useState, useEffect, useRef } from '../../vendor/htm-preact/standalone.module.js';
import { call } from '../core/transport.js';
import { hrefs, navigate } from '../core/router.js';
import { loadAllUsers, userName } from './users.js';
import { CloseButton, Icon, confirmAction, toast } from '../core/ui.js';
import { Field, FormError, useFormError } from '../core/fields.js';

/** loadPermissions reads Admin.Permissions: {all: [{name, label, description}], baseline}. */
export async function loadPermissions() {
  const p = await call('Admin.Permissions');
  return {
    all: p && Array.isArray(p.all) ? p.all : [],
    baseline: p && Array.isArray(p.baseline) ? p.baseline : [],
  };
}

/**
 * PermissionChecks is one checkbox per permission, with its label and
 * description. `fixed` are shown checked and disabled (granted anyway).
 */
export function PermissionChecks({ idPrefix, all, value, onChange, fixed = [], fixedNote = '' }) {
  const set = new Set(value);
  const toggle = (name, on) => {
    const next = new Set(set);
    if (on) next.add(name);
    else next.delete(name);
    onChange(all.map((p) => p.name).filter((n) => next.has(n)));
  };
  return html`
    <ul class="perm-list">
      ${all.map((p) => {
        const id = `${idPrefix}-${p.name.replace(/[^a-z0-9]/gi, '-')}`;
        const isFixed = fixed.includes(p.name);
        return html`
          <li class="perm-row" key=${p.name}>
            <input type="checkbox" id=${id} checked=${set.has(p.name) || isFixed} disabled=${isFixed}
              aria-describedby=${id + '-desc'} onChange=${(e) => toggle(p.name, e.currentTarget.checked)} />
            <div class="perm-text">
              <label for=${id} class="perm-label">${p.label || p.name}</label>
              <span class="perm-desc" id=${id + '-desc'}>${p.description || ''}${isFixed && fixedNote ? ` ${fixedNote}` : ''}
                <span class="perm-name mono">${p.name}</span></span>
            </div>
          </li>`;
      })}
    </ul>`;
}

/** MemberChecks picks users from a filterable checkbox list. */
export function MemberChecks({ idPrefix, users, value, onChange, label = 'Members' }) {
  const [filter, setFilter] = useState('');
  const set = new Set(value);
  const f = filter.trim().toLowerCase();
  const shown = users.filter((u) => !f || u.username.toLowerCase().includes(f) || (u.displayName || '').toLowerCase().includes(f));
  const toggle = (id, on) => {
    const next = new Set(set);
    if (on) next.add(id);
    else next.delete(id);
    onChange(users.map((u) => u.id).filter((x) => next.has(x)));
  };
  return html`
    <div class="member-picker">
      ${users.length > 8 && html`
        <${Field} id=${idPrefix + '-filter'} label=${`Filter ${label.toLowerCase()}`} labelHidden type="search"
          placeholder="Filter by name" value=${filter} onValue=${setFilter} />`}
      ${users.length === 0 ? html`<p class="muted">No accounts yet.</p>` : html`
        <ul class="member-list" aria-label=${label}>
          ${shown.map((u) => html`
            <li key=${u.id}>
              <label class="check member-check">
                <input type="checkbox" checked=${set.has(u.id)} onChange=${(e) => toggle(u.id, e.currentTarget.checked)} />
                <span>${userName(u)}</span><span class="muted mono">@${u.username}</span>
                ${u.status !== 'active' ? html`<span class="badge">${u.status === 'pending' ? 'Waiting' : 'Disabled'}</span>` : null}
              </label>
            </li>`)}
          ${shown.length === 0 && html`<li class="muted">Nobody matches.</li>`}
        </ul>`}
      <p class="field-help">${set.size} of ${users.length} chosen.</p>
    </div>`;
}

function same(a, b) {
  if (a.length !== b.length) return false;
  const s = new Set(a);
  return b.every((x) => s.has(x));
}

function GroupForm({ group, perms, users, onSaved, onDeleted, onClose }) {
  const creating = !group;
  const [name, setName] = useState(group ? group.name : '');
  const [granted, setGranted] = useState(group ? group.permissions || [] : []);
  const [members, setMembers] = useState(group ? group.members || [] : []);
  const [busy, setBusy] = useState('');
  const { error, fail, clear } = useFormError();
  const first = useRef(null);
  const heading = useRef(null);
  // A new group starts at its name; an opened one announces its heading.
  useEffect(() => {
    const el = creating ? first.current : heading.current;
    if (el) el.focus({ preventScroll: true });
  }, [group && group.id]);

  const save = async (e) => {
    e.preventDefault();
    if (!name.trim()) {
      fail('Give the group a name.');
      return;
    }
    setBusy('save');
    clear();
    try {
      let id = group && group.id;
      if (creating) {
        const g = await call('Admin.CreateGroup', name.trim(), granted);
        id = g && g.id;
        if (id && members.length) await call('Admin.SetMembers', id, members);
      } else {
        if (name.trim() !== group.name || !same(granted, group.permissions || [])) {
          await call('Admin.UpdateGroup', id, name.trim(), granted);
        }
        if (!same(members, group.members || [])) await call('Admin.SetMembers', id, members);
      }
      toast(creating ? `Created the group “${name.trim()}”.` : 'Group saved.');
      onSaved(id);
    } catch (err) {
      fail(err.message);
    }
    setBusy('');
  };

  const remove = async () => {
    const ok = await confirmAction({
      title: `Delete the group “${group.name}”?`,
      body: 'Its members lose what the group granted them, and models shared with the group stop being shared with them through it. The accounts themselves stay.',
      confirmLabel: 'Delete group',
      danger: true,
    });
    if (!ok) return;
    setBusy('delete');
    try {
      await call('Admin.DeleteGroup', group.id);
      toast(`Deleted the group “${group.name}”.`);
      onDeleted();
    } catch (err) {
      fail(err.message);
      setBusy('');
    }
  };

  const idp = group ? `group-${group.id}` : 'group-new';
  return html`
    <form class="card model-detail" id="group-form" aria-labelledby=${idp + '-title'} onSubmit=${save} noValidate>
      <header class="card-header">
        <h2 class="card-title" id=${idp + '-title'} tabindex="-1" ref=${heading}>${creating ? 'New group' : group.name}</h2>
        <${CloseButton} label="Close the group" onClose=${onClose} />
      </header>
      <div class="card-body form-grid">
        <${Field} id=${idp + '-name'} inputRef=${first} label="Name" value=${name} autocomplete="off" placeholder="Family" onValue=${setName} />
        <fieldset class="fieldset">
          <legend class="field-label">Permissions it grants</legend>
          <p class="field-help">On top of what everyone may do (Settings → Permissions).</p>
          <${PermissionChecks} idPrefix=${idp + '-perm'} all=${perms.all} value=${granted} onChange=${setGranted}
            fixed=${perms.baseline} fixedNote="(Everyone has this.)" />
        </fieldset>
        <fieldset class="fieldset">
          <legend class="field-label">Members</legend>
          <${MemberChecks} idPrefix=${idp + '-members'} users=${users} value=${members} onChange=${setMembers} />
        </fieldset>
        <${FormError} error=${error} id="group-error" />
      </div>
      <div class="card-actions wrap">
        ${!creating && html`<button type="button" class="btn btn-danger-ghost" disabled=${!!busy} onClick=${remove}>Delete group</button>`}
        <span class="spacer"></span>
        <button type="button" class="btn" onClick=${onClose}>Cancel</button>
        <button type="submit" class="btn btn-primary" disabled=${!!busy}>${busy === 'save' ? 'Saving…' : creating ? 'Create group' : 'Save'}</button>
      </div>
    </form>`;
}

export function GroupsSettings({ sub }) {
  const [groups, setGroups] = useState(null);
  const [perms, setPerms] = useState({ all: [], baseline: [] });
  const [users, setUsers] = useState([]);
  const [error, setError] = useState(null);
  const [formKey, setFormKey] = useState(0);
  const selectedId = /^\d+$/.test(sub || '') ? Number(sub) : 0;
  const creating = sub === 'new';

  const load = async () => {
    try {
      const [g, p, u] = await Promise.all([call('Admin.Groups'), loadPermissions(), loadAllUsers()]);
      setGroups(Array.isArray(g) ? g : []);
      setPerms(p);
      setUsers(u);
      setError(null);
    } catch (err) {
      setError(err);
    }
  };
  useEffect(() => { load(); }, []);

  const selected = groups && selectedId ? groups.find((g) => g.id === selectedId) : null;
  const close = () => navigate(hrefs.settings('groups'));
  const permLabel = (name) => {
    const p = perms.all.find((x) => x.name === name);
    return p ? p.label || name : name;
  };
  const hasDetail = creating || !!selected;

  return html`
    <section class="settings-section" aria-labelledby="groups-title">
      <div class="section-head">
        <div>
          <h2 id="groups-title" class="section-title">Groups</h2>
          <p class="muted">A group widens what its members may do, and models can be shared with a group. Groups never take anything away.</p>
        </div>
        <a class="btn btn-primary" href=${hrefs.settings('groups', 'new')} id="groups-create"><${Icon} name="plus" /><span>New group</span></a>
      </div>
      ${error && html`<p class="error-note" role="alert">${error.message}</p>`}
      ${!groups && !error ? html`<p class="loading-line" role="status">Gathering the companies…</p>` : null}
      ${groups !== null && html`
        <div class=${'models-layout' + (hasDetail ? ' has-detail' : '')}>
          <div class="models-list-pane">
            ${groups.length === 0 && html`
              <div class="empty-state">
                <p class="empty-state-title">No groups yet.</p>
                <p>One is enough for most households — say “Grown-ups”, who may add their own connections.</p>
              </div>`}
            ${groups.length > 0 && html`
              <ul class="model-list" aria-label="Groups" id="groups-list">
                ${groups.map((g) => html`
                  <li class=${'model-row' + (g.id === selectedId ? ' is-selected' : '')} key=${g.id}>
                    <a class="model-row-main" href=${hrefs.settings('groups', String(g.id))} aria-current=${g.id === selectedId ? 'true' : undefined}>
                      <span class="model-row-text">
                        <span class="model-row-name">${g.name}</span>
                        <span class="model-row-sub">${(g.members || []).length} ${(g.members || []).length === 1 ? 'member' : 'members'}${(g.permissions || []).length ? ' · ' + g.permissions.map(permLabel).join(', ') : ''}</span>
                      </span>
                    </a>
                  </li>`)}
              </ul>`}
          </div>
          ${hasDetail && html`
            <div class="models-detail-pane">
              <${GroupForm} key=${(selected ? selected.id : 'new') + ':' + formKey} group=${selected} perms=${perms} users=${users}
                onClose=${close}
                onSaved=${async (id) => { await load(); setFormKey((k) => k + 1); navigate(id ? hrefs.settings('groups', String(id)) : hrefs.settings('groups')); }}
                onDeleted=${async () => { await load(); close(); }} />
            </div>`}
        </div>`}
    </section>`;
}
