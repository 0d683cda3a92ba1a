// quick.js — the desktop window's two modes. Quick chat is the one window
// made compact and always on top (Wails v2 has one window per process): the
// Go side resizes it and sends a `window` event; this module follows it,
// opens the quick chat (the last one, or a new chat with the default model),
// hides it on Escape and carries the chat over to the full window. It also
// holds the desktop preferences (quick chat, close to tray) for Settings.
//
// In a browser there is no Desktop facade: the window is always "full".

import { html, useState, useEffect } from '../../vendor/htm-preact/standalone.module.js';
import { call, on, isDesktop } from '../core/transport.js';
import { navigate, hrefs } from '../core/router.js';
import { Icon, toastError } from '../core/ui.js';
import { getState, setWindow, useWindow, loadPrefs, usePrefs, savePrefs, loadInfo, refreshInfo } from '../core/store.js';

// The window's state is the store's (getState().window, useWindow).
let handledSeq = 0;
let known = Promise.resolve(getState().window);
let selfTest = false;
let aboutTray = '';
let infoReady = Promise.resolve();

/** windowMode is "quick" or "full". */
export function windowMode() {
  return getState().window.mode;
}

/** whenWindowKnown resolves once the window's mode has been asked for. */
export function whenWindowKnown() {
  return known;
}

// defaultModel is the model a new quick chat starts with: the reader's
// default, else the instance's, else the first in the picker.
async function defaultModel() {
  try {
    const p = await loadPrefs();
    const id = (p && (p.defaultModel || p.instanceDefaultModel)) || 0;
    if (id) return id;
  } catch {
    // fall through to the picker
  }
  try {
    const models = await call('Models.Picker');
    return models && models.length ? models[0].id : 0;
  } catch {
    return 0;
  }
}

/** newQuickChat opens a new chat with the default model. */
export async function newQuickChat() {
  const modelId = await defaultModel();
  navigate(hrefs.newChat, modelId ? { modelId } : undefined);
}

// openQuick shows the chat that a (re)opened quick chat starts on.
function openQuick(s) {
  if (s.mode !== 'quick' || !s.seq || s.seq === handledSeq) return;
  handledSeq = s.seq;
  if (s.chatId) navigate(hrefs.chat(s.chatId));
  else newQuickChat();
}

function report(step, detail) {
  if (selfTest) call('Diag.Report', step, true, String(detail)).catch(() => {});
}

// reportMode tells the self-test, once the shell has re-rendered, which
// mode the window shows.
function reportMode() {
  // The About card's tray line, as App.Info has it now.
  infoReady.then(() => selfTest && refreshInfo()).then((info) => {
    if (info) aboutTray = info.trayStatus || '';
    reportModeNow();
  }, () => {});
}

function reportModeNow() {
  if (!selfTest) return;
  const want = getState().window.mode;
  let tries = 0;
  const check = () => {
    const shell = document.querySelector('.shell');
    const isQuick = !!shell && shell.classList.contains('is-quick');
    if ((want === 'quick') === isQuick && shell) {
      const win = getState().window;
      report('window', `${want} ${location.hash || '#/'} tray=${win.tray} (${win.trayStatus}) about=${aboutTray}`);
    } else if (tries++ < 600) setTimeout(check, 50); // 30 s: a loaded machine renders slowly
  };
  setTimeout(check, 50);
}

// reportShown tells the Go side (and so the start-up figure) when the first
// screen is drawn: the last chat's messages when there is one, else the
// composer.
async function reportShown() {
  let last = 0;
  try {
    const p = await loadPrefs();
    last = (p && p.lastChat) || 0;
  } catch {
    // no last chat then
  }
  const ready = () => {
    if (windowMode() !== 'quick' && last) return location.hash === hrefs.chat(last) && !!document.querySelector('.transcript .msg');
    return !!document.querySelector('#composer-input');
  };
  const started = Date.now();
  const tick = () => {
    if (ready() || Date.now() - started > 30000) {
      requestAnimationFrame(() => requestAnimationFrame(() => {
        call('Desktop.Shown', location.hash || '#/').catch(() => {});
      }));
      return;
    }
    setTimeout(tick, 10);
  };
  tick();
}

function onEscape(e) {
  if (e.key !== 'Escape' || e.defaultPrevented || e.isComposing || e.shiftKey || e.ctrlKey || e.altKey || e.metaKey) return;
  if (windowMode() !== 'quick') return;
  // An open dialog, menu or popover takes Escape first.
  if (document.querySelector('dialog[open], .popover, .menu')) return;
  e.preventDefault();
  call('Desktop.Hide').catch((err) => toastError('Could not hide quick chat', err));
}

