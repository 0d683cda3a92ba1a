// shortcuts.js — keyboard shortcuts: the actions and their default keys,
// the one document-wide key handler, the help dialog (? or Ctrl+/) and the
// Keyboard settings tab where they are rebound. Rebound keys are a per-user
// preference (Prefs.shortcuts holds only the changed ones); two actions on
// the same keys, or keys the system or typing needs, are refused with a
// message that says why.
//
// The actions are the commands with keys in chat/commands.js, the one
// table that the composer's slash commands and the help dialog read too:
// ids, labels and what they do are written there once.

import { html, useState, useEffect, useLayoutEffect, useRef } from '../../vendor/htm-preact/standalone.module.js';
import { isDesktop } from '../core/transport.js';
import { hrefs } from '../core/router.js';
import { trapTab } from '../core/ui.js';
import { getState, loadPrefs, savePrefs, subscribe } from '../core/store.js';
import { COMMANDS, runCommand, available as availableCommands } from '../chat/commands.js';

/** ACTIONS in the order the help dialog lists them: the table's commands with keys. */
export const ACTIONS = COMMANDS.filter((c) => c.keys);

// Keys that typing, editing or the browser need. Refused as shortcuts.
const RESERVED = {
  'Ctrl+C': 'copying', 'Ctrl+V': 'pasting', 'Ctrl+X': 'cutting', 'Ctrl+A': 'selecting all',
  'Ctrl+Z': 'undo', 'Ctrl+Y': 'redo', 'Ctrl+Shift+Z': 'redo', 'Ctrl+W': 'closing the window or tab',
  'Ctrl+T': 'a new browser tab', 'Ctrl+N': 'a new browser window', 'Ctrl+R': 'reloading', 'F5': 'reloading',
  'Ctrl+L': 'the address bar', 'Escape': 'closing menus and dialogs', 'Tab': 'moving between controls',
  'Shift+Tab': 'moving between controls', 'Enter': 'sending', 'Shift+Enter': 'a new line',
};

const MODIFIERS = new Set(['Control', 'Shift', 'Alt', 'Meta', 'AltGraph', 'CapsLock', 'Dead', 'Unidentified', 'Process', 'OS']);

/** comboOf turns a keydown into "Ctrl+Alt+Shift+Meta+Key" (modifiers in that order), or "". */
export function comboOf(e) {
  let key = e.key;
  if (!key || MODIFIERS.has(key)) return '';
  if (key.length === 1 && /[a-z]/i.test(key)) key = key.toUpperCase();
  else if (/^Key[A-Z]$/.test(e.code || '')) key = e.code.slice(3); // a non-Latin layout
  else if (/^Digit[0-9]$/.test(e.code || '')) key = e.code.slice(5); // Shift+1 is still 1
  else if (e.code === 'Slash') key = '/'; // Shift+/ is still /
  else if (key === ' ') key = 'Space';
  else if (key === '+') key = 'Plus';
  const mods = [e.ctrlKey && 'Ctrl', e.altKey && 'Alt', e.shiftKey && 'Shift', e.metaKey && 'Meta'].filter(Boolean);
  return mods.concat(key).join('+');
}

// ---------- Bindings ----------

let overrides = {};
const listeners = new Set();

function setOverrides(o) {
  overrides = o && typeof o === 'object' ? { ...o } : {};
  for (const fn of listeners) fn(overrides);
}

function available() {
  return ACTIONS.filter((a) => !a.desktop || isDesktop());
}

/** bindings returns action id → keys, defaults with the reader's changes. */
export function bindings(o = overrides) {
  const out = {};
  for (const a of available()) out[a.id] = o[a.id] || a.keys;
  return out;
}

function useOverrides() {
  const [o, setO] = useState(overrides);
  useEffect(() => {
    listeners.add(setO);
    setO(overrides);
    return () => listeners.delete(setO);
  }, []);
  return o;
}

/**
 * checkKeys says why keys cannot be given to action (a sentence), or ""
 * when they can.
 */
export function checkKeys(action, keys, o = overrides) {
  if (!keys) return 'Press a key together with Ctrl, Alt or Meta.';
  if (RESERVED[keys]) return `${keys} is needed for ${RESERVED[keys]}, so it cannot be a shortcut.`;
  const parts = keys.split('+');
  const key = parts[parts.length - 1];
  const strong = parts.some((p) => p === 'Ctrl' || p === 'Alt' || p === 'Meta');
  if (!strong && !/^F([1-9]|1[0-2])$/.test(key) && key !== 'Escape') {
    return `${keys} would fire while typing. Use Ctrl, Alt or Meta with a key (or a function key).`;
  }
  const current = bindings(o);
  for (const a of available()) {
    if (a.id !== action && current[a.id] === keys) {
      return `${keys} is already the shortcut for “${a.label}”. Choose other keys, or change that shortcut first.`;
    }
  }
  return '';
}

