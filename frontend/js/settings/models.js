// settings-models.js — Settings → Models: a searchable, filterable,
// paginated list (50 a page) beside one model's details. Rows carry the
// quick toggles (enabled, pinned) and the order (move up / down); the
// details form carries the rest.

import { html, useState, useEffect, useRef, useCallback } from '../../vendor/htm-preact/standalone.module.js';
import { call, ApiError } from '../core/transport.js';
import { useStore, refreshModels, refreshConnections, loadEfforts } from '../core/store.js';
import { CloseButton, Avatar, Badges, Icon, Pager, toast, toastError } from '../core/ui.js';
import { ParamFields, formFromParams, paramsFromForm } from '../chat/modelpicker.js';
import { formatContext, formatNumber } from '../core/format.js';
import { ModelAccess } from '../admin/access.js';
import { Field, FilterBar } from '../core/fields.js';

const LIMIT = 50;

// Avatar files go through the same handler as the API, on the same origin,
// in the browser and in the desktop app (transport.js uses "/api/…" too).
async function avatarRequest(id, method, file) {
  let body;
  if (file) {
    body = new FormData();
    body.append('file', file);
  }
  let res;
  try {
    res = await fetch(`/api/models/${encodeURIComponent(id)}/avatar`, { method, body, credentials: 'same-origin' });
  } catch {
    throw new ApiError('unavailable', 'Could not reach the server.');
  }
  if (res.ok) return;
  let msg = `The server refused the image (HTTP ${res.status}).`;
  let kind = 'internal';
  try {
    const j = await res.json();
    if (j && j.error && j.error.message) {
      msg = j.error.message;
      kind = j.error.kind;
    }
  } catch {
    // not JSON
  }
  throw new ApiError(kind, msg);
}

function ModelRow({ m, selected, first, last, onSelect, onToggle, onMove, busy }) {
  return html`
    <li class=${'model-row' + (selected ? ' is-selected' : '') + (m.enabled ? '' : ' is-disabled')}>
      <button type="button" class="model-row-main" aria-pressed=${selected ? 'true' : 'false'} onClick=${() => onSelect(m)}>
        <${Avatar} model=${m} />
        <span class="model-row-text">
          <span class="model-row-name">${m.name}</span>
          <span class="model-row-sub">${m.connectionName}${m.upstreamId !== m.name ? ' · ' + m.upstreamId : ''}</span>
          ${m.missing ? html`<span class="badge badge-warn">No longer offered</span>` : html`<${Badges} model=${m} />`}
        </span>
      </button>
      <div class="model-row-tools">
        <label class="switch" title="Enabled">
          <input type="checkbox" checked=${m.enabled} disabled=${busy} onChange=${(e) => onToggle(m, { enabled: e.currentTarget.checked })} />
          <span class="visually-hidden">Enabled: ${m.name}</span>
          <span class="switch-track" aria-hidden="true"></span>
        </label>
        <button type="button" class=${'btn btn-ghost btn-icon btn-sm' + (m.pinned ? ' is-on' : '')} aria-pressed=${m.pinned ? 'true' : 'false'}
          aria-label=${`Pin ${m.name} to the sidebar`} title=${m.pinned ? 'Unpin from the sidebar' : 'Pin to the sidebar'}
          disabled=${busy} onClick=${() => onToggle(m, { pinned: !m.pinned })}><${Icon} name="pin" /></button>
        <button type="button" class="btn btn-ghost btn-icon btn-sm" aria-label=${`Move ${m.name} up`} title="Move up"
          disabled=${busy || first} onClick=${() => onMove(m, -1)}><${Icon} name="arrowUp" /></button>
        <button type="button" class="btn btn-ghost btn-icon btn-sm" aria-label=${`Move ${m.name} down`} title="Move down"
          disabled=${busy || last} onClick=${() => onMove(m, 1)}><${Icon} name="arrowDown" /></button>
      </div>
    </li>`;
}

