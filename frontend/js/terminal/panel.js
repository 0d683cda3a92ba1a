// panel.js — the terminal panel of an agent chat: a "Terminal" button in
// the chat's header and, while it is open, a panel beside the chat holding
// a terminal on the chat's shell (one shell per chat, shared by every tab
// and window that opens the panel; the server keeps it).
//
// This module is small and loads with the chat screen; the terminal itself
// (term.js, xterm.js and its stylesheet) is imported when a panel first
// opens, so a plain chat never loads it. Closing the panel detaches: the
// shell and whatever runs in it go on. Whether the panel is open is
// remembered per chat for this tab, so a reload finds it open again.

import { html, useState, useEffect, useRef } from '../../vendor/htm-preact/standalone.module.js';
import { call } from '../core/transport.js';
import { toast, toastError, CloseButton } from '../core/ui.js';

let termModule = null;

function loadTerm() {
  if (!termModule) {
    termModule = import('./term.js').catch((err) => {
      termModule = null;
      throw err;
    });
  }
  return termModule;
}

const openKey = (chatId) => `lembas.terminal.${chatId}`;

function remembered(chatId) {
  try {
    return sessionStorage.getItem(openKey(chatId)) === '1';
  } catch {
    return false;
  }
}

function remember(chatId, open) {
  try {
    if (open) sessionStorage.setItem(openKey(chatId), '1');
    else sessionStorage.removeItem(openKey(chatId));
  } catch {
    // Storage may be unavailable; the panel just starts closed.
  }
}

/**
 * useTerminalSlot is the chat screen's terminal, given its controller c:
 * {button, panel, toggle}, all null unless the chat is an agent chat. The
 * chat screen puts button in its header and panel in its side slot, and
 * hands toggle to the composer's commands.
 */
export function useTerminalSlot(c) {
  const chatId = c.chatId;
  const agent = !!(c.chat && c.chat.kind === 'agent' && chatId);
  const [open, setOpen] = useState(false);
  const btn = useRef(null);
  const clicked = useRef(false); // opened by the button (not by a reload): focus the terminal
  useEffect(() => {
    setOpen(agent && remembered(chatId));
  }, [chatId, agent]);
  if (!agent) return { button: null, panel: null, toggle: null };
  const toggle = (v) => {
    clicked.current = v;
    setOpen(v);
    remember(chatId, v);
  };
  // Closed from its own Close button, the focus goes back to the button
  // that opens it, not to the page's start.
  const close = () => {
    toggle(false);
    setTimeout(() => { if (btn.current) btn.current.focus(); }, 0);
  };
  return {
    toggle: () => toggle(!open), // the /terminal command
    button: html`
      <button type="button" ref=${btn} class=${'btn btn-ghost btn-sm term-toggle' + (open ? ' is-on' : '')} aria-pressed=${open ? 'true' : 'false'}
        aria-controls="terminal-panel" onClick=${() => toggle(!open)}>Terminal</button>`,
    panel: open ? html`<${TerminalPanel} key=${chatId} chatId=${chatId} onClose=${close} focus=${clicked.current} />` : null,
  };
}

const STATES = {
  loading: 'Loading the terminal…',
  connecting: 'Connecting…',
  open: 'Connected',
  closed: 'Disconnected',
  failed: 'Could not connect',
};

// stateText is the panel's state in words, with why when it is over (the
// whole of it is the line's title: a narrow panel cuts the line short).
function stateText(st) {
  const over = st.state === 'closed' || st.state === 'failed';
  return (STATES[st.state] || '') + (over && st.message ? ' — ' + st.message : '');
}

/**
 * TerminalPanel is the panel itself: its bar (state, Reconnect, Send last
 * command, Close) over the terminal on chatId's shell, attached while it
 * is mounted; focus: take the focus once attached.
 */
export function TerminalPanel({ chatId, onClose, focus = false }) {
  const host = useRef(null);
  const session = useRef(null);
  const [st, setSt] = useState({ state: 'loading', marks: false, message: '' });

  useEffect(() => {
    let gone = false;
    loadTerm().then((m) => m.attach(host.current, chatId, (s) => { if (!gone) setSt(s); })).then((sess) => {
      if (gone) sess.dispose();
      else {
        session.current = sess;
        if (focus) sess.focus();
      }
    }, (err) => {
      if (!gone) setSt({ state: 'failed', marks: false, message: err.message || 'The terminal could not be loaded.' });
    });
    return () => {
      gone = true;
      if (session.current) session.current.dispose();
      session.current = null;
    };
  }, [chatId]);

  const reconnect = () => {
    if (session.current) session.current.reconnect();
  };

  return html`
    <section class="term-panel" id="terminal-panel" aria-label="Terminal">
      <header class="term-bar">
        <h2 class="term-title">Terminal</h2>
        <p class=${'term-state is-' + st.state} role="status" title=${stateText(st)}>${stateText(st)}</p>
        ${(st.state === 'closed' || st.state === 'failed') && !!session.current && html`
          <button type="button" class="btn btn-sm term-reconnect" onClick=${reconnect}>Reconnect</button>`}
        <button type="button" class="btn btn-ghost btn-sm term-send" disabled=${st.state !== 'open'}
          title="Put the last command and its output in the message box" onClick=${() => sendLast(chatId, host.current)}>Send last command<span class="term-send-more"> to the chat</span></button>
        <${CloseButton} label="Close the terminal" onClose=${onClose} />
      </header>
      <div class="term-host" ref=${host}></div>
    </section>`;
}

// sendLast asks the server for the shell's last command and its output
// (from the shell's marks) and puts them in the message box as a fenced
// block, where the person can add to it before sending.
async function sendLast(chatId, from) {
  let r;
  try {
    r = await call('Terminal.LastCommand', Number(chatId));
  } catch (err) {
    toastError('Could not read the last command', err);
    return;
  }
  if (!r || !r.marks) {
    toast('This shell has no command marks; nothing was sent.');
    return;
  }
  if (!r.command) {
    toast('No command has finished in this shell yet; nothing was sent.');
    return;
  }
  insertIntoComposer(commandBlock(r), from);
}

/**
 * commandBlock is the Markdown for a command and its output: a fence
 * longer than any run of backticks inside, and the exit status when it
 * was not 0.
 */
export function commandBlock({ command, output, exit }) {
  const out = (output || '').replace(/\s+$/, '');
  const body = out ? `$ ${command}\n${out}` : `$ ${command}`;
  const longest = Math.max(0, ...(body.match(/`+/g) || []).map((s) => s.length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  let md = `${fence}console\n${body}\n${fence}\n`;
  if (typeof exit === 'number' && exit !== 0) md += `Exit status ${exit}.\n`;
  return md;
}

// insertIntoComposer puts text at the caret of the message box beside the
// panel (from is inside the panel), on a line of its own, as typing would,
// so the composer's own input handling keeps its state and saves the draft.
function insertIntoComposer(text, from) {
  const view = from && from.closest('.chat-with-side');
  const ta = (view && view.querySelector('.chat-view .composer-input')) || document.getElementById('composer-input');
  if (!ta || ta.disabled) {
    toast('The message box is not available; nothing was sent.');
    return;
  }
  const start = ta.selectionStart ?? ta.value.length;
  const end = ta.selectionEnd ?? start;
  const before = ta.value.slice(0, start);
  const lead = before === '' || before.endsWith('\n\n') ? '' : before.endsWith('\n') ? '\n' : '\n\n';
  ta.focus({ preventScroll: true });
  ta.setRangeText(lead + text, start, end, 'end');
  ta.dispatchEvent(new Event('input', { bubbles: true }));
}
