// admin-instance.js — Settings → Permissions (what every account may do)
// and Settings → Instance (its name, who may sign up, the default model);
// administrators only.

import { html, useState, useEffect } from '../../vendor/htm-preact/standalone.module.js';
import { call } from '../core/transport.js';
import { useStore, refreshModels } from '../core/store.js';
import { loadPermissions, PermissionChecks } from './groups.js';
import { toast } from '../core/ui.js';
import { Field, modelOptions } from '../core/fields.js';

function same(a, b) {
  return a.length === b.length && a.every((x) => b.includes(x));
}

export function PermissionsSettings() {
  const [perms, setPerms] = useState(null);
  const [value, setValue] = useState([]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const load = () => loadPermissions().then((p) => { setPerms(p); setValue(p.baseline); setError(''); }, (err) => setError(err.message));
  useEffect(() => { load(); }, []);

  const save = async (e) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    try {
      await call('Admin.SetBaseline', value);
      toast('Permissions saved.');
      await load();
    } catch (err) {
      setError(err.message);
    }
    setBusy(false);
  };

  const dirty = perms && !same(value, perms.baseline);
  return html`
    <section class="settings-section" aria-labelledby="perms-title">
      <div class="section-head">
        <div>
          <h2 id="perms-title" class="section-title">Permissions</h2>
          <p class="muted">What every account may do. Groups can grant more to their members; administrators may do everything.</p>
        </div>
      </div>
      ${!perms && !error ? html`<p class="loading-line" role="status">Reading the old laws…</p>` : null}
      ${perms && html`
        <form class="card" id="perms-form" onSubmit=${save} aria-labelledby="perms-card-title">
          <header class="card-header"><h3 class="card-title" id="perms-card-title">Everyone may</h3></header>
          <div class="card-body form-grid">
            <${PermissionChecks} idPrefix="baseline" all=${perms.all} value=${value} onChange=${setValue} />
          </div>
          <div class="card-actions">
            <span class="spacer"></span>
            ${dirty && html`<button type="button" class="btn" onClick=${() => setValue(perms.baseline)}>Undo changes</button>`}
            <button type="submit" class="btn btn-primary" disabled=${busy || !dirty}>${busy ? 'Saving…' : 'Save'}</button>
          </div>
        </form>`}
      ${error && html`<p class="error-note" role="alert">${error}</p>`}
    </section>`;
}

const MODES = [
  { value: 'open', label: 'Open', help: 'Anyone who can reach this server may create an account and use it at once.' },
  { value: 'approval', label: 'With approval', help: 'Anyone may ask for an account; an administrator approves it under Users before it can sign in.' },
  { value: 'closed', label: 'Closed', help: 'Only administrators create accounts (Users → Create user).' },
];

export function InstanceSettings() {
  const store = useStore();
  const [saved, setSaved] = useState(null);
  const [name, setName] = useState('');
  const [mode, setMode] = useState('closed');
  const [model, setModel] = useState('0');
  const [quota, setQuota] = useState('0');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');

  const load = () => call('Admin.Settings').then((s) => {
    const v = s || {};
    setSaved(v);
    setName(v.instanceName || '');
    setMode(v.signUpMode || 'closed');
    setModel(String(v.defaultModel || 0));
    setQuota(String(v.filesQuotaMB || 0));
    setError('');
  }, (err) => setError(err.message));
  useEffect(() => {
    load();
    refreshModels();
  }, []);

  const save = async (e) => {
    e.preventDefault();
    if (!name.trim()) {
      setError('Give the instance a name.');
      return;
    }
    const q = quota.trim() === '' ? 0 : Number(quota);
    if (!Number.isInteger(q) || q < 0) {
      setError('The storage for each person is a whole number of MB, 0 for no limit.');
      return;
    }
    const patch = {};
    if (name.trim() !== (saved.instanceName || '')) patch.instanceName = name.trim();
    if (mode !== saved.signUpMode) patch.signUpMode = mode;
    if (Number(model) !== (saved.defaultModel || 0)) patch.defaultModel = Number(model);
    if (q !== (saved.filesQuotaMB || 0)) patch.filesQuotaMB = q;
    setBusy(true);
    setError('');
    try {
      await call('Admin.SetSettings', patch);
      toast('Instance settings saved.');
      await load();
    } catch (err) {
      setError(err.message);
    }
    setBusy(false);
  };

  const dirty = saved && (name.trim() !== (saved.instanceName || '') || mode !== saved.signUpMode || Number(model) !== (saved.defaultModel || 0)
    || String(quota).trim() !== String(saved.filesQuotaMB || 0));
  return html`
    <section class="settings-section" aria-labelledby="instance-title">
      <div class="section-head">
        <div>
          <h2 id="instance-title" class="section-title">Instance</h2>
          <p class="muted">Settings for everyone on this server.</p>
        </div>
      </div>
      ${!saved && !error ? html`<p class="loading-line" role="status">Unrolling the map…</p>` : null}
      ${saved && html`
        <form class="card" id="instance-form" onSubmit=${save} aria-labelledby="instance-card-title" noValidate>
          <header class="card-header"><h3 class="card-title" id="instance-card-title">This server</h3></header>
          <div class="card-body form-grid">
            <${Field} id="instance-name" label="Instance name" inputClass="field-narrow" value=${name} autocomplete="off" onValue=${setName}
              hint="Shown on the sign-in page and as the app's name when installed on a phone." />
            <fieldset class="fieldset">
              <legend class="field-label">Sign-up</legend>
              <div class="radio-list">
                ${MODES.map((m) => html`
                  <label class="radio-row" key=${m.value}>
                    <input type="radio" name="signup-mode" value=${m.value} checked=${mode === m.value}
                      id=${'signup-mode-' + m.value} onChange=${() => setMode(m.value)} />
                    <span class="radio-text"><span class="radio-label">${m.label}</span><span class="field-help">${m.help}</span></span>
                  </label>`)}
              </div>
            </fieldset>
            <${Field} id="instance-default-model" label="Default model" as="select" inputClass="field-narrow" value=${model} onValue=${setModel}
              options=${modelOptions(store.models, model, 'None (the first model in the list)')}
              hint="New chats start with it unless someone chose their own default under Account." />
            <${Field} id="instance-files-quota" label="Storage for each person’s files (MB)" inputClass="field-narrow" type="number" min="0" step="1"
              inputmode="numeric" value=${quota} onValue=${setQuota}
              hint="Attached images, PDFs and text files, sent or not, count until their chat is deleted and the trash emptied. 0 means no limit." />
            ${error && html`<p class="error-note" role="alert">${error}</p>`}
          </div>
          <div class="card-actions">
            <span class="spacer"></span>
            <button type="submit" class="btn btn-primary" disabled=${busy || !dirty}>${busy ? 'Saving…' : 'Save'}</button>
          </div>
        </form>`}
      ${!saved && error && html`<p class="error-note" role="alert">${error}</p>`}
    </section>`;
}
