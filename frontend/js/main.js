// main.js — boots the app shell: global safety listeners, the sidebar, the
// theme switch and the "About this instance" card.
//
// All text from the API is rendered as text children, which Preact escapes;
// nothing here writes innerHTML.

import { html, render, useState, useEffect, useCallback } from '../vendor/htm-preact/standalone.module.js';
import { call, on, openExternal, ApiError } from './transport.js';

const THEMES = [
  { value: 'moria', label: 'Moria (dark)' },
  { value: 'shire', label: 'Shire (light)' },
];
const THEME_KEY = 'lembas.theme';
const NARROW = '(max-width: 45em)'; // keep in step with app.css

// ---------- Global listeners ----------

// A file dropped anywhere but a drop zone must never navigate the webview
// away (in Wails v2.9.2 it would load file://). Drop zones handle the event
// themselves before it reaches the document.
function guardDrops() {
  document.addEventListener('dragover', (e) => {
    if (!e.defaultPrevented && e.dataTransfer) e.dataTransfer.dropEffect = 'none';
    e.preventDefault();
  });
  document.addEventListener('drop', (e) => e.preventDefault());
}

// Links that leave the app's origin open outside it (system browser on the
// desktop, a new tab otherwise); the window itself never navigates away.
// Schemes other than http, https and mailto are dropped by openExternal.
function guardLinks() {
  const handle = (e) => {
    if (e.type === 'auxclick' && e.button !== 1) return;
    const target = e.target instanceof Element ? e.target : null;
    const a = target && target.closest('a[href], area[href]');
    if (!a) return;
    let url;
    try {
      url = new URL(a.getAttribute('href'), document.baseURI);
    } catch {
      e.preventDefault();
      return;
    }
    // Compare scheme and host rather than .origin: for wails:// URLs some
    // engines report the opaque origin "null", which would match any other
    // opaque URL.
    if (url.protocol === location.protocol && url.host === location.host) return;
    e.preventDefault();
    openExternal(url.href).catch((err) => console.warn('lembas: could not open link:', err.message));
  };
  document.addEventListener('click', handle, true);
  document.addEventListener('auxclick', handle, true);
}

// ---------- Theme ----------

function currentTheme() {
  const t = document.documentElement.dataset.theme;
  return t === 'shire' ? 'shire' : 'moria';
}

function applyTheme(theme) {
  document.documentElement.dataset.theme = theme;
  try {
    localStorage.setItem(THEME_KEY, theme);
  } catch {
    // Storage may be unavailable; the server-side preference still holds.
  }
}

function isTheme(t) {
  return THEMES.some((x) => x.value === t);
}

// ---------- Formatting ----------

const numberFormat = new Intl.NumberFormat('en');