// ---------- Running actions ----------

/** runAction runs one action by id (the tests and the help dialog use it). */
export function runAction(id) {
  if (ACTIONS.some((a) => a.id === id)) runCommand(id);
}

let capturing = false;

function isEditable(t) {
  return t instanceof Element && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));
}

function onKey(e) {
  if (capturing || e.defaultPrevented || e.isComposing || e.repeat) return;
  const editable = isEditable(e.target);
  // "?" opens the list, but only where it is not being typed.
  if (!editable && e.key === '?' && !e.ctrlKey && !e.altKey && !e.metaKey) {
    e.preventDefault();
    runCommand('help');
    return;
  }
  const combo = comboOf(e);
  if (!combo) return;
  const current = bindings();
  const action = available().find((a) => current[a.id] === combo);
  if (!action) return;
  // In a text field only combinations that cannot be typed count.
  if (editable && !/(^|\+)(Ctrl|Alt|Meta)\+/.test(combo) && !combo.endsWith('Escape') && !/^F\d+$/.test(combo)) return;
  // With a dialog open, only the help shortcut (which toggles it) works.
  if (document.querySelector('dialog[open]') && action.id !== 'help') return;
  e.preventDefault();
  runCommand(action.id);
}

/** initShortcuts loads the reader's shortcuts and listens for keys. */
export function initShortcuts() {
  loadPrefs().then((p) => setOverrides(p && p.shortcuts), () => {});
  // Prefs.Set in any of the reader's windows (the store follows `prefs`).
  let seen = getState().prefs;
  subscribe(() => {
    const p = getState().prefs;
    if (p === seen) return;
    seen = p;
    if (p && p.shortcuts) setOverrides(p.shortcuts);
  });
  document.addEventListener('keydown', onKey);
}

// ---------- Help dialog ----------

export function Keys({ keys }) {
  const parts = String(keys).split('+');
  return html`<span class="keys">${parts.map((k, i) => html`${i > 0 ? html`<span class="keys-plus" aria-hidden="true">+</span>` : null}<kbd class="kbd">${k}</kbd>`)}</span>`;
}

/** ShortcutsHost shows the help dialog when asked (lembas:shortcuts). */
export function ShortcutsHost() {
  const [open, setOpen] = useState(false);
  const o = useOverrides();
  const ref = useRef(null);
  useEffect(() => {
    const toggle = () => setOpen((v) => !v);
    window.addEventListener('lembas:shortcuts', toggle);
    return () => window.removeEventListener('lembas:shortcuts', toggle);
  }, []);
  useEffect(() => {
    const d = ref.current;
    if (open && d && !d.open && typeof d.showModal === 'function') {
      d.showModal();
      // The dialog opens at its top, on its title: left to itself it
      // focused its first link, near the bottom, and opened scrolled
      // past the title and the shortcuts.
      const title = d.querySelector('#shortcuts-title');
      if (title) title.focus({ preventScroll: true });
      d.scrollTop = 0;
    }
  }, [open]);
  if (!open) return null;
  const current = bindings(o);
  const close = () => {
    const d = ref.current;
    if (d && d.open) d.close();
    setOpen(false);
  };
  const slash = availableCommands().filter((c) => c.name);
  return html`
    <dialog class="dialog shortcuts-dialog" id="shortcuts-dialog" ref=${ref} aria-labelledby="shortcuts-title"
      oncancel=${(e) => { e.preventDefault(); close(); }} onKeyDown=${(e) => trapTab(e, ref.current)}>
      <div class="dialog-form">
        <h2 id="shortcuts-title" class="dialog-title" tabindex="-1">Shortcuts and commands</h2>
        <table class="table shortcuts-table">
          <caption class="visually-hidden">Actions and their keys</caption>
          <tbody>
            ${available().map((a) => html`
              <tr key=${a.id}><th scope="row">${a.label}</th><td><${Keys} keys=${current[a.id]} /></td></tr>`)}
            <tr><th scope="row">Show the shortcuts and commands (outside a text field)</th><td><${Keys} keys="?" /></td></tr>
            ${isDesktop() ? html`<tr><th scope="row">Hide quick chat</th><td><${Keys} keys="Escape" /></td></tr>` : null}
          </tbody>
        </table>
        <p class="dialog-body">Change them in <a href=${hrefs.settings('keyboard')} onClick=${close}>Settings → Keyboard</a>.</p>
        <h3 class="dialog-subtitle" id="commands-title">Commands</h3>
        <p class="dialog-body">Type them at the start of a message. Only a whole command runs; start with // to send a message that begins with /.</p>
        <table class="table shortcuts-table commands-table" id="commands-table" aria-labelledby="commands-title">
          <tbody>
            ${slash.map((c) => html`
              <tr key=${c.id}><th scope="row">${c.label}</th><td><code>/${c.name}${c.arg ? ' ' + c.arg.hint : ''}</code></td></tr>`)}
          </tbody>
        </table>
        <div class="dialog-actions">
          <button type="button" class="btn btn-primary" onClick=${close}>Close</button>
        </div>
      </div>
    </dialog>`;
}

