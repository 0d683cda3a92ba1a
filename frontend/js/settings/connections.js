// settings-connections.js — Settings → Connections: the list, and a form to
// add or edit one (secrets are only ever shown masked; an empty key field
// keeps the stored key).

import { html, useState, useEffect, useRef } from '../../vendor/htm-preact/standalone.module.js';
import { call } from '../core/transport.js';
import { useStore, refreshConnections, refreshModels } from '../core/store.js';
import { hrefs, replaceRoute } from '../core/router.js';
import { confirmAction, toast, toastError, Icon } from '../core/ui.js';
import { formatWhen } from '../core/format.js';
import { Field, isWebAddress } from '../core/fields.js';

function testSummary(r) {
  if (!r) return '';
  if (r.ok) {
    const n = typeof r.modelCount === 'number' ? ` ${r.modelCount} ${r.modelCount === 1 ? 'model' : 'models'} available.` : '';
    const ms = typeof r.latencyMs === 'number' ? ` in ${Math.round(r.latencyMs)} ms` : '';
    // The server's message on success is the same model count.
    return `Connected${ms}.${n}`;
  }
  return `Could not connect: ${r.message || 'no answer.'}`;
}

function refreshSummary(r) {
  if (!r) return '';
  const parts = [`${r.total} ${r.total === 1 ? 'model' : 'models'} listed`];
  if (r.added) parts.push(`${r.added} new`);
  if (r.missing) parts.push(`${r.missing} no longer offered`);
  return parts.join(', ') + '.';
}

// ---------- Form ----------

let rowSeq = 0;

function rowsFrom(headers) {
  return Object.entries(headers || {}).map(([name, masked]) => ({ key: ++rowSeq, name, value: '', masked: String(masked || ''), stored: true }));
}

