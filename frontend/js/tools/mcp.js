// mcp.js — Settings → MCP servers (administrators): remote MCP servers
// whose tools replies may call. A list beside one server's form: name,
// short name (the prefix of its tool names), address, a bearer token and
// extra headers (write-only: the server says only whether a token is set
// and which headers), who may use it, guidance for the model, and the
// tools it listed, each with a switch. What a server says about its tools
// is untrusted: it is only ever text here (never HTML), and every save and
// "Refresh tools" shows the server's error plainly.

import { html, useState, useEffect, useRef } from '../../vendor/htm-preact/standalone.module.js';
import { call } from '../core/transport.js';
import { hrefs, navigate } from '../core/router.js';
import { CloseButton, Icon, confirmAction, toast } from '../core/ui.js';
import { Field, FormError, PasswordField, isWebAddress, useFormError } from '../core/fields.js';

/** headersOf reads "Name: value" lines into an object, or {error}. */
function headersOf(text) {
  const out = {};
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const i = line.indexOf(':');
    if (i <= 0) return { error: `A header line needs a name and a value, like “X-Team: blue”: ${line.trim()}` };
    out[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  return { headers: out };
}

function ToolRow({ server, tool, onChanged }) {
  const [busy, setBusy] = useState(false);
  const id = `mcp-tool-${server.id}-${tool.offered}`;
  const toggle = async (on) => {
    setBusy(true);
    try {
      onChanged(await call('MCP.SetTool', { id: server.id, name: tool.name, on }));
    } catch (err) {
      toast(err.message, { error: true });
    }
    setBusy(false);
  };
  return html`
    <li class="mcp-tool" key=${tool.offered}>
      <label class="check mcp-tool-switch" for=${id}>
        <input type="checkbox" id=${id} checked=${tool.on} disabled=${busy}
          onChange=${(e) => toggle(e.currentTarget.checked)} />
        <code class="mcp-tool-name">${tool.offered}</code>
      </label>
      ${tool.offered !== server.slug + '_' + tool.name && html`<span class="muted mcp-tool-orig">The server calls it <code>${tool.name}</code>.</span>`}
      <p class="mcp-tool-desc">${tool.description || 'No description.'}</p>
    </li>`;
}

function ServerForm({ server, groups, onSaved, onDeleted, onClose }) {
  const creating = !server;
  const [name, setName] = useState(server ? server.name : '');
  const [slug, setSlug] = useState(server ? server.slug : '');
  const [url, setUrl] = useState(server ? server.url : '');
  const [token, setToken] = useState('');
  const [clearToken, setClearToken] = useState(false);
  const [headers, setHeaders] = useState('');
  const [clearHeaders, setClearHeaders] = useState(false);
  const [enabled, setEnabled] = useState(server ? server.enabled : true);
  const [limited, setLimited] = useState(server ? (server.groups || []).length > 0 : false);
  const [chosen, setChosen] = useState(server ? server.groups || [] : []);
  const [guidance, setGuidance] = useState(server ? server.guidance : '');
  const [busy, setBusy] = useState('');
  const { error, fail, clear } = useFormError();
  const first = useRef(null);
  const heading = useRef(null);
  useEffect(() => {
    const el = creating ? first.current : heading.current;
    if (el) el.focus({ preventScroll: true });
  }, [server && server.id]);

  const save = async (e) => {
    e.preventDefault();
    clear();
    if (!name.trim()) return fail('Give the server a name.');
    if (!isWebAddress(url.trim())) return fail('The address must start with https:// (or http://), like https://mcp.example.org/mcp.');
    if (limited && chosen.length === 0) return fail('Choose at least one group, or let everyone with the permission use it.');
    const input = { name: name.trim(), slug: slug.trim(), url: url.trim(), enabled, groups: limited ? chosen : [], guidance };
    if (server) input.id = server.id;
    if (clearToken) input.token = '';
    else if (token.trim()) input.token = token.trim();
    if (clearHeaders) input.headers = {};
    else if (headers.trim()) {
      const h = headersOf(headers);
      if (h.error) return fail(h.error);
      input.headers = h.headers;
    }
    setBusy('save');
    try {
      const saved = await call('MCP.Save', input);
      toast(saved.refreshError ? 'Saved, but the server could not be asked for its tools.' : creating ? `Added “${saved.name}”.` : 'Server saved.');
      onSaved(saved);
    } catch (err) {
      fail(err.message);
    }
    setBusy('');
  };

  const remove = async () => {
    const ok = await confirmAction({
      title: `Remove the MCP server “${server.name}”?`,
      body: 'Replies stop being offered its tools. Chats that used them keep what they said.',
      confirmLabel: 'Remove server',
      danger: true,
    });
    if (!ok) return;
    setBusy('delete');
    try {
      await call('MCP.Delete', { id: server.id });
      toast(`Removed “${server.name}”.`);
      onDeleted();
    } catch (err) {
      fail(err.message);
      setBusy('');
    }
  };

  const toggleGroup = (id, on) => setChosen(on ? [...chosen, id] : chosen.filter((g) => g !== id));
  const idp = server ? `mcp-${server.id}` : 'mcp-new';
  return html`
    <form class="card model-detail" id="mcp-form" aria-labelledby=${idp + '-title'} onSubmit=${save} noValidate>
      <header class="card-header">
        <h2 class="card-title" id=${idp + '-title'} tabindex="-1" ref=${heading}>${creating ? 'New MCP server' : server.name}</h2>
        <${CloseButton} label="Close the server" onClose=${onClose} />
      </header>
      <div class="card-body form-grid">
        <${Field} id=${idp + '-name'} inputRef=${first} label="Name" value=${name} autocomplete="off" placeholder="GitHub" onValue=${setName} />
        <${Field} id=${idp + '-slug'} label="Short name" value=${slug} autocomplete="off" placeholder="From the name" inputClass="mono"
          spellcheck="false" autocapitalize="off" onValue=${setSlug}
          hint="Letters a–z, digits and _. It starts the names models see: short name_tool." />
        <${Field} id=${idp + '-url'} label="Address" value=${url} type="url" autocomplete="off" placeholder="https://mcp.example.org/mcp"
          spellcheck="false" autocapitalize="off" onValue=${setUrl}
          hint="The streamable HTTP endpoint. A server on your own network needs its range under Settings → Web." />
        <${PasswordField} id=${idp + '-token'} label="Bearer token" value=${token} onValue=${setToken} autocomplete="off"
          placeholder=${server && server.tokenSet ? 'A token is set; type to replace it' : 'None'}
          hint="Stored encrypted; never shown again." />
        ${!!(server && server.tokenSet) && html`
          <label class="check"><input type="checkbox" id=${idp + '-clear-token'} checked=${clearToken}
            onChange=${(e) => setClearToken(e.currentTarget.checked)} /><span>Remove the token</span></label>`}
        <${Field} id=${idp + '-headers'} as="textarea" rows="2" label="Extra headers" value=${headers} onValue=${setHeaders}
          spellcheck="false" autocapitalize="off" inputClass="mono" placeholder="X-Team: blue"
          hint=${server && server.headerNames.length
            ? `Set: ${server.headerNames.join(', ')}. Lines typed here replace them all; values are never shown again.`
            : 'One “Name: value” a line. Stored encrypted.'} />
        ${!!server && server.headerNames.length > 0 && html`
          <label class="check"><input type="checkbox" id=${idp + '-clear-headers'} checked=${clearHeaders}
            onChange=${(e) => setClearHeaders(e.currentTarget.checked)} /><span>Remove the headers</span></label>`}
        <label class="check"><input type="checkbox" id=${idp + '-enabled'} checked=${enabled}
          onChange=${(e) => setEnabled(e.currentTarget.checked)} /><span>Replies may use this server</span></label>
        <fieldset class="fieldset">
          <legend class="field-label">Who may use it</legend>
          <div class="radio-list">
            <label class="check"><input type="radio" name=${idp + '-who'} checked=${!limited} onChange=${() => setLimited(false)} />
              <span>Everyone allowed to use MCP tools</span></label>
            <label class="check"><input type="radio" name=${idp + '-who'} id=${idp + '-limited'} checked=${limited} onChange=${() => setLimited(true)} />
              <span>Only these groups</span></label>
          </div>
          ${!!limited && (groups.length === 0
            ? html`<p class="muted">No groups yet (Settings → Groups).</p>`
            : html`<div class="check-row">${groups.map((g) => html`
                <label class="check" key=${g.id}><input type="checkbox" checked=${chosen.includes(g.id)}
                  onChange=${(e) => toggleGroup(g.id, e.currentTarget.checked)} /><span>${g.name}</span></label>`)}</div>`)}
        </fieldset>
        <${Field} id=${idp + '-guidance'} as="textarea" rows="3" label="Guidance for the model" value=${guidance} onValue=${setGuidance}
          hint="Added to the system message when one of this server's tools is offered: when to use them, what to avoid." />
        <${FormError} error=${error} id="mcp-error" />
      </div>
      <div class="card-actions wrap">
        ${!creating && html`<button type="button" class="btn btn-danger-ghost" disabled=${!!busy} onClick=${remove}>Remove server</button>`}
        <span class="spacer"></span>
        <button type="button" class="btn" onClick=${onClose}>Cancel</button>
        <button type="submit" class="btn btn-primary" id="mcp-save" disabled=${!!busy}>${busy === 'save' ? 'Saving…' : creating ? 'Add server' : 'Save'}</button>
      </div>
    </form>`;
}

function ServerTools({ server, onChanged }) {
  const [busy, setBusy] = useState(false);
  const refresh = async () => {
    setBusy(true);
    try {
      const s = await call('MCP.Refresh', { id: server.id });
      onChanged(s);
      toast(s.refreshError ? 'The server could not be asked for its tools.' : `${s.tools.length} ${s.tools.length === 1 ? 'tool' : 'tools'} found.`);
    } catch (err) {
      toast(err.message, { error: true });
    }
    setBusy(false);
  };
  const when = server.refreshedAt ? new Date(server.refreshedAt).toLocaleString() : '';
  return html`
    <section class="card" aria-labelledby="mcp-tools-title" id="mcp-tools">
      <header class="card-header">
        <h3 class="card-title" id="mcp-tools-title">Its tools</h3>
        <button type="button" class="btn btn-sm" id="mcp-refresh" disabled=${busy} onClick=${refresh}>
          <${Icon} name="regenerate" /><span>${busy ? 'Asking…' : 'Refresh tools'}</span></button>
      </header>
      <div class="card-body">
        ${!!server.refreshError && html`<p class="error-note" role="alert" id="mcp-refresh-error">${server.refreshError}</p>`}
        ${server.tools.length === 0 && !server.refreshError && html`<p class="muted">${server.refreshedAt ? 'The server listed no tools.' : 'Not asked yet.'}</p>`}
        ${server.tools.length > 0 && html`
          <p class="field-help">Names and descriptions come from the server and are shown as it wrote them. A switched-off tool is never offered.</p>
          <ul class="mcp-tools" aria-label="Tools of this server">
            ${server.tools.map((t) => html`<${ToolRow} key=${t.offered} server=${server} tool=${t} onChanged=${onChanged} />`)}
          </ul>`}
        ${!!when && html`<p class="field-help">Last asked ${when}.</p>`}
      </div>
    </section>`;
}

export function MCPSettings({ sub }) {
  const [servers, setServers] = useState(null);
  const [groups, setGroups] = useState([]);
  const [error, setError] = useState(null);
  const [formKey, setFormKey] = useState(0);
  const selectedId = /^\d+$/.test(sub || '') ? Number(sub) : 0;
  const creating = sub === 'new';

  const load = async () => {
    try {
      const [s, g] = await Promise.all([call('MCP.List'), call('Admin.Groups')]);
      setServers(Array.isArray(s) ? s : []);
      setGroups(Array.isArray(g) ? g : []);
      setError(null);
    } catch (err) {
      setError(err);
    }
  };
  useEffect(() => { load(); }, []);

  const replace = (s) => setServers((list) => (list || []).map((x) => (x.id === s.id ? s : x)));
  const selected = servers && selectedId ? servers.find((s) => s.id === selectedId) : null;
  const close = () => navigate(hrefs.settings('mcp'));
  const hasDetail = creating || !!selected;

  return html`
    <section class="settings-section" aria-labelledby="mcp-title">
      <div class="section-head">
        <div>
          <h2 id="mcp-title" class="section-title">MCP servers</h2>
          <p class="muted">Remote tools for replies, from servers speaking the Model Context Protocol. Turn MCP tools on under Settings → Tools; people need the permission “Use MCP tools”.</p>
        </div>
        <a class="btn btn-primary" href=${hrefs.settings('mcp', 'new')} id="mcp-create"><${Icon} name="plus" /><span>Add server</span></a>
      </div>
      ${error && html`<p class="error-note" role="alert">${error.message}</p>`}
      ${!servers && !error ? html`<p class="loading-line" role="status">Loading…</p>` : null}
      ${servers !== null && html`
        <div class=${'models-layout' + (hasDetail ? ' has-detail' : '')}>
          <div class="models-list-pane">
            ${servers.length === 0 && html`
              <div class="empty-state">
                <p class="empty-state-title">No MCP servers yet.</p>
                <p>Add one by its address; its tools are listed once it answers.</p>
              </div>`}
            ${servers.length > 0 && html`
              <ul class="model-list" aria-label="MCP servers" id="mcp-list">
                ${servers.map((s) => html`
                  <li class=${'model-row' + (s.id === selectedId ? ' is-selected' : '')} key=${s.id}>
                    <a class="model-row-main" href=${hrefs.settings('mcp', String(s.id))} aria-current=${s.id === selectedId ? 'true' : undefined}>
                      <span class="model-row-text">
                        <span class="model-row-name">${s.name}</span>
                        <span class="model-row-sub">${!s.enabled ? 'Off · ' : ''}${s.refreshError ? 'Not answering' : `${s.tools.filter((t) => t.on).length} of ${s.tools.length} tools on`}</span>
                      </span>
                    </a>
                  </li>`)}
              </ul>`}
          </div>
          ${hasDetail && html`
            <div class="models-detail-pane">
              <${ServerForm} key=${(selected ? selected.id : 'new') + ':' + formKey} server=${selected} groups=${groups}
                onClose=${close}
                onSaved=${async (s) => { await load(); setFormKey((k) => k + 1); navigate(hrefs.settings('mcp', String(s.id))); }}
                onDeleted=${async () => { await load(); close(); }} />
              ${selected && html`<${ServerTools} server=${selected} onChanged=${replace} />`}
            </div>`}
        </div>`}
    </section>`;
}
