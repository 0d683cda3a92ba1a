// prompts.js — Settings → Prompts (administrators only): the harness, every
// sentence LLeMbas itself puts before the system prompt. Each fragment with
// its default, its wording now, reset and off (an empty text); the tools'
// descriptions read-only (they are schema, sent verbatim); and a preview of
// the exact system message a model and a person would get, which the
// server builds with the request's own code.

import { html, useState, useEffect } from '../../vendor/htm-preact/standalone.module.js';
import { call } from '../core/transport.js';
import { useStore, useMe, refreshModels } from '../core/store.js';
import { toast } from '../core/ui.js';
import { Field } from '../core/fields.js';
import { loadAllUsers, userName } from './users.js';

const FAMILY_LABELS = { web_search: 'web search', fetch: 'reading web pages', custom: 'custom tools', mcp: 'MCP tools',
  knowledge: 'knowledge search', notes: 'notes', memory: 'memory', skills: 'skills' };

// gateText says when a fragment is used, in words.
function gateText(f) {
  // A task's instruction is a request of its own, never in a reply.
  if (f.task) return 'Used as the instruction when a chat is compacted (not part of replies). Emptied, the default applies.';
  const parts = [];
  if (f.families && f.families.length) parts.push('only when ' + f.families.map((x) => FAMILY_LABELS[x] || x).join(' or ') + ' is offered');
  else if (f.whenTools) parts.push('only when a tool is offered');
  else parts.push('in every reply');
  if (f.requires) parts.push(`only with “${f.requires}”`);
  return 'Used ' + parts.join(', ') + '.';
}

function stateBadge(f) {
  if (f.off) return html`<span class="badge badge-off">Off</span>`;
  if (f.overridden) return html`<span class="badge badge-role">Changed</span>`;
  return html`<span class="badge">Default</span>`;
}

function FragmentCard({ f, onSaved }) {
  const [text, setText] = useState(f.text);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  useEffect(() => { setText(f.text); }, [f.text]);

  const run = async (method, arg, done) => {
    setBusy(true);
    setError('');
    try {
      onSaved(await call(method, arg));
      toast(done);
    } catch (err) {
      setError(err.message);
    }
    setBusy(false);
  };
  const save = (e) => {
    e.preventDefault();
    run('Prompts.Set', { fragments: { [f.key]: text } }, `${f.title}: saved.`);
  };
  const dirty = text !== f.text;
  const id = 'prompt-' + f.key;
  return html`
    <form class="card prompt-card" id=${id + '-form'} onSubmit=${save} aria-labelledby=${id + '-title'}>
      <header class="card-header prompt-head">
        <h3 class="card-title" id=${id + '-title'}>${f.title}</h3>
        ${stateBadge(f)}
      </header>
      <div class="card-body form-grid">
        <${Field} id=${id} label="Text" as="textarea" inputClass="mono" rows="4" value=${text} onValue=${setText}
          hint=${gateText(f) + ' Leave it empty to turn it off.'} error=${error} />
        <details class="prompt-default">
          <summary>Default text</summary>
          <pre class="prompt-text" id=${id + '-default'}>${f.default}</pre>
        </details>
      </div>
      <div class="card-actions">
        ${f.overridden ? html`<button type="button" class="btn" id=${id + '-reset'} disabled=${busy}
          onClick=${() => run('Prompts.Reset', f.key, `${f.title}: back to the default.`)}>Reset to default</button>` : null}
        ${!f.off ? html`<button type="button" class="btn" id=${id + '-off'} disabled=${busy}
          onClick=${() => run('Prompts.Set', { fragments: { [f.key]: '' } }, `${f.title}: turned off.`)}>Turn off</button>` : null}
        <span class="spacer"></span>
        ${dirty ? html`<button type="button" class="btn" onClick=${() => setText(f.text)}>Undo changes</button>` : null}
        <button type="submit" class="btn btn-primary" id=${id + '-save'} disabled=${busy || !dirty}>${busy ? 'Saving…' : 'Save'}</button>
      </div>
    </form>`;
}