export function ConnectionForm({ conn, onDone }) {
  const editing = !!conn;
  const [name, setName] = useState(conn ? conn.name : '');
  const [baseUrl, setBaseUrl] = useState(conn ? conn.baseUrl : '');
  const [apiKey, setApiKey] = useState('');
  const [clearKey, setClearKey] = useState(false);
  const [rows, setRows] = useState(() => rowsFrom(conn && conn.headers));
  const [headersTouched, setHeadersTouched] = useState(false);
  const [caPem, setCaPem] = useState('');
  const [clearCA, setClearCA] = useState(false);
  const [insecure, setInsecure] = useState(conn ? !!conn.insecureTLS : false);
  const [enabled, setEnabled] = useState(conn ? conn.enabled !== false : true);
  const [error, setError] = useState('');
  const [result, setResult] = useState(null); // {ok, text}
  const [busy, setBusy] = useState('');
  const first = useRef(null);

  useEffect(() => {
    if (first.current) first.current.focus();
  }, []);

  const touchRows = (next) => {
    setRows(next);
    setHeadersTouched(true);
  };

  const build = () => {
    if (!name.trim()) return { error: 'Give the connection a name.' };
    if (!isWebAddress(baseUrl.trim())) return { error: 'The base URL must start with http:// or https://, like http://127.0.0.1:11434/v1.' };
    const input = { name: name.trim(), baseUrl: baseUrl.trim(), insecureTLS: insecure, enabled };
    if (clearKey) input.apiKey = '';
    else if (apiKey) input.apiKey = apiKey;
    if (!editing || headersTouched) {
      const headers = {};
      for (const r of rows) {
        const n = r.name.trim();
        if (!n && !r.value) continue;
        if (!n) return { error: 'Every extra header needs a name.' };
        if (!r.value) return { error: `Enter the value for the header “${n}”.` };
        headers[n] = r.value;
      }
      if (!editing) {
        if (Object.keys(headers).length) input.headers = headers;
      } else {
        input.headers = headers;
      }
    }
    if (clearCA) input.caPem = '';
    else if (caPem.trim()) input.caPem = caPem.trim() + '\n';
    return { input };
  };

  const test = async () => {
    const b = build();
    if (b.error) {
      setError(b.error);
      return;
    }
    setError('');
    setBusy('test');
    setResult(null);
    try {
      // A draft cannot carry the stored secrets; when they would be
      // needed, test the saved connection instead.
      const needsStored = editing && ((!apiKey && !clearKey && conn.apiKey) || (!headersTouched && rows.length > 0) || (!caPem && !clearCA && conn.hasCA));
      const r = needsStored ? await call('Connections.Test', conn.id) : await call('Connections.TestDraft', b.input);
      const note = needsStored && isDirty() ? ' (This tested the saved settings: save to test your changes.)' : '';
      setResult({ ok: !!(r && r.ok), text: testSummary(r) + note });
    } catch (err) {
      setResult({ ok: false, text: `Could not connect: ${err.message}` });
    }
    setBusy('');
  };

  const isDirty = () => !conn || name !== conn.name || baseUrl !== conn.baseUrl || !!apiKey || clearKey || headersTouched
    || !!caPem || clearCA || insecure !== !!conn.insecureTLS || enabled !== (conn.enabled !== false);

  const refresh = async () => {
    setBusy('refresh');
    setResult(null);
    try {
      const r = await call('Connections.RefreshModels', conn.id);
      setResult({ ok: true, text: refreshSummary(r) });
      refreshModels();
      refreshConnections();
    } catch (err) {
      setResult({ ok: false, text: `Could not list the models: ${err.message}` });
    }
    setBusy('');
  };

  const save = async (e) => {
    e.preventDefault();
    const b = build();
    if (b.error) {
      setError(b.error);
      return;
    }
    setError('');
    setBusy('save');
    try {
      const c = editing ? await call('Connections.Update', conn.id, b.input) : await call('Connections.Create', b.input);
      await Promise.all([refreshConnections(), refreshModels()]);
      if (c && c.lastError) toast(`Saved. Listing its models failed: ${c.lastError}`, { error: true, timeout: 10000 });
      else toast(editing ? 'Connection saved.' : 'Connection added.');
      onDone(c);
    } catch (err) {
      setError(err.message);
    }
    setBusy('');
  };

  const idp = conn ? `conn-${conn.id}` : 'conn-new';
  return html`
    <form class="card conn-form" noValidate onSubmit=${save} aria-labelledby=${idp + '-title'}>
      <header class="card-header">
        <h2 class="card-title" id=${idp + '-title'}>${editing ? `Edit “${conn.name}”` : 'Add a connection'}</h2>
      </header>
      <div class="card-body form-grid">
        <${Field} id=${idp + '-name'} inputRef=${first} label="Name" value=${name} required autocomplete="off"
          placeholder="Ollama on this machine" onValue=${setName} />
        <${Field} id=${idp + '-url'} label="Base URL" inputClass="mono" type="url" value=${baseUrl} required autocomplete="off" spellcheck="false"
          placeholder="http://127.0.0.1:11434/v1" onValue=${setBaseUrl} />
        <${Field} id=${idp + '-key'} label="API key" inputClass="mono" type="password" value=${apiKey} autocomplete="new-password" spellcheck="false"
          placeholder=${editing && conn.apiKey ? conn.apiKey : 'None'} disabled=${clearKey} onValue=${setApiKey}
          hint=${editing && conn.apiKey ? 'A key is stored. Leave this empty to keep it.' : 'Only if the server asks for one.'}
          after=${editing && conn.apiKey && html`
            <label class="check"><input type="checkbox" checked=${clearKey} onChange=${(e) => { setClearKey(e.currentTarget.checked); setApiKey(''); }} />
              <span>Clear key</span></label>`} />

        <fieldset class="fieldset">
          <legend class="field-label">Extra headers</legend>
          ${editing && rows.some((r) => r.stored) && html`
            <p class="field-help">${headersTouched ? 'Changing headers replaces all of them: enter every value again.' : 'Stored values are hidden. Leave the rows alone to keep them.'}</p>`}
          ${rows.map((r, i) => html`
            <div class="header-row" key=${r.key}>
              <label class="visually-hidden" for=${`${idp}-h${r.key}-n`}>Header name</label>
              <input id=${`${idp}-h${r.key}-n`} class="input mono" value=${r.name} placeholder="X-Header-Name" autocomplete="off"
                onInput=${(e) => touchRows(rows.map((x, j) => (j === i ? { ...x, name: e.currentTarget.value } : x)))} />
              <label class="visually-hidden" for=${`${idp}-h${r.key}-v`}>Value of ${r.name || 'the header'}</label>
              <input id=${`${idp}-h${r.key}-v`} class="input mono" type="password" value=${r.value} autocomplete="new-password"
                placeholder=${r.stored ? r.masked || 'stored' : 'value'}
                onInput=${(e) => touchRows(rows.map((x, j) => (j === i ? { ...x, value: e.currentTarget.value } : x)))} />
              <button type="button" class="btn btn-ghost btn-icon" aria-label=${`Remove the header ${r.name}`}
                title="Remove" onClick=${() => touchRows(rows.filter((_, j) => j !== i))}><${Icon} name="close" /></button>
            </div>`)}
          <div>
            <button type="button" class="btn btn-sm" onClick=${() => touchRows([...rows, { key: ++rowSeq, name: '', value: '', stored: false }])}>
              <${Icon} name="plus" /><span>Add header</span>
            </button>
          </div>
        </fieldset>

        <${Field} id=${idp + '-ca'} label="Custom CA certificate (PEM)" as="textarea" inputClass="mono" rows="4" value=${caPem} spellcheck="false"
          disabled=${clearCA} onValue=${setCaPem}
          placeholder=${editing && conn.hasCA ? 'A certificate is stored. Paste a new one to replace it.' : '-----BEGIN CERTIFICATE-----'}
          after=${editing && conn.hasCA && html`
            <label class="check"><input type="checkbox" checked=${clearCA} onChange=${(e) => { setClearCA(e.currentTarget.checked); setCaPem(''); }} />
              <span>Remove the stored certificate</span></label>`} />

        <div class="field">
          <label class="check"><input type="checkbox" checked=${insecure} onChange=${(e) => setInsecure(e.currentTarget.checked)} />
            <span>Trust a self-signed certificate</span></label>
          ${insecure && html`
            <p class="warning-note" role="note">The server's certificate will not be checked. Anyone between you and the
              server could read the conversation and the API key. Prefer pasting its CA certificate above.</p>`}
        </div>
        <div class="field">
          <label class="check"><input type="checkbox" checked=${enabled} onChange=${(e) => setEnabled(e.currentTarget.checked)} />
            <span>Enabled</span></label>
        </div>

        ${error && html`<p class="error-note" role="alert">${error}</p>`}
        ${result && html`<p class=${result.ok ? 'success-note' : 'error-note'} role="status">${result.text}</p>`}
      </div>
      <div class="card-actions wrap">
        <button type="button" class="btn" onClick=${test} disabled=${!!busy}>${busy === 'test' ? 'Testing…' : 'Test connection'}</button>
        ${editing && html`<button type="button" class="btn" onClick=${refresh} disabled=${!!busy}>${busy === 'refresh' ? 'Refreshing…' : 'Refresh models'}</button>`}
        <span class="spacer"></span>
        <button type="button" class="btn" onClick=${() => onDone(null)}>Cancel</button>
        <button type="submit" class="btn btn-primary" disabled=${!!busy}>${busy === 'save' ? 'Saving…' : 'Save'}</button>
      </div>
    </form>`;
}

