// term.js — an xterm.js terminal on a chat's shell, inside a host element.
// Loaded by panel.js with import() when a terminal panel first opens, so a
// plain chat never loads xterm (345 kB) or its stylesheet.
//
// Three things xterm needs told, because it cannot see them:
//   - its size: fit() reads the host's offsetWidth, which is 0 while an
//     ancestor is [hidden] or not yet laid out, so fitting then is a silent
//     no-op that leaves 80 columns in a narrow panel. It fits when the host
//     has a size, and again whenever it changes (a ResizeObserver: a window
//     resize never fires when the sidebar folds beside it).
//   - the theme: xterm holds colours as values, not CSS variables, so a
//     change of data-theme is pushed to it (or `shire` leaves a black
//     rectangle in a light page).
//   - the CSP: styles.js.

import { Terminal } from '../../vendor/xterm/xterm.mjs';
import { FitAddon } from '../../vendor/xterm/addon-fit.mjs';
import { install as installStyles } from './styles.js';
import { openLink } from './link.js';

let cssPromise = null;

// loadCSS links xterm's stylesheet once, before css/terminal.css so that
// ours refines it, and resolves when it applies: xterm measures its cells
// when it opens, with whatever styles are there by then.
function loadCSS() {
  if (!cssPromise) {
    cssPromise = new Promise((resolve, reject) => {
      const link = document.createElement('link');
      link.rel = 'stylesheet';
      link.href = new URL('../../vendor/xterm/xterm.css', import.meta.url).href;
      link.onload = () => resolve();
      link.onerror = () => {
        cssPromise = null;
        link.remove();
        reject(new Error('The terminal\'s stylesheet did not load.'));
      };
      const ours = [...document.querySelectorAll('link[rel="stylesheet"]')].find((l) => /\/css\/terminal\.css$/.test(l.getAttribute('href') || ''));
      if (ours) ours.before(link);
      else document.head.append(link);
    });
  }
  return cssPromise;
}

const ANSI = ['black', 'red', 'green', 'yellow', 'blue', 'magenta', 'cyan', 'white'];

// themeOf reads the terminal's colours from tokens.css, as the host sees
// them now.
function themeOf(host) {
  const cs = getComputedStyle(host);
  const v = (name) => cs.getPropertyValue(name).trim();
  const t = {
    background: v('--term-bg'),
    foreground: v('--term-fg'),
    cursor: v('--term-cursor'),
    cursorAccent: v('--term-bg'),
    selectionBackground: v('--term-selection'),
  };
  for (const c of ANSI) {
    t[c] = v(`--term-${c}`);
    t['bright' + c[0].toUpperCase() + c.slice(1)] = v(`--term-bright-${c}`);
  }
  return t;
}

const terms = new WeakMap(); // host → its session, for bufferText and probe

const RETRIES = 6; // connections lost in a row before the panel stops trying

/**
 * attach opens a terminal in host on chatId's shell. onState is told
 * {state, marks, message}: state is 'connecting', 'open', 'closed' (it
 * was connected; message says why, in plain words) or 'failed' (it never
 * connected since the panel opened or Reconnect: message is the server's
 * error when it sent one). It returns {reconnect(), focus(),
 * dispose()}; dispose detaches: the shell goes on for the next viewer.
 */
