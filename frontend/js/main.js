// main.js — the app shell: global safety listeners, the hash router, the
// sidebar and the screen for the current route, the one subscription to
// `gen`, `chat` and `resync` events, unread and notifications (the store
// follows `prefs`).
//
// Text from the API is rendered as text children, which Preact escapes.
// The only HTML from the server goes through html.js.

import { html, render, useState, useEffect, useCallback } from '../vendor/htm-preact/standalone.module.js';
import { call, on, openExternal, isDesktop, connection, onConnection } from './core/transport.js';
import { useRoute, navigate, hrefs, replaceRoute } from './core/router.js';
import {
  getState, subscribe, refreshAll, refreshChats, markStreaming, chatSummary,
  startSession, loadPrefs, savePrefs, loadInfo, useWindow,
} from './core/store.js';
import { routeFrame } from './chat/frames.js';
import { notifyReply } from './shell/notify.js';
import { Sidebar } from './shell/sidebar.js';
import { ChatView } from './chat/chat.js';
import { TrashView } from './chat/trash.js';
import { SettingsView } from './settings/settings.js';
import { LibraryView } from './library/library.js';
import { DialogHost, ToastHost, toast } from './core/ui.js';
import { bootBrowser, registerServiceWorker } from './account/login.js';
import { AccountChip } from './account/account.js';
import { initWindow, whenWindowKnown, QuickBar } from './shell/quick.js';
import { initShortcuts, ShortcutsHost } from './shell/shortcuts.js';
import { releaseStale } from './core/vnodes.js';

const THEMES = [
  { value: 'moria', label: 'Moria (dark)' },
  { value: 'shire', label: 'Shire (light)' },
];
const THEME_KEY = 'lembas.theme';
const NARROW = '(max-width: 45em)'; // keep in step with the @media rules in css/

// ---------- Global listeners ----------

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

// ---------- Events ----------

// Unread: the server marks a chat unread when its reply ends; the chat the
// reader is looking at (page visible) is marked read straight away.
let marking = 0;
function markOpenChatRead(again = true) {
  const { openChatId } = getState();
  if (!openChatId || document.hidden || marking === openChatId) return;
  const s = chatSummary(openChatId);
  if (!s || !s.unread) return;
  marking = openChatId;
  let marked = false;
  call('Chats.MarkRead', openChatId).then(
    () => { marked = true; return refreshChats(); },
    (err) => console.warn('lembas: could not mark the chat read:', err.message),
  ).finally(() => {
    marking = 0;
    // A reply that finished while this call was out marked the chat
    // unread again, and the refresh that showed it was skipped above:
    // look once more.
    if (marked && again) markOpenChatRead(false);
  });
}

// markSeen marks a chat read whose reply the reader just watched finish.
// The server marked it unread with the reply's final row, before it sent
// the final frame (generation.finish), so this call lands after the mark
// whatever the reader does next. Waiting for the sidebar to show the mark
// (markOpenChatRead) lost it when the reader left the chat within that
// moment.
// Its refresh of the list is the reply's one: the `chat` event saying the
// reply made the chat unread is then not refreshed for again (seen).
const seen = new Set();
function markSeen(chatId) {
  seen.add(chatId);
  call('Chats.MarkRead', chatId).then(
    () => refreshChats(),
    (err) => console.warn('lembas: could not mark the chat read:', err.message),
  );
}

function wireEvents() {
  on('gen', (f) => {
    if (!f || typeof f.chatId !== 'number') return;
    routeFrame(f);
    const streaming = f.status === 'streaming';
    markStreaming(f.chatId, streaming);
    if (!streaming) {
      const open = getState().openChatId === f.chatId;
      if (open && !document.hidden) {
        markSeen(f.chatId);
      } else {
        const s = chatSummary(f.chatId);
        notifyReply({ chatId: f.chatId, title: s ? s.title : '', status: f.status }, (id) => navigate(hrefs.chat(id)));
        // The server sets unread and emits `chat`; refresh anyway, cheaply.
        setTimeout(refreshChats, 300);
      }
    }
  });
  let chatTimer = 0;
  on('chat', (ev) => {
    // The unread mark of a reply the reader watched finish: markSeen's
    // refresh shows the chat as it is after the mark and the read.
    if (ev && ev.change === 'unread' && seen.delete(ev.chatId)) return;
    clearTimeout(chatTimer);
    chatTimer = setTimeout(refreshChats, 60);
    if (ev && (ev.change === 'trashed' || ev.change === 'deleted') && getState().openChatId === ev.chatId) {
      navigate(hrefs.newChat);
    }
  });
  // Files dropped onto the desktop window go into the message being
  // written (composer.js); with no composer on screen, say where to drop.
  on('files-dropped', () => {
    if (!document.querySelector('form.composer')) toast('Dropped files go into a message: open a chat and drop them there.');
  });
  on('resync', () => {
    refreshAll();
    window.dispatchEvent(new Event('lembas:resync'));
  });
  subscribe(markOpenChatRead);
  document.addEventListener('visibilitychange', markOpenChatRead);
}

