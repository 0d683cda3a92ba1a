// custom.js — Settings → Custom tools (administrators): HTTP tools a model
// may call, each a request template whose {{holes}} the model fills with
// its arguments. A list beside one tool's form (name, description, the
// parameters' JSON Schema, method, URL, headers, body, a write-only secret,
// guidance for the system message, who may use it), and Try it: run the
// saved tool with arguments and see the request as sent (the secret
// masked) and the answer. Everything a server answers is untrusted: it is
// shown as text, never as markup.

import { html, useState, useEffect, useRef } from '../../vendor/htm-preact/standalone.module.js';
import { call } from '../core/transport.js';
import { hrefs, navigate } from '../core/router.js';
import { CloseButton, Icon, confirmAction, toast } from '../core/ui.js';
import { Field, FormError, useFormError } from '../core/fields.js';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].map((m) => ({ value: m, label: m }));

const EXAMPLE_SCHEMA = '{\n  "type": "object",\n  "properties": {\n    "city": {"type": "string", "description": "The city"}\n  },\n  "required": ["city"]\n}';

/** draftOf is the editable form of a saved tool (or a new one). */
function draftOf(t) {
  return {
    name: t ? t.name : '',
    description: t ? t.description : '',
    parameters: t ? JSON.stringify(t.parameters, null, 2) : EXAMPLE_SCHEMA,
    method: t ? t.method : 'GET',
    url: t ? t.url : '',
    headers: t && t.headers.length ? t.headers.map((h) => ({ ...h })) : [],
    body: t ? t.body : '',
    secret: '',
    clearSecret: false,
    guidance: t ? t.guidance : '',
    enabled: t ? t.enabled : true,
    groups: t ? t.groups || [] : [],
  };
}

/** inputOf is what Save takes, or {error}. */
function inputOf(d, tool) {
  let parameters;
  try {
    parameters = JSON.parse(d.parameters || '{"type":"object","properties":{}}');
  } catch {
    return { error: 'The parameters are not JSON: write a JSON Schema object.' };
  }
  const input = {
    id: tool ? tool.id : 0,
    name: d.name.trim(),
    description: d.description.trim(),
    parameters,
    method: d.method,
    url: d.url.trim(),
    headers: d.headers.filter((h) => h.name.trim() || h.value.trim()),
    body: d.method === 'GET' ? '' : d.body,
    guidance: d.guidance,
    enabled: d.enabled,
    groups: d.groups,
  };
  if (d.clearSecret) input.secret = '';
  else if (d.secret.trim()) input.secret = d.secret.trim();
  return { input };
}

function Headers({ idp, headers, onChange }) {
  const set = (i, patch) => onChange(headers.map((h, j) => (j === i ? { ...h, ...patch } : h)));
  return html`
    <fieldset class="fieldset">
      <legend class="field-label">Headers</legend>
      <p class="field-help">Values may hold {{parameter}} and {{secret}}; line breaks and other control characters are taken out of what fills them.</p>
      <ul class="custom-headers" id=${idp + '-headers'}>
        ${headers.map((h, i) => html`
          <li class="custom-header" key=${i}>
            <input class="input mono" aria-label=${`Header ${i + 1} name`} value=${h.name} placeholder="Authorization"
              spellcheck="false" autocomplete="off" onInput=${(e) => set(i, { name: e.currentTarget.value })} />
            <input class="input mono" aria-label=${`Header ${i + 1} value`} value=${h.value} placeholder="Bearer {{secret}}"
              spellcheck="false" autocomplete="off" onInput=${(e) => set(i, { value: e.currentTarget.value })} />
            <button type="button" class="btn btn-ghost" aria-label=${`Remove header ${i + 1}`}
              onClick=${() => onChange(headers.filter((_, j) => j !== i))}><${Icon} name="close" /></button>
          </li>`)}
      </ul>
      <div><button type="button" class="btn" id=${idp + '-add-header'} onClick=${() => onChange([...headers, { name: '', value: '' }])}>
        <${Icon} name="plus" /><span>Add header</span></button></div>
    </fieldset>`;
}