function ModelDetail({ model, efforts, onSaved, onImage, onClose }) {
  const [displayName, setDisplayName] = useState(model.displayName || '');
  const [description, setDescription] = useState(model.description || '');
  const [caps, setCaps] = useState({ vision: false, tools: false, reasoning: false, ...(model.capabilities || {}) });
  const [ctx, setCtx] = useState(String(model.contextLength || 0));
  const [form, setForm] = useState(formFromParams(model.params));
  const [prompt, setPrompt] = useState(model.systemPrompt || '');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState('');
  const fileRef = useRef(null);
  const heading = useRef(null);

  useEffect(() => {
    if (heading.current) heading.current.focus({ preventScroll: false });
  }, [model.id]);

  const save = async (e) => {
    e.preventDefault();
    const p = paramsFromForm(form);
    if (p.error) {
      setError(p.error);
      return;
    }
    const n = ctx.trim() === '' ? 0 : Number(ctx);
    if (!Number.isInteger(n) || n < 0) {
      setError('Context length must be a whole number (0 when unknown).');
      return;
    }
    setError('');
    setBusy('save');
    try {
      const m = await call('Models.Update', model.id, {
        displayName: displayName.trim(), description: description.trim(), capabilities: caps,
        contextLength: n, params: p.params, systemPrompt: prompt,
      });
      toast('Model saved.');
      onSaved(m);
    } catch (err) {
      setError(err.message);
    }
    setBusy('');
  };

  const upload = async (e) => {
    const file = e.currentTarget.files && e.currentTarget.files[0];
    e.currentTarget.value = '';
    if (!file) return;
    setBusy('avatar');
    try {
      await avatarRequest(model.id, 'POST', file);
      toast('Image saved.');
      onImage();
    } catch (err) {
      toastError('Could not save the image', err);
    }
    setBusy('');
  };

  const removeAvatar = async () => {
    setBusy('avatar');
    try {
      await avatarRequest(model.id, 'DELETE');
      toast('Image removed.');
      onImage();
    } catch (err) {
      toastError('Could not remove the image', err);
    }
    setBusy('');
  };

  const ctxShown = formatContext(Number(ctx));
  const idp = `model-${model.id}`;
  return html`
    <form class="card model-detail" onSubmit=${save} aria-labelledby=${idp + '-title'}>
      <header class="card-header">
        <div class="model-detail-head">
          <${Avatar} model=${model} size="lg" />
          <div>
            <h2 class="card-title" id=${idp + '-title'} tabindex="-1" ref=${heading}>${model.name}</h2>
            <p class="card-subtitle mono">${model.upstreamId}</p>
            <p class="card-subtitle">${model.connectionName}</p>
          </div>
        </div>
        <${CloseButton} label="Close the details" onClose=${onClose} />
      </header>
      <div class="card-body form-grid">
        ${model.missing && html`<p class="warning-note">This model is no longer offered by its connection.</p>`}
        <${Field} id=${idp + '-name'} label="Display name" value=${displayName} placeholder=${model.upstreamId} onValue=${setDisplayName} />
        <${Field} id=${idp + '-desc'} label="Description" as="textarea" rows="2" value=${description}
          placeholder="One line shown in the model picker" onValue=${setDescription} />
        <div class="field">
          <span class="field-label" id=${idp + '-img'}>Image</span>
          <div class="avatar-tools" role="group" aria-labelledby=${idp + '-img'}>
            <input type="file" accept="image/png,image/jpeg,image/webp,image/gif" class="visually-hidden" ref=${fileRef}
              id=${idp + '-file'} aria-label="Image file" onChange=${upload} tabindex="-1" />
            <button type="button" class="btn btn-sm" disabled=${!!busy} onClick=${() => fileRef.current && fileRef.current.click()}>
              ${busy === 'avatar' ? 'Saving…' : 'Upload image'}
            </button>
            ${model.hasAvatar && html`<button type="button" class="btn btn-sm btn-ghost" disabled=${!!busy} onClick=${removeAvatar}>Remove image</button>`}
          </div>
        </div>
        <fieldset class="fieldset">
          <legend class="field-label">Capabilities</legend>
          <div class="check-row">
            ${[['vision', 'Vision (images in)'], ['tools', 'Tools'], ['reasoning', 'Reasoning']].map(([k, label]) => html`
              <label class="check" key=${k}><input type="checkbox" checked=${!!caps[k]}
                onChange=${(e) => setCaps({ ...caps, [k]: e.currentTarget.checked })} /><span>${label}</span></label>`)}
          </div>
          ${!!caps.tools && html`
            <div class="check-row" role="group" aria-label="Tools this model may use">
              ${TOOL_FAMILIES.map(([f, label]) => html`
                <label class="check" key=${f}><input type="checkbox" id=${idp + '-tool-' + f} checked=${!(caps.toolsOff || []).includes(f)}
                  onChange=${(e) => {
                    const off = (caps.toolsOff || []).filter((x) => x !== f);
                    if (!e.currentTarget.checked) off.push(f);
                    setCaps({ ...caps, toolsOff: off });
                  }} /><span>${label}</span></label>`)}
            </div>`}
        </fieldset>
        <${Field} id=${idp + '-ctx'} label="Context length (tokens)" type="number" min="0" step="1" inputmode="numeric" value=${ctx}
          onValue=${setCtx} hint=${ctxShown ? `${ctxShown} (${formatNumber(Number(ctx))} tokens).` : 'Unknown. Enter 0 when you do not know it.'} />
        <fieldset class="fieldset">
          <legend class="field-label">Defaults for new chats</legend>
          <${ParamFields} idPrefix=${idp} form=${form} setForm=${setForm} efforts=${efforts} />
        </fieldset>
        <${Field} id=${idp + '-prompt'} label="System prompt" as="textarea" rows="4" value=${prompt}
          placeholder="Used when a chat has none of its own" onValue=${setPrompt} />
        ${error && html`<p class="error-note" role="alert">${error}</p>`}
      </div>
      <div class="card-actions">
        <span class="spacer"></span>
        <button type="button" class="btn" onClick=${onClose}>Cancel</button>
        <button type="submit" class="btn btn-primary" disabled=${!!busy}>${busy === 'save' ? 'Saving…' : 'Save'}</button>
      </div>
    </form>`;
}


