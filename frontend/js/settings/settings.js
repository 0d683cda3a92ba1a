// settings.js — the settings screens. Administrators see the instance's
// configuration (Connections, Models, Users, Groups, Permissions,
// Instance); everyone sees Account, Voice and About. The server enforces the same
// split: these tabs are hidden because a non-admin would only be refused.

import { html, useState, useEffect, useCallback } from '../../vendor/htm-preact/standalone.module.js';
import { ApiError, isDesktop } from '../core/transport.js';
import { hrefs, replaceRoute, SETTINGS_TABS, settingsTabs } from '../core/router.js';
import { ConnectionsSettings } from './connections.js';
import { ModelsSettings } from './models.js';
import { AccountSettings } from '../account/account.js';
import { useMe, refreshInfo } from '../core/store.js';
import { UsersSettings } from '../admin/users.js';
import { GroupsSettings } from '../admin/groups.js';
import { PermissionsSettings, InstanceSettings } from '../admin/instance.js';
import { formatBytes } from '../core/format.js';
import { ShortcutSettings } from '../shell/shortcuts.js';
import { DesktopSettings } from '../shell/quick.js';
import { SharingSettings } from '../account/sharing.js';
import { VoiceSettings } from './voice.js';
import { ToolsSettings } from '../tools/settings.js';
import { CustomToolsSettings } from '../tools/custom.js';
import { WebSettings } from '../admin/web.js';
import { PromptsSettings } from '../admin/prompts.js';
import { MCPSettings } from '../tools/mcp.js';
import { SSHSettings } from '../agent/connections.js';
import { AgentSettings } from '../agent/settings.js';
import { SuggestionsSettings } from '../chat/suggestions.js';

// VIEWS draw the tabs of the router's SETTINGS_TABS, by id.
export const VIEWS = {
  connections: ConnectionsSettings,
  models: ModelsSettings,
  users: UsersSettings,
  groups: GroupsSettings,
  permissions: PermissionsSettings,
  instance: InstanceSettings,
  tools: ToolsSettings,
  'custom-tools': CustomToolsSettings,
  web: WebSettings,
  mcp: MCPSettings,
  prompts: PromptsSettings,
  suggestions: SuggestionsSettings,
  agent: AgentSettings,
  ssh: SSHSettings,
  account: AccountSettings,
  voice: VoiceSettings,
  keyboard: ShortcutSettings,
  desktop: DesktopSettings,
  sharing: SharingSettings,
  about: InfoPanel,
};

export function SettingsView({ tab, sub, narrow }) {
  const { me, admin, ready } = useMe();
  const tabs = settingsTabs({ admin, desktop: isDesktop(), perms: me && me.permissions });
  // No tab, or one this reader may not open: the first one they may. A tab
  // behind a permission waits for Account.Me (the sign-in seed lists none).
  const waiting = !admin && !(me && Array.isArray(me.permissions)) && SETTINGS_TABS.some((t) => t.id === tab && t.perm);
  const shown = tabs.some((t) => t.id === tab) ? tab : ready && !waiting ? tabs[0].id : '';
  useEffect(() => {
    if (ready && tab && shown !== tab) replaceRoute(hrefs.settings(shown));
  }, [ready, tab, shown]);
  // On a phone the tab bar scrolls sideways: keep the open tab in view.
  useEffect(() => {
    const a = document.querySelector('.tabs .tab.is-active');
    if (a && typeof a.scrollIntoView === 'function') a.scrollIntoView({ block: 'nearest', inline: 'nearest' });
  }, [shown]);
  useEffect(() => {
    const t = SETTINGS_TABS.find((x) => x.id === shown);
    document.title = `${t ? t.label : 'Settings'} · Settings · LLeMbas`;
  }, [shown]);
  const View = VIEWS[shown];
  return html`
    <div class="page page-wide">
      <div class="page-head">
        <h1 class="page-title" tabindex="-1">Settings</h1>
      </div>
      <nav class="tabs" aria-label="Settings sections">
        ${tabs.map((t) => html`
          <a class=${'tab' + (t.id === shown ? ' is-active' : '')} href=${hrefs.settings(t.id)}
            aria-current=${t.id === shown ? 'page' : undefined}>${t.label}</a>`)}
      </nav>
      ${!shown && html`<p class="loading-line" role="status">Opening the doors…</p>`}
      ${!!View && html`<${View} sub=${sub} narrow=${narrow} />`}
    </div>`;
}