function GroupChecks({ idp, groups, value, onChange }) {
  const set = new Set(value);
  const toggle = (id, on) => {
    const next = new Set(set);
    if (on) next.add(id);
    else next.delete(id);
    onChange(groups.map((g) => g.id).filter((x) => next.has(x)));
  };
  return html`
    <fieldset class="fieldset">
      <legend class="field-label">Who may use it</legend>
      <p class="field-help">${set.size
        ? 'Only members of the groups ticked (and administrators), if they may use custom tools.'
        : 'Everyone who may use custom tools (Settings → Permissions). Tick groups to narrow it.'}</p>
      ${groups.length === 0 ? html`<p class="muted">No groups yet.</p>` : html`
        <ul class="member-list" aria-label="Groups">
          ${groups.map((g) => html`
            <li key=${g.id}>
              <label class="check member-check">
                <input type="checkbox" id=${`${idp}-group-${g.id}`} checked=${set.has(g.id)}
                  onChange=${(e) => toggle(g.id, e.currentTarget.checked)} />
                <span>${g.name}</span>
              </label>
            </li>`)}
        </ul>`}
    </fieldset>`;
}

function ToolForm({ tool, groups, onSaved, onDeleted, onClose }) {
  const creating = !tool;
  const [d, setDraft] = useState(() => draftOf(tool));
  const [busy, setBusy] = useState('');
  const { error, fail, clear } = useFormError();
  const first = useRef(null);
  const heading = useRef(null);
  useEffect(() => {
    const el = creating ? first.current : heading.current;
    if (el) el.focus({ preventScroll: true });
  }, [tool && tool.id]);
  const set = (patch) => setDraft((x) => ({ ...x, ...patch }));

  const save = async (e) => {
    e.preventDefault();
    const b = inputOf(d, tool);
    if (b.error) {
      fail(b.error);
      return;
    }
    setBusy('save');
    clear();
    try {
      const saved = await call('CustomTools.Save', b.input);
      toast(creating ? `Created the tool “${saved.name}”.` : 'Tool saved.');
      onSaved(saved.id);
    } catch (err) {
      fail(err.message);
    }
    setBusy('');
  };

  const remove = async () => {
    const ok = await confirmAction({
      title: `Delete the tool “${tool.name}”?`,
      body: 'Models are no longer offered it. Replies that used it keep what it answered.',
      confirmLabel: 'Delete tool',
      danger: true,
    });
    if (!ok) return;
    setBusy('delete');
    try {
      await call('CustomTools.Delete', tool.id);
      toast(`Deleted the tool “${tool.name}”.`);
      onDeleted();
    } catch (err) {
      fail(err.message);
      setBusy('');
    }
  };

  const idp = tool ? `custom-${tool.id}` : 'custom-new';
  return html`
    <form class="card model-detail" id="custom-form" aria-labelledby=${idp + '-title'} onSubmit=${save} noValidate>
      <header class="card-header">
        <h2 class="card-title" id=${idp + '-title'} tabindex="-1" ref=${heading}>${creating ? 'New tool' : tool.name}</h2>
        <${CloseButton} label="Close the tool" onClose=${onClose} />
      </header>
      <div class="card-body form-grid">
        <${Field} id="custom-name" inputRef=${first} label="Name" inputClass="mono" value=${d.name} autocomplete="off" spellcheck="false"
          placeholder="weather" onValue=${(v) => set({ name: v })}
          hint="What the model calls it: lower-case letters, digits, - and _ (not a built-in tool's name)." />
        <${Field} id="custom-description" label="Description" as="textarea" rows="2" value=${d.description}
          onValue=${(v) => set({ description: v })}
          hint="Sent to the model as the tool's description: say what it does and when to call it." />
        <${Field} id="custom-parameters" label="Parameters (JSON Schema)" as="textarea" inputClass="mono" rows="7" spellcheck="false"
          value=${d.parameters} onValue=${(v) => set({ parameters: v })}
          hint="An object schema; each property is an argument the model fills, written {{name}} in the request below." />
        <${Field} id="custom-method" label="Method" as="select" inputClass="field-narrow" value=${d.method} options=${METHODS}
          onValue=${(v) => set({ method: v })} />
        <${Field} id="custom-url" label="URL" inputClass="mono" value=${d.url} autocomplete="off" spellcheck="false"
          placeholder="https://api.example.com/v1/weather?city={{city}}" onValue=${(v) => set({ url: v })}
          hint="The scheme, host and port are written out; arguments fill holes in the path and query only, escaped, so they can never choose the server. A server on this network needs its range under Settings → Web." />
        <${Headers} idp=${idp} headers=${d.headers} onChange=${(headers) => set({ headers })} />
        ${d.method !== 'GET' && html`
          <${Field} id="custom-body" label="Body" as="textarea" inputClass="mono" rows="4" spellcheck="false" value=${d.body}
            placeholder='{"city": "{{city}}"}' onValue=${(v) => set({ body: v })}
            hint="JSON unless a Content-Type header says otherwise: values are escaped for where they land (“{{name}}” in a string, {{name}} as a value)." />`}
        <${Field} id="custom-secret" label="Secret" inputClass="mono field-narrow" type="password" value=${d.secret}
          autocomplete="new-password" spellcheck="false" placeholder=${tool && tool.secretSet ? 'Set' : 'None'} disabled=${d.clearSecret}
          onValue=${(v) => set({ secret: v })}
          hint=${tool && tool.secretSet
            ? 'A secret is set. Leave this blank to keep it. It fills {{secret}} in the URL or a header, and is dropped when a redirect leaves the tool’s server.'
            : 'An API key or token, stored encrypted and never shown again; it fills {{secret}} in the URL or a header.'}
          after=${!!(tool && tool.secretSet) && html`
            <label class="check"><input type="checkbox" id="custom-secret-clear" checked=${d.clearSecret}
              onChange=${(e) => set({ clearSecret: e.currentTarget.checked, secret: '' })} />
              <span>Clear secret</span></label>`} />
        <${Field} id="custom-guidance" label="Guidance" as="textarea" rows="3" value=${d.guidance}
          onValue=${(v) => set({ guidance: v })}
          hint="Optional: added to the system message when the tool is offered (when to use it, how to read its answer)." />
        <${GroupChecks} idp=${idp} groups=${groups} value=${d.groups} onChange=${(g) => set({ groups: g })} />
        <label class="check"><input type="checkbox" id="custom-enabled" checked=${d.enabled}
          onChange=${(e) => set({ enabled: e.currentTarget.checked })} /><span>Enabled</span></label>
        <${FormError} error=${error} id="custom-error" />
      </div>
      <div class="card-actions wrap">
        ${!creating && html`<button type="button" class="btn btn-danger-ghost" disabled=${!!busy} onClick=${remove}>Delete tool</button>`}
        <span class="spacer"></span>
        <button type="button" class="btn" onClick=${onClose}>Cancel</button>
        <button type="submit" class="btn btn-primary" disabled=${!!busy}>${busy === 'save' ? 'Saving…' : creating ? 'Create tool' : 'Save'}</button>
      </div>
    </form>`;
}