/** initWindow asks for the window's state and follows its changes. */
export function initWindow() {
  if (!isDesktop()) return;
  infoReady = loadInfo().then((info) => {
    selfTest = !!(info && info.selfTest);
    aboutTray = (info && info.trayStatus) || '';
  }, () => {});
  known = call('Desktop.State').then(
    (s) => {
      setWindow(s || {});
      const win = getState().window;
      openQuick(win);
      reportMode();
      if (win.benchReplies > 0) {
        import('../dev/benchdrive.js').then((m) => m.run(win.benchReplies)).catch((err) => console.error('lembas: bench failed:', err));
      }
      return win;
    },
    (err) => {
      console.warn('lembas: window state unavailable:', err.message);
      return getState().window;
    },
  );
  on('window', (s) => {
    if (!s || typeof s.mode !== 'string') return;
    setWindow(s);
    if (s.newChat) navigate(hrefs.newChat);
    openQuick(getState().window);
    reportMode();
  });
  // The tray's "Share on this network" needs a password the first time:
  // it opens the window here to ask for one.
  on('sharing', (s) => {
    if (s && s.open) navigate(hrefs.settings('sharing'));
  });
  document.addEventListener('keydown', onEscape);
  reportShown();
}

/** openQuickChat is the in-app quick chat shortcut. */
export function openQuickChat() {
  if (!isDesktop()) return false;
  call('Desktop.Quick').catch((err) => toastError('Could not open quick chat', err));
  return true;
}

/**
 * QuickBar replaces the sidebar and top bar in quick chat: a new quick chat,
 * "Open in full window" (the chat comes along) and Hide.
 */
export function QuickBar({ route }) {
  // Remember the quick chat, so that it can be continued next time.
  useEffect(() => {
    if (route.name !== 'chat') return;
    call('Prefs.Set', { quickChat: route.id }).catch(() => {});
  }, [route.name, route.id]);
  const full = () => call('Desktop.Full').catch((err) => toastError('Could not open the full window', err));
  const hide = () => call('Desktop.Hide').catch((err) => toastError('Could not hide quick chat', err));
  return html`
    <header class="quickbar">
      <h1 class="quickbar-title">Quick chat</h1>
      <button type="button" class="btn btn-ghost btn-sm" id="quick-new" onClick=${newQuickChat}>
        <${Icon} name="plus" /><span>New</span>
      </button>
      <button type="button" class="btn btn-sm" id="quick-full" onClick=${full}>Open in full window</button>
      <button type="button" class="btn btn-ghost btn-icon btn-sm" id="quick-hide" aria-label="Hide quick chat (Escape)"
        title="Hide (Escape)" onClick=${hide}><${Icon} name="close" /></button>
    </header>`;
}

/** DesktopSettings is the Desktop tab: quick chat and the tray. */
export function DesktopSettings() {
  const w = useWindow();
  const { prefs, error: loadError } = usePrefs();
  const [saveError, setError] = useState(null);
  const error = saveError || loadError;
  const save = async (patch) => {
    setError(null);
    try {
      await savePrefs(patch);
    } catch (err) {
      setError(err);
    }
  };
  if (!prefs) return error ? html`<p class="error-note" role="alert">${error.message}</p>` : html`<p class="loading-line" role="status">Lighting the lamps…</p>`;
  return html`
    <section class="card" aria-labelledby="quick-title">
      <header class="card-header"><h2 id="quick-title" class="card-title">Quick chat</h2></header>
      <div class="card-body settings-stack">
        <p class="field-help">A small window that stays on top. Open it from the tray, with the Quick chat
          shortcut, or by running <code>lembas --quick</code> (bind that to a key in your desktop's settings).
          Escape hides it; "Open in full window" takes the chat along.</p>
        <fieldset class="radio-group">
          <legend class="field-label">When quick chat opens</legend>
          <label class="radio"><input type="radio" name="quick-continue" id="quick-continue-no" checked=${!prefs.quickContinue}
            onChange=${() => save({ quickContinue: false })} /> Start a new chat</label>
          <label class="radio"><input type="radio" name="quick-continue" id="quick-continue-yes" checked=${!!prefs.quickContinue}
            onChange=${() => save({ quickContinue: true })} /> Continue the last quick chat</label>
        </fieldset>
      </div>
    </section>
    <section class="card" aria-labelledby="notify-title">
      <header class="card-header"><h2 id="notify-title" class="card-title">Notifications</h2></header>
      <div class="card-body settings-stack">
        <label class="switch-row">
          <span class="switch">
            <input type="checkbox" id="notify-replies" checked=${prefs.notifyReplies !== false}
              onChange=${(e) => save({ notifyReplies: e.currentTarget.checked })} />
            <span class="visually-hidden">Notify when a reply finishes</span>
            <span class="switch-track" aria-hidden="true"></span>
          </span>
          <span>Notify when a reply finishes while the window is hidden or another chat is open.</span>
        </label>
      </div>
    </section>
    <section class="card" aria-labelledby="tray-title">
      <header class="card-header"><h2 id="tray-title" class="card-title">Tray</h2></header>
      <div class="card-body settings-stack">
        ${w.tray ? html`
          <label class="switch-row">
            <span class="switch">
              <input type="checkbox" id="close-to-tray" checked=${!!prefs.closeToTray}
                onChange=${(e) => save({ closeToTray: e.currentTarget.checked })} />
              <span class="visually-hidden">Close to tray</span>
              <span class="switch-track" aria-hidden="true"></span>
            </span>
            <span>Close to tray: closing the window hides it; Quit in the tray menu ends LLeMbas.</span>
          </label>` : html`
          <p id="tray-none">No tray icon: ${w.trayStatus || 'unknown'}. Closing the window quits LLeMbas.</p>`}
      </div>
    </section>
    ${error && html`<p class="error-note" role="alert">${error.message}</p>`}`;
}