// ---------- Settings ----------

/** ShortcutSettings is the Keyboard tab: every action, rebindable. */
export function ShortcutSettings() {
  const o = useOverrides();
  const [editing, setEditing] = useState('');
  const [error, setError] = useState(null);
  const [saved, setSaved] = useState('');
  const current = bindings(o);

  const save = async (next, what) => {
    setError(null);
    try {
      const p = await savePrefs({ shortcuts: next });
      setOverrides(p && p.shortcuts);
      setSaved(what);
    } catch (err) {
      setError({ action: editing, message: err.message });
    }
  };

  // A layout effect: the keys are captured from the moment "Press the new
  // keys…" is on the page (an effect can run a frame later, and keys
  // pressed meanwhile ran their action instead).
  useLayoutEffect(() => {
    if (!editing) return undefined;
    capturing = true;
    const onCapture = (e) => {
      const combo = comboOf(e);
      if (!combo) return;
      e.preventDefault();
      e.stopPropagation();
      if (combo === 'Escape') {
        setEditing('');
        setError(null);
        return;
      }
      if (combo === 'Tab' || combo === 'Shift+Tab') return;
      const why = checkKeys(editing, combo);
      if (why) {
        setError({ action: editing, message: why });
        return;
      }
      const action = ACTIONS.find((a) => a.id === editing);
      const next = { ...overrides };
      if (combo === action.keys) delete next[editing];
      else next[editing] = combo;
      setEditing('');
      save(next, `${action.label}: ${combo}`);
    };
    document.addEventListener('keydown', onCapture, true);
    return () => {
      capturing = false;
      document.removeEventListener('keydown', onCapture, true);
    };
  }, [editing]);

  const reset = (id) => {
    const next = { ...overrides };
    delete next[id];
    const a = ACTIONS.find((x) => x.id === id);
    save(next, `${a.label}: ${a.keys}`);
  };

  return html`
    <section class="card" aria-labelledby="keys-title">
      <header class="card-header">
        <div>
          <h2 id="keys-title" class="card-title">Keyboard shortcuts</h2>
          <p class="card-subtitle">Press <${Keys} keys="?" /> or <${Keys} keys=${current.help} /> anywhere to see them.</p>
        </div>
        <button type="button" class="btn btn-sm" id="keys-reset-all" disabled=${Object.keys(o).length === 0}
          onClick=${() => save({}, 'every shortcut back to its default')}>Reset all</button>
      </header>
      <div class="card-body">
        <table class="table shortcuts-table keys-table" id="keys-table" role="table">
          <caption class="visually-hidden">Actions and their keys</caption>
          <thead><tr><th scope="col">Action</th><th scope="col">Keys</th><th scope="col"><span class="visually-hidden">Change</span></th></tr></thead>
          <tbody role="rowgroup">
            ${available().map((a) => html`
              <tr key=${a.id} id=${'keys-' + a.id} role="row">
                <th scope="row" role="rowheader">${a.label}</th>
                <td role="cell">${editing === a.id
                  ? html`<span class="keys-capture" role="status">Press the new keys… (Escape cancels)</span>`
                  : html`<${Keys} keys=${current[a.id]} />`}
                  ${error && error.action === a.id ? html`<p class="error-note" role="alert">${error.message}</p>` : null}</td>
                <td class="keys-buttons" role="cell">
                  <button type="button" class="btn btn-sm" onClick=${() => { setError(null); setSaved(''); setEditing(editing === a.id ? '' : a.id); }}>
                    ${editing === a.id ? 'Cancel' : 'Change'}</button>
                  ${o[a.id] ? html`<button type="button" class="btn btn-ghost btn-sm" onClick=${() => reset(a.id)}>Reset</button>` : null}
                </td>
              </tr>`)}
          </tbody>
        </table>
        ${error && !error.action ? html`<p class="error-note" role="alert">${error.message}</p>` : null}
        <p class="visually-hidden" role="status">${saved ? `Saved: ${saved}.` : ''}</p>
      </div>
    </section>`;
}
