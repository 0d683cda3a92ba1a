// tools/settings.js — Settings → Tools (administrators): which tool
// families replies may use on this server, how many tool rounds one reply
// may take, and the tools themselves as models are offered them
// (read-only: a description states what a runner does).

import { html, useState, useEffect } from '../../vendor/htm-preact/standalone.module.js';
import { call } from '../core/transport.js';
import { toast } from '../core/ui.js';
import { Field } from '../core/fields.js';

const FAMILIES = [
  { id: 'web_search', label: 'Web search', help: 'Replies may search the web with the provider chosen for this server.' },
  { id: 'fetch', label: 'Read web pages', help: 'Replies may read a page by its address, through the guard that keeps them off this network.' },
  { id: 'custom', label: 'Custom tools', help: 'Replies may call the HTTP tools defined under Custom tools.' },
  { id: 'mcp', label: 'MCP tools', help: 'Replies may use the tools of the servers added under MCP servers.' },
  // The library's families reach nothing outside this server: on until turned off here.
  { id: 'knowledge', label: 'Knowledge search', help: 'Replies may search the documents in the knowledge bases the person can see.' },
  { id: 'notes', label: 'Notes', help: 'Replies may search, read and write the person’s notes (shared notes stay read-only).' },
  { id: 'memory', label: 'Memory', help: 'Replies may add and forget the person’s memories. The memories themselves reach replies while the person keeps memory on.' },
  { id: 'skills', label: 'Skills', help: 'Replies may read the skills the person can see; their names and descriptions are listed to the model.' },
];

export function ToolsSettings() {
  const [saved, setSaved] = useState(null);
  const [families, setFamilies] = useState({});
  const [rounds, setRounds] = useState('8');
  const [tools, setTools] = useState([]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');

  const load = () => call('Tools.Settings').then((s) => {
    const v = s || {};
    setSaved(v);
    setFamilies({ ...(v.families || {}) });
    setRounds(String(v.maxRounds || 8));
    setError('');
  }, (err) => setError(err.message));
  useEffect(() => {
    load();
    call('Tools.List').then((l) => setTools(Array.isArray(l) ? l : []), () => {});
  }, []);

  const save = async (e) => {
    e.preventDefault();
    const n = Number(rounds);
    if (!Number.isInteger(n) || n < 1 || n > 32) {
      setError('The number of tool rounds is a whole number from 1 to 32.');
      return;
    }
    setBusy(true);
    setError('');
    try {
      await call('Tools.SetSettings', { families, maxRounds: n });
      toast('Tool settings saved.');
      await load();
    } catch (err) {
      setError(err.message);
    }
    setBusy(false);
  };

  const dirty = saved && (Number(rounds) !== saved.maxRounds
    || FAMILIES.some((f) => !!families[f.id] !== !!(saved.families || {})[f.id]));
  return html`
    <section class="settings-section" aria-labelledby="tools-title">
      <div class="section-head">
        <div>
          <h2 id="tools-title" class="section-title">Tools</h2>
          <p class="muted">What replies may do besides writing, for models marked for tools. People need the matching permission too.</p>
        </div>
      </div>
      ${!saved && !error ? html`<p class="loading-line" role="status">Loading…</p>` : null}
      ${saved && html`
        <form class="card" id="tools-form" onSubmit=${save} aria-labelledby="tools-card-title" noValidate>
          <header class="card-header"><h3 class="card-title" id="tools-card-title">On this server</h3></header>
          <div class="card-body form-grid">
            <fieldset class="fieldset">
              <legend class="field-label">Tools</legend>
              <div class="radio-list">
                ${FAMILIES.map((f) => html`
                  <label class="radio-row" key=${f.id}>
                    <input type="checkbox" id=${'tools-family-' + f.id} checked=${!!families[f.id]}
                      onChange=${(e) => setFamilies({ ...families, [f.id]: e.currentTarget.checked })} />
                    <span class="radio-text"><span class="radio-label">${f.label}</span><span class="field-help">${f.help}</span></span>
                  </label>`)}
              </div>
            </fieldset>
            <${Field} id="tools-rounds" label="Tool rounds in one reply" inputClass="field-narrow" type="number" min="1" max="32" step="1"
              inputmode="numeric" value=${rounds} onValue=${setRounds}
              hint="After this many rounds the model is asked once more without tools, so it answers with what it found." />
            ${error && html`<p class="error-note" role="alert">${error}</p>`}
          </div>
          <div class="card-actions">
            <span class="spacer"></span>
            <button type="submit" class="btn btn-primary" disabled=${busy || !dirty}>${busy ? 'Saving…' : 'Save'}</button>
          </div>
        </form>`}
      ${tools.length > 0 && html`
        <div class="card" aria-labelledby="tools-list-title">
          <header class="card-header"><h3 class="card-title" id="tools-list-title">What models are told</h3></header>
          <div class="card-body">
            <ul class="tools-list">
              ${tools.map((t) => html`
                <li key=${t.name}><code>${t.name}</code> — ${t.description}</li>`)}
            </ul>
          </div>
        </div>`}
      ${!saved && error && html`<p class="error-note" role="alert">${error}</p>`}
    </section>`;
}
