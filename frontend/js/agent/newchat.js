// newchat.js — an agent chat's choices. On the new-chat screen, KindChoice
// picks Chat or Agent (Agent only for holders of agent.use while agent
// chats are on) and, for an agent, the SSH connection, the project
// directory (typed, or picked with Browse: Agent.Browse over SFTP) and the
// mode; they travel with the first message (Chats.Send's `agent`) and are
// fixed from then on. In an agent chat, AgentBar shows where it works
// (host:dir, read-only) and the mode select, the one choice that moves
// (Chats.Update({agentMode}); the select shows the row read back).

import { html, useState, useEffect } from '../../vendor/htm-preact/standalone.module.js';
import { call } from '../core/transport.js';
import { hrefs } from '../core/router.js';
import { useCan } from '../core/store.js';

/** MODES are an agent chat's modes, each with its one-line hint. */
export const MODES = [
  { value: 'manual', label: 'Manual', hint: 'Every command and file access waits for your approval.' },
  { value: 'plan', label: 'Plan', hint: 'Looks around and proposes a plan; changes nothing.' },
  { value: 'edit', label: 'Edit', hint: 'Reads and edits files freely; commands wait for your approval.' },
  { value: 'auto', label: 'Auto', hint: 'Runs everything without asking.' },
];

export const modeHint = (m) => (MODES.find((x) => x.value === m) || MODES[0]).hint;

function ModeSelect({ id, value, onChange, disabled }) {
  return html`
    <div class="agent-mode">
      <label class="field-label" for=${id}>Mode</label>
      <select class="select agent-mode-select" id=${id} value=${value} disabled=${disabled}
        aria-describedby=${id + '-hint'} onChange=${(e) => onChange(e.currentTarget.value)}>
        ${MODES.map((m) => html`<option key=${m.value} value=${m.value} selected=${m.value === value}>${m.label}</option>`)}
      </select>
      <span class="agent-mode-hint" id=${id + '-hint'}>${modeHint(value)}</span>
    </div>`;
}

// Browser lists one directory of the connection's host: parent, the
// directories in it (files shown, not chosen), "Use this directory".
function Browser({ profile, start, onChoose, onClose }) {
  const [listing, setListing] = useState(null);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const open = async (dir) => {
    setBusy(true);
    setError('');
    try {
      setListing(await call('Agent.Browse', profile, dir));
    } catch (err) {
      setError(err.message);
    }
    setBusy(false);
  };
  useEffect(() => { open(start || ''); }, [profile]);
  const entries = (listing && Array.isArray(listing.entries)) ? listing.entries : [];
  return html`
    <div class="agent-browse" id="agent-browse" aria-busy=${busy ? 'true' : 'false'}>
      <div class="agent-browse-head">
        <span class="mono agent-browse-dir" id="agent-browse-dir">${listing ? listing.dir : '…'}</span>
        <span class="spacer"></span>
        ${!!listing && !!listing.parent && listing.parent !== listing.dir && html`
          <button type="button" class="btn btn-sm" id="agent-browse-up" disabled=${busy} onClick=${() => open(listing.parent)}>Up</button>`}
        ${!!error && html`
          <button type="button" class="btn btn-sm" id="agent-browse-home" disabled=${busy} onClick=${() => open('')}>Home directory</button>`}
        <button type="button" class="btn btn-sm" onClick=${onClose}>Close</button>
      </div>
      ${error && html`<p class="error-note" role="alert">${error}</p>`}
      ${!!listing && html`
        <ul class="agent-browse-list" aria-label="Directories">
          ${entries.length === 0 && html`<li class="muted">Nothing in this directory.</li>`}
          ${entries.map((e) => html`
            <li key=${e.name}>
              ${e.dir
                ? html`<button type="button" class="link-button agent-browse-entry" disabled=${busy}
                    onClick=${() => open(listing.dir.replace(/\/+$/, '') + '/' + e.name)}>${e.name}/</button>`
                : html`<span class="muted">${e.name}</span>`}
            </li>`)}
        </ul>
        <div class="agent-browse-foot">
          <button type="button" class="btn btn-primary btn-sm" id="agent-browse-use" onClick=${() => onChoose(listing.dir)}>Use this directory</button>
        </div>`}
    </div>`;
}

/**
 * KindChoice is the new-chat screen's Chat · Agent choice. value is null
 * for a chat, else {profile, dir, mode}; onChange gets the next value.
 */
