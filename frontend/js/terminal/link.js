// link.js — the terminal's byte pipe to the chat's shell, the same for
// the panel whichever end it runs in:
//
//   - in a browser, a WebSocket to /api/terminal/{chat}: binary frames are
//     terminal bytes both ways, text frames JSON (resize from here; ready,
//     closed, error from the server). The server sends the scrollback
//     first, then live bytes.
//   - in the desktop app, the Terminal facade (Open, Input, Resize, Close)
//     with output as `terminal` events carrying base64.
//
// Nothing here decodes terminal bytes: xterm's decoder keeps its state
// across writes, and a read on the far side often ends inside a character.

import { call, on, isDesktop } from '../core/transport.js';

// PIECE is the largest input frame sent (the server refuses frames over 1 MiB).
const PIECE = 64 * 1024;

/**
 * openLink attaches to chatId's shell at cols×rows. h holds the callbacks:
 * data(Uint8Array), ready({marks, cols, rows}), closed(reason) when the
 * server ended this viewer ("slow": it fell behind and may come back),
 * lost() when the connection failed or dropped without a word, and
 * error(message). It returns {send(Uint8Array), resize(cols, rows),
 * close()}; close detaches (the shell goes on) and no callback runs after
 * it.
 */
export function openLink(chatId, cols, rows, h) {
  return isDesktop() ? desktopLink(chatId, cols, rows, h) : socketLink(chatId, cols, rows, h);
}

function socketLink(chatId, cols, rows, h) {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const url = `${scheme}//${location.host}/api/terminal/${encodeURIComponent(chatId)}?cols=${cols}&rows=${rows}`;
  let done = false;
  let told = false; // the server said closed or error: no "lost" after it
  const ws = new WebSocket(url);
  ws.binaryType = 'arraybuffer';
  ws.onmessage = (e) => {
    if (done) return;
    if (typeof e.data !== 'string') {
      h.data(new Uint8Array(e.data));
      return;
    }
    let msg;
    try {
      msg = JSON.parse(e.data);
    } catch {
      return;
    }
    if (!msg || typeof msg !== 'object') return;
    if (msg.type === 'ready') h.ready(msg);
    else if (msg.type === 'closed') {
      told = true;
      h.closed(typeof msg.reason === 'string' ? msg.reason : '');
    } else if (msg.type === 'error') {
      told = true;
      h.error(typeof msg.message === 'string' ? msg.message : 'The terminal failed.');
    }
  };
  ws.onclose = () => {
    if (done) return;
    done = true;
    if (!told) h.lost();
  };
  return {
    send(bytes) {
      if (done || ws.readyState !== WebSocket.OPEN) return;
      // The server takes frames of at most 1 MiB and closes the socket on
      // a bigger one: a long paste goes in pieces.
      for (let i = 0; i < bytes.length; i += PIECE) ws.send(bytes.subarray(i, i + PIECE));
    },
    resize(c, r) {
      if (!done && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: 'resize', cols: c, rows: r }));
    },
    close() {
      done = true;
      ws.close(1000);
    },
  };
}

function desktopLink(chatId, cols, rows, h) {
  let done = false;
  let viewer = null;
  const early = []; // events that came before Open told us our viewer
  const handle = (ev) => {
    if (ev.data) h.data(fromBase64(ev.data));
    if (ev.type === 'ready') h.ready(ev);
    else if (ev.type === 'closed') {
      finish();
      h.closed(typeof ev.reason === 'string' ? ev.reason : '');
    } else if (ev.type === 'error') {
      finish();
      h.error(typeof ev.message === 'string' ? ev.message : 'The terminal failed.');
    }
  };
  const finish = () => {
    done = true;
    off();
    offResync();
  };
  const off = on('terminal', (ev) => {
    if (done || !ev || typeof ev !== 'object') return;
    if (viewer === null) early.push(ev);
    else if (ev.viewer === viewer) handle(ev);
  });
  // The window fell behind and the bus dropped the terminal topic's
  // backlog (a resync naming it): bytes are missing from the stream, so
  // this viewer is done, as one the server dropped for being slow is —
  // the panel attaches again and gets the scrollback.
  const offResync = on('resync', (ev) => {
    if (done || !ev || ev.topic !== 'terminal') return;
    if (viewer !== null) call('Terminal.Close', viewer).catch(() => {});
    finish();
    h.closed('slow');
  });
  call('Terminal.Open', Number(chatId), cols, rows).then((r) => {
    if (done) {
      if (r && r.viewer) call('Terminal.Close', r.viewer).catch(() => {});
      return;
    }
    viewer = r && r.viewer;
    for (const ev of early.splice(0)) if (!done && ev.viewer === viewer) handle(ev);
    pump();
  }, (err) => {
    if (done) return;
    finish();
    h.error(err.message);
  });

  // Input goes one call at a time, so that keystrokes arrive in order;
  // what is typed meanwhile goes with the next call.
  let pending = [];
  let sending = false;
  const pump = () => {
    if (sending || done || viewer === null || pending.length === 0) return;
    const bytes = concat(pending);
    pending = [];
    sending = true;
    call('Terminal.Input', viewer, toBase64(bytes)).catch(() => {}).finally(() => {
      sending = false;
      pump();
    });
  };
  return {
    send(bytes) {
      if (done) return;
      pending.push(bytes);
      pump();
    },
    resize(c, r) {
      if (!done && viewer !== null) call('Terminal.Resize', viewer, c, r).catch(() => {});
    },
    close() {
      if (!done && viewer !== null) call('Terminal.Close', viewer).catch(() => {});
      finish();
    },
  };
}

function concat(parts) {
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function fromBase64(s) {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function toBase64(bytes) {
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}