function Preview({ version }) {
  const store = useStore();
  const me = useMe();
  const [users, setUsers] = useState([]);
  const [model, setModel] = useState('');
  const [person, setPerson] = useState('0');
  const [out, setOut] = useState(null);
  const [error, setError] = useState('');
  const models = store.models || [];
  useEffect(() => {
    refreshModels();
    loadAllUsers().then(setUsers, () => setUsers([]));
  }, []);
  useEffect(() => {
    if (!model && models.length) setModel(String(models[0].id));
  }, [models.length]);
  useEffect(() => {
    if (!model) return;
    let live = true;
    setError('');
    call('Prompts.Preview', { modelId: Number(model), userId: Number(person) || undefined })
      .then((v) => { if (live) setOut(v.system); }, (err) => { if (live) { setOut(null); setError(err.message); } });
    return () => { live = false; };
  }, [model, person, version]);

  const people = [{ value: '0', label: 'You' },
    ...users.filter((u) => !me.me || u.id !== me.me.id).map((u) => ({ value: String(u.id), label: userName(u) }))];
  return html`
    <section class="card" aria-labelledby="prompt-preview-title">
      <header class="card-header"><h3 class="card-title" id="prompt-preview-title">Preview</h3></header>
      <div class="card-body form-grid">
        <p class="muted">The system message a new chat sends now: the text above, then the system prompt that applies (the model's, else the instance's).</p>
        <div class="prompt-choose">
          <${Field} id="prompt-preview-model" label="Model" as="select" inputClass="field-narrow" value=${model} onValue=${setModel}
            options=${models.map((m) => ({ value: String(m.id), label: m.name }))} />
          <${Field} id="prompt-preview-person" label="Person" as="select" inputClass="field-narrow" value=${person} onValue=${setPerson}
            options=${people} />
        </div>
        ${!models.length ? html`<p class="muted">No models to preview with yet.</p>` : null}
        ${error ? html`<p class="error-note" role="alert">${error}</p>` : null}
        ${out !== null && !error ? (out
          ? html`<pre class="prompt-text" id="prompt-preview" aria-live="polite">${out}</pre>`
          : html`<p class="muted" id="prompt-preview">No system message: every fragment is off and no system prompt applies.</p>`) : null}
      </div>
    </section>`;
}

function ToolsCard({ tools }) {
  return html`
    <section class="card" aria-labelledby="prompt-tools-title">
      <header class="card-header"><h3 class="card-title" id="prompt-tools-title">Tool descriptions</h3></header>
      <div class="card-body form-grid">
        <p class="muted">Sent to the model with each tool, as they are. They say what the tool does, so they cannot be edited; guidance belongs in the texts above.</p>
        ${tools.length ? html`<ul class="prompt-tools">
          ${tools.map((t) => html`<li key=${t.name}>
            <code>${t.name}</code> <span class="badge">${FAMILY_LABELS[t.family] || t.family}</span>
            <p>${t.description}</p>
            ${t.parameters ? html`<pre class="prompt-text">${JSON.stringify(t.parameters, null, 2)}</pre>` : null}
          </li>`)}
        </ul>` : html`<p class="muted" id="prompt-no-tools">No tools are available yet.</p>`}
      </div>
    </section>`;
}

export function PromptsSettings() {
  const [view, setView] = useState(null);
  const [version, setVersion] = useState(0);
  const [error, setError] = useState('');
  const show = (v) => { setView(v); setVersion((n) => n + 1); };
  useEffect(() => { call('Prompts.List').then(show, (err) => setError(err.message)); }, []);
  return html`
    <section class="settings-section" aria-labelledby="prompts-title">
      <div class="section-head">
        <div>
          <h2 id="prompts-title" class="section-title">Prompts</h2>
          <p class="muted">What LLeMbas adds to every reply's system message, before the system prompt that applies.
            ${view ? html` Texts may use ${view.variables.map((v, i) => html`${i ? ', ' : ''}<code title=${v.description}>{{${v.name}}}</code>`)}.` : null}</p>
        </div>
      </div>
      ${!view && !error ? html`<p class="loading-line" role="status">Gathering the words…</p>` : null}
      ${error ? html`<p class="error-note" role="alert">${error}</p>` : null}
      ${view ? html`
        <${Preview} version=${version} />
        ${view.fragments.map((f) => html`<${FragmentCard} key=${f.key} f=${f} onSaved=${show} />`)}
        <${ToolsCard} tools=${view.tools} />` : null}
    </section>`;
}