export function KindChoice({ value, onChange }) {
  const can = useCan('agent.use');
  const [avail, setAvail] = useState(null); // {enabled, profiles}
  const [browsing, setBrowsing] = useState(false);
  useEffect(() => {
    if (!can) return undefined;
    let live = true;
    Promise.all([call('Agent.Settings'), call('Agent.Profiles')]).then(
      ([s, p]) => { if (live) setAvail({ enabled: !!(s && s.enabled), profiles: Array.isArray(p) ? p : [] }); },
      () => { if (live) setAvail({ enabled: false, profiles: [] }); },
    );
    return () => { live = false; };
  }, [can]);
  if (!can || !avail || !avail.enabled) return null;
  const agent = !!value;
  const profiles = avail.profiles;
  const set = (patch) => onChange({ ...value, ...patch });
  const chooseAgent = () => onChange({ profile: profiles.length ? profiles[0].id : 0, dir: '', mode: 'manual' });
  return html`
    <section class="agent-new" aria-label="Kind of chat">
      <div class="segmented" role="radiogroup" aria-label="Kind of chat">
        <label class=${'segment' + (!agent ? ' is-on' : '')}><input type="radio" name="chat-kind" id="chat-kind-chat" checked=${!agent}
          onChange=${() => onChange(null)} /><span>Chat</span></label>
        <label class=${'segment' + (agent ? ' is-on' : '')}><input type="radio" name="chat-kind" id="chat-kind-agent" checked=${agent}
          onChange=${chooseAgent} /><span>Agent</span></label>
      </div>
      ${!!agent && profiles.length === 0 && html`
        <p class="agent-new-empty">No SSH connections yet. <a href=${hrefs.settings('ssh', 'new')} id="agent-add-connection">Add one in Settings → SSH connections</a>.</p>`}
      ${!!agent && profiles.length > 0 && html`
        <div class="agent-new-fields">
          <div class="field">
            <label class="field-label" for="agent-profile">SSH connection</label>
            <select class="select" id="agent-profile" value=${String(value.profile)}
              onChange=${(e) => { setBrowsing(false); set({ profile: Number(e.currentTarget.value), dir: '' }); }}>
              ${profiles.map((p) => html`<option key=${p.id} value=${String(p.id)} selected=${p.id === value.profile}>${p.name} (${p.username}@${p.host})</option>`)}
            </select>
          </div>
          <div class="field grow">
            <label class="field-label" for="agent-dir">Project directory</label>
            <div class="inline-row">
              <input class="input mono" id="agent-dir" value=${value.dir} placeholder="/home/you/project" spellcheck="false" autocapitalize="off"
                autocomplete="off" onInput=${(e) => set({ dir: e.currentTarget.value })} />
              <button type="button" class="btn" id="agent-browse-open" aria-expanded=${browsing ? 'true' : 'false'}
                onClick=${() => setBrowsing((b) => !b)}>Browse</button>
            </div>
          </div>
          <${ModeSelect} id="agent-new-mode" value=${value.mode} onChange=${(m) => set({ mode: m })} />
        </div>
        ${!!browsing && html`<${Browser} profile=${value.profile} start=${value.dir}
          onChoose=${(d) => { set({ dir: d }); setBrowsing(false); }} onClose=${() => setBrowsing(false)} />`}
        <p class="field-help">The connection and directory are fixed once the chat starts; the mode can change at any time.</p>`}
    </section>`;
}

/** AgentBar is an agent chat's line under the header: where it works, and its mode. */
export function AgentBar({ chat, onMode }) {
  const a = chat.agent || {};
  const where = a.profile == null ? 'Connection deleted · ' + (a.dir || '') : (a.host || '?') + ':' + (a.dir || '');
  const [busy, setBusy] = useState(false);
  // rev redraws the select from the row after every change, so a refused
  // one does not leave it showing a mode the chat is not in.
  const [rev, setRev] = useState(0);
  const change = async (mode) => {
    setBusy(true);
    await onMode(mode);
    setBusy(false);
    setRev((n) => n + 1);
  };
  return html`
    <div class="agent-bar">
      <p class="agent-where" title=${(a.profileName ? a.profileName + ': ' : '') + where}>
        <span class="visually-hidden">Works on </span><span class="mono agent-where-text" id="agent-where">${where}</span>
      </p>
      <${ModeSelect} key=${rev} id="agent-mode" value=${a.mode || 'manual'} onChange=${change} disabled=${busy} />
    </div>`;
}
