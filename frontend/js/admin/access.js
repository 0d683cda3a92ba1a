// admin-access.js — "Who can use this model" in Settings → Models: everyone
// (the default), or only the chosen people and groups. Both lists empty is
// how the client asks for "everyone"; the server answers everyone: false with
// both lists empty for a model whose groups were all deleted, which only
// administrators can use until someone chooses again.

import { html, useState, useEffect } from '../../vendor/htm-preact/standalone.module.js';
import { call } from '../core/transport.js';
import { loadAllUsers } from './users.js';
import { MemberChecks } from './groups.js';
import { toast } from '../core/ui.js';
import { FormError, useFormError } from '../core/fields.js';

export function ModelAccess({ model }) {
  const [state, setState] = useState(null); // {everyone, users, groups} as saved
  const [everyone, setEveryone] = useState(true);
  const [users, setUsers] = useState([]);
  const [groups, setGroups] = useState([]);
  const [allUsers, setAllUsers] = useState([]);
  const [allGroups, setAllGroups] = useState([]);
  const { error, fail, clear } = useFormError();
  const [busy, setBusy] = useState(false);

  const load = async () => {
    try {
      const [a, u, g] = await Promise.all([call('Admin.ModelAccess', model.id), loadAllUsers(), call('Admin.Groups')]);
      const v = { everyone: !!(a && a.everyone), users: (a && a.users) || [], groups: (a && a.groups) || [] };
      setState(v);
      setEveryone(v.everyone);
      setUsers(v.users);
      setGroups(v.groups);
      setAllUsers(u);
      setAllGroups(Array.isArray(g) ? g : []);
      clear();
    } catch (err) {
      fail(err.message);
    }
  };
  useEffect(() => { load(); }, [model.id]);

  const save = async () => {
    if (!everyone && users.length === 0 && groups.length === 0) {
      fail('Choose at least one person or group, or let everyone use the model.');
      return;
    }
    setBusy(true);
    clear();
    try {
      await call('Admin.SetModelAccess', model.id, everyone ? { users: [], groups: [] } : { users, groups });
      toast(everyone ? `Everyone can use ${model.name}.` : `Only the chosen people and groups can use ${model.name}.`);
      await load();
    } catch (err) {
      fail(err.message);
    }
    setBusy(false);
  };

  const idp = `access-${model.id}`;
  const toggleGroup = (id, on) => setGroups(allGroups.map((g) => g.id).filter((x) => (x === id ? on : groups.includes(x))));
  return html`
    <section class="card model-access" id="model-access" aria-labelledby=${idp + '-title'}>
      <header class="card-header">
        <div>
          <h3 class="card-title" id=${idp + '-title'}>Who can use this model</h3>
          <p class="card-subtitle">Administrators manage every model either way.</p>
        </div>
      </header>
      <div class="card-body form-grid">
        ${!state && !error ? html`<p class="loading-line" role="status">Asking the gatekeeper…</p>` : null}
        ${state && html`
          <fieldset class="fieldset">
            <legend class="visually-hidden">Who can use ${model.name}</legend>
            <div class="radio-list">
              <label class="radio-row">
                <input type="radio" name=${idp + '-who'} id=${idp + '-everyone'} checked=${everyone} onChange=${() => setEveryone(true)} />
                <span class="radio-text"><span class="radio-label">Everyone</span></span>
              </label>
              <label class="radio-row">
                <input type="radio" name=${idp + '-who'} id=${idp + '-chosen'} checked=${!everyone} onChange=${() => setEveryone(false)} />
                <span class="radio-text"><span class="radio-label">Only the people and groups chosen here</span></span>
              </label>
            </div>
          </fieldset>
          ${state.everyone === false && state.users.length === 0 && state.groups.length === 0 && html`
            <p class="muted" id=${idp + '-closed'}>Only administrators can use this model now: the people or groups it was shared with were removed. Choose who may use it, or let everyone.</p>`}
          ${!everyone && html`
            <fieldset class="fieldset">
              <legend class="field-label">Groups</legend>
              ${allGroups.length === 0 ? html`<p class="muted">No groups yet (Settings → Groups).</p>` : html`
                <ul class="member-list" aria-label="Groups">
                  ${allGroups.map((g) => html`
                    <li key=${g.id}><label class="check member-check">
                      <input type="checkbox" checked=${groups.includes(g.id)} onChange=${(e) => toggleGroup(g.id, e.currentTarget.checked)} />
                      <span>${g.name}</span><span class="muted">${(g.members || []).length} ${(g.members || []).length === 1 ? 'member' : 'members'}</span>
                    </label></li>`)}
                </ul>`}
            </fieldset>
            <fieldset class="fieldset">
              <legend class="field-label">People</legend>
              <${MemberChecks} idPrefix=${idp + '-users'} users=${allUsers} value=${users} onChange=${setUsers} label="People" />
            </fieldset>`}
        `}
        <${FormError} error=${error} />
      </div>
      ${state && html`
        <div class="card-actions">
          <span class="spacer"></span>
          <button type="button" class="btn btn-primary" disabled=${busy} onClick=${save}>${busy ? 'Saving…' : 'Save access'}</button>
        </div>`}
    </section>`;
}