/** exampleArgs is an arguments object naming each parameter. */
function exampleArgs(tool) {
  const props = (tool.parameters && tool.parameters.properties) || {};
  const out = {};
  for (const [k, p] of Object.entries(props)) out[k] = p && (p.type === 'integer' || p.type === 'number') ? 0 : '';
  return JSON.stringify(out, null, 2);
}

function TryIt({ tool }) {
  const [args, setArgs] = useState(() => exampleArgs(tool));
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState(null);
  const { error, fail, clear } = useFormError();
  const run = async (e) => {
    e.preventDefault();
    let parsed;
    try {
      parsed = JSON.parse(args || '{}');
    } catch {
      fail('The arguments are not JSON: write an object such as {"city": "Bree"}.');
      return;
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
      fail('The arguments are a JSON object, such as {"city": "Bree"}.');
      return;
    }
    setBusy(true);
    clear();
    setResult(null);
    try {
      setResult(await call('CustomTools.Try', { id: tool.id, arguments: parsed }));
    } catch (err) {
      fail(err.message);
    }
    setBusy(false);
  };
  const req = result && result.request;
  const ans = result && result.answer;
  const requestText = req && req.url
    ? [`${req.method} ${req.url}`, ...(req.headers || []).map((h) => `${h.name}: ${h.value}`), ...(req.body ? ['', req.body] : [])].join('\n')
    : '';
  return html`
    <form class="card" id="custom-try" aria-labelledby="custom-try-title" onSubmit=${run} noValidate>
      <header class="card-header">
        <div>
          <h2 class="card-title" id="custom-try-title">Try it</h2>
          <p class="card-subtitle">Runs the saved tool with these arguments, as a reply would.</p>
        </div>
      </header>
      <div class="card-body form-grid">
        <${Field} id="custom-try-args" label="Arguments (JSON)" as="textarea" inputClass="mono" rows="4" spellcheck="false"
          value=${args} onValue=${setArgs} />
        <div><button type="submit" class="btn" disabled=${busy}>${busy ? 'Calling…' : 'Try it'}</button></div>
        <${FormError} error=${error} id="custom-try-error" />
        <div aria-live="polite" id="custom-try-result">
          ${!!result && html`
            ${!!requestText && html`
              <h3 class="field-label">Request</h3>
              <pre class="prompt-text" id="custom-try-request">${requestText}</pre>`}
            ${!!ans && ans.status > 0 && html`<p class="muted" id="custom-try-status">Answer: ${ans.statusText}${ans.contentType ? ` · ${ans.contentType}` : ''}${ans.truncated ? ' · cut at the size limit' : ''}</p>`}
            <h3 class="field-label">${result.failed ? 'What the model reads (a failed call)' : 'What the model reads'}</h3>
            <pre class=${'prompt-text' + (result.failed ? ' is-failed' : '')} id="custom-try-output">${result.result}</pre>`}
        </div>
      </div>
    </form>`;
}