export async function attach(host, chatId, onState) {
  installStyles();
  await loadCSS();
  const cs = getComputedStyle(host);
  const term = new Terminal({
    fontFamily: cs.fontFamily,
    fontSize: Math.round(parseFloat(cs.fontSize)) || 13,
    theme: themeOf(host),
    scrollback: 5000,
    cursorBlink: false,
    allowProposedApi: false,
  });
  const fit = new FitAddon();
  term.loadAddon(fit);
  term.open(host);

  // connected: a link reached ready since attach or the last reconnect();
  // until one does, a failure is "could not connect", not "lost".
  const s = { term, link: null, probes: new Set(), disposed: false, fresh: true, retries: 0, timer: 0, marks: false, connected: false };
  terms.set(host, s);
  const tell = (state, message = '') => {
    if (!s.disposed) onState({ state, marks: s.marks, message });
  };

  const measurable = () => host.offsetWidth > 0 && host.offsetHeight > 0;
  const refit = () => {
    if (!measurable()) return;
    try {
      fit.fit();
    } catch {
      // xterm not rendered yet: the observer calls again
    }
  };
  refit();

  const encoder = new TextEncoder();
  const sendInput = (bytes) => {
    if (s.link) s.link.send(bytes);
  };
  const subs = [
    term.onData((d) => sendInput(encoder.encode(d))),
    // Mouse reports in the legacy encoding: one byte per character.
    term.onBinary((d) => sendInput(Uint8Array.from(d, (ch) => ch.charCodeAt(0) & 0xff))),
    term.onResize(({ cols, rows }) => {
      if (s.link) s.link.resize(cols, rows);
    }),
  ];

  const connect = () => {
    clearTimeout(s.timer);
    if (s.disposed) return;
    if (s.link) s.link.close();
    tell('connecting');
    const first = s.fresh;
    let got = false; // this link has written something
    const link = openLink(chatId, term.cols, term.rows, {
      data(bytes) {
        if (s.link !== link) return;
        // A link that comes back starts with the scrollback: what is on
        // screen is replaced by it, not added to.
        if (!got && !first) term.reset();
        got = true;
        s.fresh = false;
        term.write(bytes);
        for (const fn of s.probes) fn(bytes);
      },
      ready(msg) {
        if (s.link !== link) return;
        s.marks = !!msg.marks;
        s.retries = 0;
        s.connected = true;
        s.fresh = false;
        tell('open');
        // The shell may be smaller (a smaller viewer) or we may have been
        // fitted meanwhile: say our size again.
        link.resize(term.cols, term.rows);
      },
      closed(reason) {
        if (s.link !== link) return;
        s.link = null;
        // A viewer that fell behind was dropped; the scrollback is the
        // state, so coming back costs nothing.
        if (reason === 'slow') again(100);
        else tell('closed', reasonText(reason));
      },
      lost() {
        if (s.link !== link) return;
        s.link = null;
        if (s.retries >= RETRIES) {
          if (s.connected) tell('closed', 'The connection to the terminal was lost.');
          else tell('failed', 'The server could not be reached.');
          return;
        }
        again(Math.min(250 * 2 ** s.retries, 4000));
        s.retries++;
      },
      error(message) {
        if (s.link !== link) return;
        s.link = null;
        link.close();
        tell(s.connected ? 'closed' : 'failed', message);
      },
    });
    s.link = link;
  };
  const again = (ms) => {
    tell('connecting');
    clearTimeout(s.timer);
    s.timer = setTimeout(connect, ms);
  };

  const ro = new ResizeObserver(() => refit());
  ro.observe(host);
  const mo = new MutationObserver(() => {
    term.options.theme = themeOf(host);
  });
  mo.observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme'] });
  // Back online: do not wait out the backoff.
  const online = () => {
    if (!s.link && !s.disposed && s.timer) connect();
  };
  window.addEventListener('online', online);

  connect();

  return {
    reconnect() {
      s.retries = 0;
      s.connected = false;
      connect();
    },
    focus() {
      term.focus();
    },
    dispose() {
      s.disposed = true;
      clearTimeout(s.timer);
      window.removeEventListener('online', online);
      ro.disconnect();
      mo.disconnect();
      if (s.link) s.link.close();
      s.link = null;
      for (const d of subs) d.dispose();
      terms.delete(host);
      term.dispose();
    },
  };
}

// reasonText says why the server closed this viewer (terminal.Reason*).
function reasonText(reason) {
  switch (reason) {
    case 'exited': return 'The shell ended.';
    case 'idle': return 'The shell was ended: nobody watched or typed for a long time.';
    case 'chat': return 'The chat was deleted.';
    case 'profile': return 'The chat\'s SSH connection was changed.';
    case 'shutdown': return 'The server is stopping.';
    case 'refused': return 'You can no longer open this terminal (agent chats are off, or you may no longer use them).';
    default: return 'The terminal was closed.';
  }
}

/**
 * bufferText is the text of the terminal in host, scrollback included, one
 * line per row (trailing blanks trimmed): what tests and the page's own
 * checks read.
 */
export function bufferText(host) {
  const s = terms.get(host);
  if (!s) return '';
  const b = s.term.buffer.active;
  const lines = [];
  for (let i = 0; i < b.length; i++) {
    const line = b.getLine(i);
    lines.push(line ? line.translateToString(true) : '');
  }
  return lines.join('\n');
}

/**
 * probe calls fn(bytes) with every chunk written to the terminal in host,
 * until the returned function is called (the echo benchmark).
 */
export function probe(host, fn) {
  const s = terms.get(host);
  if (!s) return () => {};
  s.probes.add(fn);
  return () => s.probes.delete(fn);
}

/** input types data into the terminal in host, as keys would. */
export function input(host, data) {
  const s = terms.get(host);
  if (s) s.term.input(data, true);
}