// ---------- About ----------

function formatMode(mode) {
  switch (mode) {
    case 'desktop': return 'Desktop app';
    case 'serve':
    case 'server':
      return 'Household server';
    default: return mode ? String(mode) : 'Unknown';
  }
}

const numberFormat = new Intl.NumberFormat('en');

function Row({ label, id, children, mono }) {
  return html`
    <dt>${label}</dt>
    <dd id=${id} class=${mono ? 'mono' : undefined}>${children}</dd>`;
}

function Counts({ counts }) {
  const rows = counts && typeof counts === 'object' ? Object.entries(counts) : [];
  if (rows.length === 0) return html`<span class="muted">No tables reported</span>`;
  rows.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return html`
    <table class="table" id="info-counts">
      <caption class="visually-hidden">Rows per table</caption>
      <thead><tr><th scope="col">Table</th><th scope="col" class="num">Rows</th></tr></thead>
      <tbody>
        ${rows.map(([table, n]) => html`
          <tr key=${table}>
            <td class="mono">${table}</td>
            <td class="num">${typeof n === 'number' ? numberFormat.format(n) : String(n)}</td>
          </tr>`)}
      </tbody>
    </table>`;
}

function BuildTags({ tags }) {
  if (!Array.isArray(tags) || tags.length === 0) return html`<span class="muted">none</span>`;
  return html`<ul class="chips" aria-label="Build tags">${tags.map((t) => html`<li class="chip" key=${t}>${String(t)}</li>`)}</ul>`;
}

function InfoCard({ info }) {
  const text = (v) => (v === undefined || v === null || v === '' ? html`<span class="muted">unknown</span>` : String(v));
  return html`
    <section id="info" class="card" aria-labelledby="info-title">
      <header class="card-header">
        <div>
          <h2 id="info-title" class="card-title">About this instance</h2>
          ${info.instanceName ? html`<p class="card-subtitle">${String(info.instanceName)}</p>` : null}
        </div>
      </header>
      <div class="card-body">
        <dl class="kv">
          <${Row} label="Version" id="info-version" mono>${text(info.version)}<//>
          <${Row} label="Mode" id="info-mode">${formatMode(info.mode)}<//>
          <${Row} label="Data directory" id="info-datadir" mono>${text(info.dataDir)}<//>
          <${Row} label="Database" id="info-dbpath" mono>${text(info.dbPath)}<//>
          <${Row} label="Database size" id="info-dbsize">${formatBytes(info.dbBytes)}<//>
          <${Row} label="Encryption key" id="info-keysource">${text(info.keySource)}<//>
          ${info.trayStatus ? html`<${Row} label="Tray" id="info-tray">${String(info.trayStatus)}<//>` : null}
          <${Row} label="Build tags" id="info-buildtags"><${BuildTags} tags=${info.buildTags} /><//>
          <${Row} label="Row counts" id="info-rows"><${Counts} counts=${info.counts} /><//>
        </dl>
      </div>
    </section>`;
}

function InfoError({ error, onRetry }) {
  return html`
    <section id="info" class="card error-card" role="alert" aria-labelledby="info-error-title">
      <header class="card-header">
        <h2 id="info-error-title" class="card-title">Could not load details about this instance</h2>
      </header>
      <div class="card-body">
        <p class="error-message">${error.message}</p>
        <p class="error-kind">Error kind: <code>${error.kind}</code></p>
      </div>
      <div class="card-actions">
        <button type="button" class="btn btn-primary" onClick=${onRetry}>Retry</button>
      </div>
    </section>`;
}

export function InfoPanel() {
  const [state, setState] = useState({ status: 'loading' });
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    let live = true;
    setState({ status: 'loading' });
    refreshInfo().then(
      (info) => { if (live) setState({ status: 'ready', info: info || {} }); },
      (err) => {
        if (!live) return;
        const e = err instanceof ApiError ? err : new ApiError('internal', err && err.message);
        setState({ status: 'error', error: e });
      },
    );
    return () => { live = false; };
  }, [attempt]);

  const retry = useCallback(() => setAttempt((n) => n + 1), []);

  if (state.status === 'loading') {
    return html`<p class="loading-line" role="status" id="info-loading">Asking the lore-masters about this instance…</p>`;
  }
  if (state.status === 'error') return html`<${InfoError} error=${state.error} onRetry=${retry} />`;
  return html`<${InfoCard} info=${state.info} />`;
}