function formatBytes(n) {
  if (typeof n !== 'number' || !Number.isFinite(n) || n < 0) return 'unknown';
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  if (i === 0) return `${numberFormat.format(n)} ${n === 1 ? 'byte' : 'bytes'}`;
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]} (${numberFormat.format(n)} bytes)`;
}

function formatMode(mode) {
  switch (mode) {
    case 'desktop': return 'Desktop app';
    case 'serve':
    case 'server':
      return 'Household server';
    default: return mode ? String(mode) : 'Unknown';
  }
}

// ---------- Components ----------

function Mark({ className }) {
  return html`<img class=${className} src="img/mark.svg" alt="" width="64" height="64" />`;
}

function Brand() {
  return html`
    <a class="brand" href="./" aria-label="LLeMbas home">
      <${Mark} className="brand-mark" />
      <span class="wordmark"><span class="wordmark-lm">LLeM</span>bas</span>
    </a>`;
}

function ThemeControl({ theme, onChange }) {
  return html`
    <div class="field">
      <label class="field-label" for="theme-select">Theme</label>
      <select id="theme-select" class="select" value=${theme}
        onChange=${(e) => onChange(e.currentTarget.value)}>
        ${THEMES.map((t) => html`<option value=${t.value} selected=${t.value === theme}>${t.label}</option>`)}
      </select>
    </div>`;
}

function Sidebar({ theme, onTheme }) {
  return html`
    <nav id="sidebar" class="sidebar" aria-label="Chats and settings">
      <${Brand} />
      <section class="sidebar-section" aria-labelledby="chats-heading">
        <h2 id="chats-heading" class="sidebar-heading">Chats</h2>
        <div class="empty-state">
          <p class="empty-state-title">No chats yet.</p>
          <p>The road goes ever on and on — but it has not started here. Your chats will be listed here.</p>
        </div>
      </section>
      <div class="sidebar-footer">
        <${ThemeControl} theme=${theme} onChange=${onTheme} />
      </div>
    </nav>`;
}

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

function InfoPanel() {
  const [state, setState] = useState({ status: 'loading' });
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    let live = true;
    setState({ status: 'loading' });
    call('App.Info').then(
      (info) => {
        if (!live) return;
        setState({ status: 'ready', info: info || {} });
        if (info && info.selfTest === true) {
          import('./selftest.js')
            .then((m) => m.run(info))
            .catch((err) => console.error('lembas: self-test failed to run:', err));
        }
      },
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

function useNarrow() {
  const [narrow, setNarrow] = useState(() => window.matchMedia(NARROW).matches);
  useEffect(() => {
    const mq = window.matchMedia(NARROW);
    const update = () => setNarrow(mq.matches);
    mq.addEventListener('change', update);
    return () => mq.removeEventListener('change', update);
  }, []);
  return narrow;
}

function App() {
  const [theme, setTheme] = useState(currentTheme);
  const [sidebarOpen, setSidebarOpen] = useState(false);
  const narrow = useNarrow();

  // The server-side preference wins over this browser's, when it has one.
  useEffect(() => {
    call('Prefs.Get').then(
      (prefs) => {
        const t = prefs && prefs.theme;
        if (t && isTheme(t) && t !== currentTheme()) {
          applyTheme(t);
          setTheme(t);
        }
      },
      (err) => console.warn('lembas: could not read preferences:', err.message),
    );
  }, []);

  // Prefs.Set tells the caller's other windows; follow their theme changes.
  useEffect(() => on('prefs', (prefs) => {
    const t = prefs && prefs.theme;
    if (t && isTheme(t) && t !== currentTheme()) {
      applyTheme(t);
      setTheme(t);
    }
  }), []);

  useEffect(() => {
    if (!narrow) setSidebarOpen(false);
  }, [narrow]);

  useEffect(() => {
    if (!sidebarOpen) return undefined;
    const onKey = (e) => {
      if (e.key === 'Escape') {
        setSidebarOpen(false);
        const toggle = document.getElementById('sidebar-toggle');
        if (toggle) toggle.focus();
      }
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [sidebarOpen]);

  const changeTheme = useCallback((t) => {
    if (!isTheme(t)) return;
    applyTheme(t);
    setTheme(t);
    call('Prefs.Set', { theme: t }).catch((err) => console.warn('lembas: could not save the theme:', err.message));
  }, []);

  const open = narrow && sidebarOpen;
  return html`
    <div class=${'shell' + (open ? ' is-sidebar-open' : '')}>
      <header class="topbar">
        <button type="button" id="sidebar-toggle" class="btn btn-ghost"
          aria-controls="sidebar" aria-expanded=${open ? 'true' : 'false'}
          onClick=${() => setSidebarOpen((v) => !v)}>
          <svg class="icon" viewBox="0 0 24 24" aria-hidden="true" focusable="false">
            <path d="M4 7h16M4 12h16M4 17h16" />
          </svg>
          <span>${open ? 'Hide sidebar' : 'Show sidebar'}</span>
        </button>
        <${Brand} />
      </header>
      <${Sidebar} theme=${theme} onTheme=${changeTheme} />
      <div class="scrim" aria-hidden="true" onClick=${() => setSidebarOpen(false)}></div>
      <main id="main" class="main">
        <div class="main-inner">
          <h1 class="page-title">Welcome</h1>
          <${InfoPanel} />
        </div>
      </main>
    </div>`;
}

// ---------- Boot ----------

guardDrops();
guardLinks();

const root = document.getElementById('app');
root.textContent = '';
render(html`<${App} />`, root);