// ---------- Components ----------

function Mark({ className }) {
  return html`<img class=${className} src="img/mark.svg" alt="" width="64" height="64" />`;
}

function Brand() {
  return html`
    <a class="brand" href="#/" aria-label="LLeMbas, new chat">
      <${Mark} className="brand-mark" />
      <span class="wordmark"><span class="wordmark-lm">LLeM</span>bas</span>
    </a>`;
}

// SkipLink is the first thing Tab reaches: it moves the focus past the
// sidebar, to the message box on a chat and to the page's title elsewhere.
// A button, since a link's href would be a route.
function SkipLink({ chat }) {
  const skip = () => {
    const el = (chat && document.getElementById('composer-input')) || document.querySelector('.main .page-title') || document.getElementById('main');
    if (!el) return;
    if (!el.hasAttribute('tabindex') && !/^(INPUT|TEXTAREA|SELECT|BUTTON|A)$/.test(el.tagName)) el.setAttribute('tabindex', '-1');
    el.focus();
  };
  return html`
    <button type="button" class="btn btn-primary skip-link" onClick=${skip}>
      ${chat ? 'Skip to message box' : 'Skip to main content'}
    </button>`;
}

function ThemeControl({ theme, onChange }) {
  return html`
    <div class="field theme-field">
      <label class="field-label" for="theme-select">Theme</label>
      <select id="theme-select" class="select" value=${theme}
        onChange=${(e) => onChange(e.currentTarget.value)}>
        ${THEMES.map((t) => html`<option value=${t.value} selected=${t.value === theme}>${t.label}</option>`)}
      </select>
    </div>`;
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

// A stream that stays down longer than this is said to be lost; a blip (a
// reconnect after the server dropped a slow follower) shows nothing.
const LOST_AFTER_MS = 2000;

// ConnectionStatus says, above the screen and pushing it down rather than
// covering any of it, when the server cannot be reached. The region is
// always there, so that screen readers announce what appears in it.
function ConnectionStatus() {
  const [isLost, setLost] = useState(false);
  useEffect(() => {
    let timer = 0;
    const update = (s) => {
      clearTimeout(timer);
      if (s === 'open') setLost(false);
      else timer = setTimeout(() => setLost(true), LOST_AFTER_MS);
    };
    update(connection());
    const off = onConnection(update);
    return () => { off(); clearTimeout(timer); };
  }, []);
  return html`
    <div class=${'conn-status' + (isLost ? ' is-lost' : '')} role="status" aria-live="polite">
      ${isLost && html`<strong>Can't reach the server — retrying…</strong>
        <span> Replies being written go on there; this page catches up when it is back.</span>`}
    </div>`;
}

function Screen({ route, narrow }) {
  switch (route.name) {
    case 'chat':
      return html`<${ChatView} key=${'chat-' + route.id} chatId=${route.id} narrow=${narrow} />`;
    case 'trash':
      return html`<${TrashView} />`;
    case 'settings':
      return html`<${SettingsView} tab=${route.tab} sub=${route.sub} narrow=${narrow} />`;
    case 'library':
      return html`<${LibraryView} tab=${route.tab} sub=${route.sub} narrow=${narrow} />`;
    default:
      return html`<${ChatView} key=${'new-' + route.n} chatId=${null} narrow=${narrow} />`;
  }
}

// The route the app was opened with: only an app opened without one goes
// back to the chat that was open last.
const START_HASH = location.hash;
const isBlank = (h) => h === '' || h === '#' || h === '#/';

function reopenLastChat(id) {
  if (!id || !isBlank(START_HASH)) return;
  call('Chats.Get', id).then(
    () => {
      if (isBlank(location.hash)) replaceRoute(hrefs.chat(id));
    },
    () => {}, // trashed or gone: stay on a new chat
  );
}

// rememberChat stores the open chat as the one to reopen next time.
let rememberTimer = 0;
function rememberChat(id) {
  clearTimeout(rememberTimer);
  rememberTimer = setTimeout(() => {
    call('Prefs.Set', { lastChat: id || 0 }).catch(() => {});
  }, 1000);
}

function App() {
  const [theme, setTheme] = useState(currentTheme);
  const [sidebarOpen, setSidebarOpen] = useState(false);
  const [sidebarHidden, setSidebarHidden] = useState(false);
  const quick = useWindow().mode === 'quick';
  const narrow = useNarrow();
  const route = useRoute();

  // The server-side preference wins over this browser's, when it has one;
  // and Prefs.Set tells the caller's other windows (the store follows
  // `prefs`), so follow their theme changes.
  useEffect(() => {
    let seen = null;
    const follow = () => {
      const prefs = getState().prefs;
      if (!prefs || prefs === seen) return;
      seen = prefs;
      const t = prefs.theme;
      if (t && isTheme(t) && t !== currentTheme()) {
        applyTheme(t);
        setTheme(t);
      }
    };
    loadPrefs().then(
      (prefs) => {
        follow();
        // Quick chat opens its own chat instead.
        whenWindowKnown().then((w) => w.mode !== 'quick' && reopenLastChat(prefs && prefs.lastChat));
      },
      (err) => console.warn('lembas: could not read preferences:', err.message),
    );
    return subscribe(follow);
  }, []);

  useEffect(() => {
    if (!narrow) setSidebarOpen(false);
  }, [narrow]);

  useEffect(() => {
    if (route.name === 'chat') rememberChat(route.id);
  }, [route.name, route.id]);

  // The screen just left must not stay reachable from the one drawn now
  // (vnodes.js says how it would).
  useEffect(() => {
    const t = setTimeout(() => releaseStale(root), 0);
    return () => clearTimeout(t);
  }, [route]);

  // A new screen closes the phone sidebar and moves focus to it.
  useEffect(() => {
    setSidebarOpen(false);
    if (route.name === 'settings' || route.name === 'trash' || route.name === 'library') {
      const h = document.querySelector('.main .page-title');
      if (h) h.focus({ preventScroll: true });
    }
  }, [route.name, route.id, route.tab]);

  useEffect(() => {
    if (!sidebarOpen) return undefined;
    const onKey = (e) => {
      if (e.key === 'Escape' && !e.defaultPrevented) {
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
    savePrefs({ theme: t }).catch((err) => console.warn('lembas: could not save the theme:', err.message));
  }, []);

  // The sidebar shortcuts (shortcuts.js): slide it in on a phone, fold it
  // away on a wide window.
  useEffect(() => {
    const onSidebar = (e) => {
      const show = e.detail === 'show';
      if (narrow) setSidebarOpen((v) => show || !v);
      else setSidebarHidden((v) => !show && !v);
    };
    window.addEventListener('lembas:sidebar', onSidebar);
    return () => window.removeEventListener('lembas:sidebar', onSidebar);
  }, [narrow]);

  const open = narrow && sidebarOpen;
  const full = route.name === 'chat' || route.name === 'new';
  return html`
    <div class=${'shell' + (open ? ' is-sidebar-open' : '') + (quick ? ' is-quick' : '') + (sidebarHidden && !narrow ? ' is-sidebar-hidden' : '')}>
      <${SkipLink} chat=${full} />
      ${quick && html`<${QuickBar} route=${route} />`}
      <header class="topbar">
        <button type="button" id="sidebar-toggle" class="btn btn-ghost"
          aria-controls="sidebar" aria-expanded=${open ? 'true' : 'false'}
          onClick=${() => setSidebarOpen((v) => !v)}>
          <svg class="icon" viewBox="0 0 24 24" aria-hidden="true" focusable="false">
            <path d="M4 7h16M4 12h16M4 17h16" />
          </svg>
          <span class="visually-hidden">${open ? 'Hide sidebar' : 'Show sidebar'}</span>
        </button>
        <${Brand} />
      </header>
      <${Sidebar} route=${route} brand=${html`<${Brand} />`}
        footer=${html`<${AccountChip} active=${route.name === 'settings' && route.tab === 'account'} />
          <${ThemeControl} theme=${theme} onChange=${changeTheme} />`} />
      <div class="scrim" aria-hidden="true" onClick=${() => setSidebarOpen(false)}></div>
      <main id="main" class=${'main' + (full ? ' main-chat' : '')}>
        <${ConnectionStatus} />
        <${Screen} route=${route} narrow=${narrow} />
      </main>
      <${ToastHost} />
      <${DialogHost} />
      <${ShortcutsHost} />
    </div>`;
}

// ---------- Boot ----------

guardLinks();
registerServiceWorker();

const root = document.getElementById('app');

// startApp mounts the app; in a browser only once someone is signed in
// (login.js shows the sign-in screen until then).
function startApp() {
  startSession();
  wireEvents();
  initWindow();
  initShortcuts();

  // Self-test mode (LEMBAS_SELFTEST=1, set by the tests) runs selftest.js,
  // which reads the instance details from the About screen.
  loadInfo().then((info) => {
    if (info && info.selfTest === true) {
      replaceRoute(hrefs.settings('about'));
      import('./dev/selftest.js')
        .then((m) => m.run(info))
        .catch((err) => console.error('lembas: self-test failed to run:', err));
    }
  }, () => {});

  // The lists are asked for before the first render, not from its
  // effects: they are then on their way while the shell draws (tens of
  // milliseconds of script on a busy machine), not after it.
  refreshAll();

  root.textContent = '';
  render(html`<${App} />`, root);
}

if (isDesktop()) startApp();
else bootBrowser(root, startApp);