// The tool families a model flagged for tools may use, each on unless
// switched off (capabilities.toolsOff).
const TOOL_FAMILIES = [['web_search', 'Web search'], ['fetch', 'Read web pages'], ['custom', 'Custom tools'], ['mcp', 'MCP tools'],
  ['knowledge', 'Knowledge search'], ['notes', 'Notes'], ['memory', 'Memory'], ['skills', 'Skills']];

export function ModelsSettings() {
  const store = useStore();
  const [query, setQuery] = useState('');
  const [connectionId, setConnectionId] = useState('');
  const [enabledOnly, setEnabledOnly] = useState(false);
  const [offset, setOffset] = useState(0);
  const [data, setData] = useState(null); // {items, total}
  const [error, setError] = useState(null);
  const [selected, setSelected] = useState(null);
  const [busyId, setBusyId] = useState(0);
  const [detailKey, setDetailKey] = useState(0);
  const seq = useRef(0);
  const timer = useRef(0);

  const load = useCallback(async (q, conn, en, off) => {
    const n = ++seq.current;
    try {
      const args = { query: q.trim() || undefined, offset: off, limit: LIMIT };
      if (conn) args.connectionId = Number(conn);
      if (en) args.enabledOnly = true;
      const r = await call('Models.List', args);
      if (n !== seq.current) return null;
      const items = (r && r.items) || [];
      setData({ items, total: (r && r.total) || 0, offset: off });
      setError(null);
      return items;
    } catch (err) {
      if (n === seq.current) setError(err);
      return null;
    }
  }, []);

  useEffect(() => {
    refreshConnections();
    loadEfforts();
  }, []);

  useEffect(() => {
    clearTimeout(timer.current);
    timer.current = setTimeout(() => load(query, connectionId, enabledOnly, offset), query ? 250 : 0);
    return () => clearTimeout(timer.current);
  }, [query, connectionId, enabledOnly, offset]);

  const reload = () => load(query, connectionId, enabledOnly, offset);

  const toggle = async (m, patch) => {
    setBusyId(m.id);
    try {
      const u = await call('Models.Update', m.id, patch);
      setData((d) => d && { ...d, items: d.items.map((x) => (x.id === m.id ? { ...x, ...(u || patch) } : x)) });
      if (selected && selected.id === m.id) setSelected((s) => ({ ...s, ...(u || patch) }));
      refreshModels();
    } catch (err) {
      toastError('Could not change the model', err);
    }
    setBusyId(0);
  };

  const move = async (m, dir) => {
    const items = data.items;
    const i = items.findIndex((x) => x.id === m.id);
    const other = items[i + dir];
    if (!other) return;
    setBusyId(m.id);
    try {
      await call('Models.Move', m.id, other.id);
      await reload();
      refreshModels();
      setTimeout(() => {
        const btn = document.querySelector(`[aria-label="Move ${CSS.escape(m.name)} ${dir < 0 ? 'up' : 'down'}"]`);
        if (btn && !btn.disabled) btn.focus();
      }, 0);
    } catch (err) {
      toastError('Could not move the model', err);
    }
    setBusyId(0);
  };

  const onSaved = async (m) => {
    if (m) setSelected(m);
    await reload();
    refreshModels();
    setDetailKey((k) => k + 1);
  };

  // The image is saved on its own, while the rest of the form may hold
  // unsaved edits: take the fresh row (hasAvatar, avatarUrl) without
  // remounting the form, which would start it again from the saved values.
  const onImage = async () => {
    const id = selected && selected.id;
    const items = await reload();
    refreshModels();
    const fresh = items && items.find((x) => x.id === id);
    if (fresh) setSelected((s) => (s && s.id === id ? { ...s, hasAvatar: fresh.hasAvatar, avatarUrl: fresh.avatarUrl } : s));
  };

  const conns = Array.isArray(store.connections) ? store.connections : [];
  const total = data ? data.total : 0;
  const shownOffset = data ? data.offset : 0;
  return html`
    <section class="settings-section" aria-labelledby="models-title">
      <div class="section-head">
        <h2 id="models-title" class="section-title">Models</h2>
        <p class="muted">The picker shows enabled models in this order. Pinned ones get a shortcut in the sidebar.</p>
      </div>
      <div class=${'models-layout' + (selected ? ' has-detail' : '')}>
        <div class="models-list-pane">
          <${FilterBar}
            search=${{ id: 'models-query', label: 'Search models', placeholder: 'Name, id or description', value: query,
              onValue: (v) => { setQuery(v); setOffset(0); } }}
            filters=${[
              { id: 'models-conn', label: 'Connection', value: connectionId,
                options: [{ value: '', label: 'All connections' }, ...conns.map((c) => ({ value: String(c.id), label: c.name }))],
                onValue: (v) => { setConnectionId(v); setOffset(0); } },
              { id: 'models-enabled', label: 'Show', value: enabledOnly ? 'enabled' : 'all',
                options: [{ value: 'all', label: 'All models' }, { value: 'enabled', label: 'Enabled only' }],
                onValue: (v) => { setEnabledOnly(v === 'enabled'); setOffset(0); } },
            ]} />
          ${error && html`<p class="error-note" role="alert">${error.message}</p>`}
          ${!data && !error ? html`<p class="loading-line" role="status">Counting the models…</p>` : null}
          ${data && data.items.length === 0 && html`
            <div class="empty-state">
              <p class="empty-state-title">${query || connectionId || enabledOnly ? 'No model matches.' : 'No models yet.'}</p>
              <p>${query || connectionId || enabledOnly ? 'Try another search or filter.' : 'Add a connection, then refresh its models.'}</p>
            </div>`}
          ${data && data.items.length > 0 && html`
            <ul class="model-list" aria-label="Models">
              ${data.items.map((m, i) => html`<${ModelRow} key=${m.id} m=${m} selected=${selected && selected.id === m.id}
                first=${i === 0} last=${i === data.items.length - 1}
                onSelect=${(x) => { setSelected(x); setDetailKey((k) => k + 1); }} onToggle=${toggle} onMove=${move} busy=${busyId === m.id} />`)}
            </ul>`}
          ${data && html`<${Pager} offset=${shownOffset} limit=${LIMIT} shown=${data.items.length} total=${total} onOffset=${setOffset} />`}
        </div>
        ${selected && html`
          <div class="models-detail-pane">
            <${ModelDetail} key=${selected.id + ':' + detailKey} model=${selected} efforts=${store.efforts}
              onSaved=${onSaved} onImage=${onImage} onClose=${() => setSelected(null)} />
            <${ModelAccess} key=${'access-' + selected.id} model=${selected} />
          </div>`}
      </div>
    </section>`;
}