// ---------- List ----------

export function ConnectionsSettings({ sub }) {
  const store = useStore();
  const [editing, setEditing] = useState(sub === 'new' ? 'new' : null);
  const [notes, setNotes] = useState({}); // id → {ok, text}
  const [busy, setBusy] = useState({});

  useEffect(() => {
    refreshConnections();
  }, []);
  useEffect(() => {
    if (sub === 'new') setEditing('new');
  }, [sub]);

  const done = () => {
    setEditing(null);
    if (sub) replaceRoute(hrefs.settings('connections'));
  };

  const run = async (c, what) => {
    setBusy((b) => ({ ...b, [c.id]: what }));
    let note;
    try {
      if (what === 'test') note = testSummary(await call('Connections.Test', c.id));
      else {
        note = refreshSummary(await call('Connections.RefreshModels', c.id));
        refreshModels();
        refreshConnections();
      }
      setNotes((n) => ({ ...n, [c.id]: { ok: !note.startsWith('Could not'), text: note } }));
    } catch (err) {
      setNotes((n) => ({ ...n, [c.id]: { ok: false, text: (what === 'test' ? 'Could not connect: ' : 'Could not list the models: ') + err.message } }));
    }
    setBusy((b) => ({ ...b, [c.id]: '' }));
  };

  const remove = async (c) => {
    const ok = await confirmAction({
      title: `Delete the connection “${c.name}”?`,
      body: 'Its models leave the picker. Chats keep their messages.',
      confirmLabel: 'Delete connection',
      danger: true,
    });
    if (!ok) return;
    try {
      await call('Connections.Delete', c.id);
      await Promise.all([refreshConnections(), refreshModels()]);
      toast('Connection deleted.');
    } catch (err) {
      toastError('Could not delete the connection', err);
    }
  };

  const list = store.connections;
  const editingConn = typeof editing === 'number' && list ? list.find((c) => c.id === editing) : null;
  return html`
    <section class="settings-section" aria-labelledby="connections-title">
      <div class="section-head">
        <h2 id="connections-title" class="section-title">Connections</h2>
        ${editing === null && html`
          <button type="button" class="btn btn-primary" onClick=${() => setEditing('new')}><${Icon} name="plus" /><span>Add connection</span></button>`}
      </div>
      ${editing === 'new' && html`<${ConnectionForm} key="new" conn=${null} onDone=${done} />`}
      ${editingConn && html`<${ConnectionForm} key=${editingConn.id} conn=${editingConn} onDone=${done} />`}
      ${list === null ? html`<p class="loading-line" role="status">Reading the map of connections…</p>` : null}
      ${list && list.length === 0 && editing === null && html`
        <div class="empty-state">
          <p class="empty-state-title">No connections yet.</p>
          <p>Add the address of a server with an OpenAI-compatible API (Ollama, llama.cpp, vLLM, LM Studio, or a hosted one).</p>
        </div>`}
      ${list && list.length > 0 && html`
        <ul class="conn-list">
          ${list.map((c) => html`
            <li class=${'card conn-row' + (c.enabled === false ? ' is-disabled' : '')} key=${c.id}>
              <div class="conn-main">
                <div class="conn-text">
                  <h3 class="conn-name">${c.name}</h3>
                  <p class="conn-url mono">${c.baseUrl}</p>
                  <ul class="badges conn-facts">
                    <li class="badge">${c.enabled === false ? 'Disabled' : 'Enabled'}</li>
                    <li class="badge">${c.modelCount || 0} ${c.modelCount === 1 ? 'model' : 'models'}</li>
                    ${c.apiKey ? html`<li class="badge">Key ${c.apiKey}</li>` : null}
                    ${c.hasCA ? html`<li class="badge">Custom CA</li>` : null}
                    ${c.insecureTLS ? html`<li class="badge badge-warn">Certificate not checked</li>` : null}
                  </ul>
                  ${c.modelsRefreshedAt ? html`<p class="conn-when">Models listed ${formatWhen(c.modelsRefreshedAt)}</p>` : null}
                  ${c.lastError ? html`<p class="error-note">Last error: ${c.lastError}</p>` : null}
                  ${!!notes[c.id] && html`<p class=${notes[c.id].ok ? 'success-note' : 'error-note'} role="status">${notes[c.id].text}</p>`}
                </div>
                <div class="conn-actions">
                  <button type="button" class="btn btn-sm" onClick=${() => setEditing(c.id)} aria-label=${`Edit ${c.name}`}>Edit</button>
                  <button type="button" class="btn btn-sm" onClick=${() => run(c, 'test')} disabled=${!!busy[c.id]}
                    aria-label=${`Test ${c.name}`}>${busy[c.id] === 'test' ? 'Testing…' : 'Test'}</button>
                  <button type="button" class="btn btn-sm" onClick=${() => run(c, 'refresh')} disabled=${!!busy[c.id]}
                    aria-label=${`Refresh the models of ${c.name}`}>${busy[c.id] === 'refresh' ? 'Refreshing…' : 'Refresh models'}</button>
                  <button type="button" class="btn btn-sm btn-danger-ghost" onClick=${() => remove(c)} aria-label=${`Delete ${c.name}`}>Delete</button>
                </div>
              </div>
            </li>`)}
        </ul>`}
    </section>`;
}