export function CustomToolsSettings({ sub }) {
  const [list, setList] = useState(null);
  const [groups, setGroups] = useState([]);
  const [error, setError] = useState(null);
  const [formKey, setFormKey] = useState(0);
  const selectedId = /^\d+$/.test(sub || '') ? Number(sub) : 0;
  const creating = sub === 'new';

  const load = async () => {
    try {
      const [t, g] = await Promise.all([call('CustomTools.List'), call('Admin.Groups')]);
      setList(Array.isArray(t) ? t : []);
      setGroups(Array.isArray(g) ? g : []);
      setError(null);
    } catch (err) {
      setError(err);
    }
  };
  useEffect(() => { load(); }, []);

  const selected = list && selectedId ? list.find((t) => t.id === selectedId) : null;
  const close = () => navigate(hrefs.settings('custom-tools'));
  const hasDetail = creating || !!selected;

  return html`
    <section class="settings-section" aria-labelledby="custom-title">
      <div class="section-head">
        <div>
          <h2 id="custom-title" class="section-title">Custom tools</h2>
          <p class="muted">HTTP requests a model may make, with the arguments it chooses filling the holes you leave. Turn custom tools on under Settings → Tools.</p>
        </div>
        <a class="btn btn-primary" href=${hrefs.settings('custom-tools', 'new')} id="custom-create"><${Icon} name="plus" /><span>New tool</span></a>
      </div>
      ${error && html`<p class="error-note" role="alert">${error.message}</p>`}
      ${!list && !error ? html`<p class="loading-line" role="status">Loading the custom tools…</p>` : null}
      ${list !== null && html`
        <div class=${'models-layout' + (hasDetail ? ' has-detail' : '')}>
          <div class="models-list-pane">
            ${list.length === 0 && html`
              <div class="empty-state">
                <p class="empty-state-title">No custom tools yet.</p>
                <p>A tool is one HTTP request, such as a weather service's API, that models flagged with tools may call.</p>
              </div>`}
            ${list.length > 0 && html`
              <ul class="model-list" aria-label="Custom tools" id="custom-list">
                ${list.map((t) => html`
                  <li class=${'model-row' + (t.id === selectedId ? ' is-selected' : '')} key=${t.id}>
                    <a class="model-row-main" href=${hrefs.settings('custom-tools', String(t.id))} aria-current=${t.id === selectedId ? 'true' : undefined}>
                      <span class="model-row-text">
                        <span class="model-row-name mono">${t.name}</span>
                        <span class="model-row-sub">${t.method} ${t.url}</span>
                      </span>
                      ${!t.enabled && html`<span class="badge">Off</span>`}
                    </a>
                  </li>`)}
              </ul>`}
          </div>
          ${hasDetail && html`
            <div class="models-detail-pane">
              <${ToolForm} key=${(selected ? selected.id : 'new') + ':' + formKey} tool=${selected} groups=${groups}
                onClose=${close}
                onSaved=${async (id) => { await load(); setFormKey((k) => k + 1); navigate(hrefs.settings('custom-tools', String(id))); }}
                onDeleted=${async () => { await load(); close(); }} />
              ${selected && html`<${TryIt} key=${selected.id + ':' + selected.updatedAt} tool=${selected} />`}
            </div>`}
        </div>`}
    </section>`;
}
