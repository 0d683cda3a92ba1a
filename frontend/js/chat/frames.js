// frames.js — applying `gen` frames (docs/API.md, Events) to a reply.
//
// Three layers, so the logic can be driven without a browser:
//   ReplyState  pure: seq continuity, reasoningFrom checks, the HTML parts
//               (base from the last reset/full, sealed blocks, the tail).
//   ReplyView   binds a state to DOM: appends each sealed block as its own
//               nodes, replaces only the tail, appends reasoning as text;
//               batched to one sync per animation frame.
//   Follower    routes the open chat's frames to states, buffers frames for
//               a reply whose id is not known yet, and on a gap (or when
//               attaching to a running reply) asks Chats.Live for a snapshot.

import { appendSanitised, setSanitised } from '../core/html.js';
import { typeset } from './math.js';

const enc = typeof TextEncoder === 'function' ? new TextEncoder() : null;

// Lengths of a string in the units a server might count reasoningFrom in:
// UTF-16 code units (JS), bytes of UTF-8 (Go len), code points (Go runes).
function lengths(s) {
  let cps = 0;
  for (const _ of s) cps++; // eslint-disable-line no-unused-vars
  return { u16: s.length, u8: enc ? enc.encode(s).length : s.length, cp: cps };
}

export class ReplyState {
  /**
   * @param {number} messageId
   * @param {object} o  html: what is shown already; reasoning; status;
   *   fresh: true when the reply was just started by us, so its first
   *   frame (seq 1) can be taken without a snapshot.
   */
  constructor(messageId, { html = '', reasoning = '', status = 'streaming', fresh = false, error = '', metrics = null } = {}) {
    this.messageId = messageId;
    this.seq = null; // last applied seq; null = unknown
    this.fresh = fresh;
    // startedHere: this page started the reply (fresh), so it is one seen
    // finishing here even when its last frame came before it was drawn.
    // Automatic reading aloud takes it (messages.js).
    this.startedHere = fresh;
    // Two regions (docs/API.md): the sealed region — base (from the last
    // reset) plus the blocks sealed since — and the live tail after it.
    this.base = html;
    this.seals = [];
    this.tail = ''; // the tail's HTML as last replaced
    this.tailAppend = []; // escaped text appended inside its code element since
    this.tailRev = 0; // bumps on every replace
    this.reasoning = '';
    this.rlen = { u16: 0, u8: 0, cp: 0 };
    this.setReasoning(reasoning);
    this.status = status;
    this.error = error;
    this.metrics = metrics;
    this.final = status !== 'streaming';
    this.finalFull = this.final ? html : undefined;
    this.resetRev = 0; // bumps whenever the sealed region is replaced
    this.rev = 0; // bumps on every change
    this.listeners = new Set();
  }

  setReasoning(text) {
    this.reasoning = String(text || '');
    this.rlen = lengths(this.reasoning);
  }

  appendReasoning(text) {
    const l = lengths(text);
    this.reasoning += text;
    this.rlen = { u16: this.rlen.u16 + l.u16, u8: this.rlen.u8 + l.u8, cp: this.rlen.cp + l.cp };
  }

  // The server counts in bytes of UTF-8 (Go's len); JS strings count UTF-16
  // units. Either, or code points, is accepted.
  reasoningMatches(from) {
    return from === this.rlen.u16 || from === this.rlen.u8 || from === this.rlen.cp;
  }

  subscribe(fn) {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  emit() {
    this.rev++;
    for (const fn of [...this.listeners]) fn(this);
  }

  /** The HTML the parts add up to (appended code text aside). */
  joined() {
    return this.base + this.seals.join('') + this.tail;
  }

  hasContent() {
    return this.hasText() || this.reasoning !== '';
  }

  /** hasText: the reply has text of its own, not only reasoning. */
  hasText() {
    return this.base.trim() !== '' || this.seals.length > 0 || this.tail.trim() !== '' || this.tailAppend.length > 0;
  }

  /**
   * apply takes one frame in seq order. Returns 'applied', 'duplicate'
   * (already seen, or the reply is over) or 'gap' (nothing was changed:
   * fetch a snapshot with Chats.Live).
   */
  apply(f) {
    if (!f || typeof f.seq !== 'number') return 'duplicate';
    if (this.final) return 'duplicate';
    if (this.seq === null) {
      if (!(this.fresh && f.seq <= 1)) return 'gap';
    } else if (f.seq <= this.seq) {
      return 'duplicate';
    } else if (f.seq !== this.seq + 1) {
      return 'gap';
    }
    if (typeof f.reasoningFrom === 'number' && !this.reasoningMatches(f.reasoningFrom)) return 'gap';
    this.seq = f.seq;
    this.fresh = false;
    this.take(f);
    this.emit();
    return 'applied';
  }

  // take applies a frame's parts in the documented order: reset, seals, tail.
  take(f) {
    if (f.reset) {
      this.base = typeof f.full === 'string' ? f.full : '';
      this.seals = [];
      this.tail = '';
      this.tailAppend = [];
      this.tailRev++;
      this.resetRev++;
    }
    if (Array.isArray(f.seal)) for (const b of f.seal) if (typeof b === 'string') this.seals.push(b);
    const text = typeof f.tail === 'string' ? f.tail : '';
    if (f.op === 'replace') {
      this.tail = text;
      this.tailAppend = [];
      this.tailRev++;
    } else if (f.op === 'append') {
      if (text) this.tailAppend.push(text);
    }
    if (typeof f.reasoning === 'string' && f.reasoning !== '') this.appendReasoning(f.reasoning);
    if (typeof f.status === 'string' && f.status) this.status = f.status;
    if (typeof f.error === 'string') this.error = f.error;
    if (f.metrics && typeof f.metrics === 'object') this.metrics = f.metrics;
    if (this.status !== 'streaming') {
      this.final = true;
      this.finalFull = this.joined();
    }
  }

  /** snapshot replaces everything with a Chats.Live frame (reasoning from 0). */
  snapshot(f) {
    this.seq = typeof f.seq === 'number' ? f.seq : this.seq;
    this.fresh = false;
    this.setReasoning('');
    this.take({ ...f, reset: true, reasoningFrom: 0 });
    this.emit();
  }

  /** finishFrom ends the reply from a stored Message (after a reload). */
  finishFrom(msg) {
    this.final = true;
    this.status = msg.status;
    this.error = msg.error || '';
    this.metrics = msg.metrics || null;
    if (typeof msg.html === 'string') {
      this.base = msg.html;
      this.seals = [];
      this.tail = '';
      this.tailAppend = [];
      this.tailRev++;
      this.resetRev++;
    }
    this.finalFull = this.joined();
    if (typeof msg.reasoning === 'string' && msg.reasoning.length >= this.reasoning.length) this.setReasoning(msg.reasoning);
    this.emit();
  }
}

// Whitespace between tags does not matter when comparing final HTML with
// what was built from blocks.
const squash = (s) => String(s).replace(/>\s+</g, '><').trim();

const raf = typeof requestAnimationFrame === 'function' ? (fn) => requestAnimationFrame(fn) : (fn) => setTimeout(fn, 16);

/**
 * ReplyView renders a ReplyState into `body` (sanitised HTML) and
 * `reasoningEl` (text). It syncs at most once per animation frame, so math
 * in the live tail is typeset at most once a frame. Sealed blocks are
 * appended as their own nodes and never rebuilt; the tail is replaced (or
 * its code element grows). onAnnounce(text) is told each sealed block's
 * text (for a polite live region); onSynced() runs after every sync.
 */
export class ReplyView {
  constructor(state, body, { reasoningEl = null, onAnnounce = null, onSynced = null, schedule = raf } = {}) {
    this.state = state;
    this.body = body;
    this.reasoningEl = reasoningEl;
    this.onAnnounce = onAnnounce;
    this.onSynced = onSynced;
    this.schedule = schedule;
    this.queued = false;
    this.resetRev = -1;
    this.shownBase = '';
    this.shownSeals = 0;
    this.shownTailRev = -1;
    this.shownAppends = 0;
    this.shownReasoning = 0;
    this.announcedEnd = false;
    this.unsub = state.subscribe(() => this.request());
    this.sync();
  }

  request() {
    if (this.queued || this.destroyed) return;
    this.queued = true;
    const schedule = this.schedule;
    schedule(() => {
      this.queued = false;
      if (!this.destroyed) this.sync();
    });
  }

  destroy() {
    this.destroyed = true;
    this.unsub();
  }

  sync() {
    const s = this.state;
    const doc = this.body.ownerDocument;
    if (this.resetRev !== s.resetRev) {
      // A final frame's reset whose HTML is what is already on screen (the
      // usual case) keeps the DOM: no flash, no second typesetting.
      const prevSeals = this.prevSealStrings || [];
      const shown = this.sealedEl && this.shownAppends === 0
        ? this.shownBase + prevSeals.join('') + (this.shownTail || '') : null;
      if (s.final && shown !== null && s.seals.length === 0 && s.tail === '' && squash(s.base) === squash(shown)) {
        this.resetRev = s.resetRev;
        this.shownBase = s.base;
        this.shownSeals = 0;
        this.prevSealStrings = [];
        this.shownTail = '';
        this.shownTailRev = s.tailRev;
      } else {
        this.sealedEl = doc.createElement('div');
        this.sealedEl.className = 'msg-sealed';
        this.tailEl = doc.createElement('div');
        this.tailEl.className = 'msg-tail';
        setSanitised(this.sealedEl, s.base);
        this.body.replaceChildren(this.sealedEl, this.tailEl);
        typeset(this.sealedEl);
        this.resetRev = s.resetRev;
        this.shownBase = s.base;
        this.shownSeals = 0;
        this.prevSealStrings = [];
        this.shownTailRev = -1;
        this.shownTail = '';
      }
      this.shownAppends = 0;
    }
    while (this.shownSeals < s.seals.length) {
      const markup = s.seals[this.shownSeals++];
      this.prevSealStrings.push(markup);
      const nodes = appendSanitised(this.sealedEl, markup);
      typeset(nodes);
      if (this.onAnnounce) this.onAnnounce(nodes.map((n) => n.textContent).join(' ').trim());
    }
    if (this.shownTailRev !== s.tailRev) {
      setSanitised(this.tailEl, s.tail);
      this.shownTail = s.tail;
      this.shownTailRev = s.tailRev;
      this.shownAppends = 0;
      typeset(this.tailEl);
    }
    while (this.shownAppends < s.tailAppend.length) {
      // Escaped text for the open code fence: it grows inside its <code>.
      const codes = this.tailEl.querySelectorAll('.code-block code');
      const target = codes.length ? codes[codes.length - 1] : this.tailEl;
      appendSanitised(target, s.tailAppend[this.shownAppends++]);
    }
    if (s.final && !this.announcedEnd) {
      this.announcedEnd = true;
      const t = this.tailEl.textContent.trim();
      if (this.onAnnounce && t) this.onAnnounce(t);
    }
    if (this.reasoningEl) {
      if (s.reasoning.length < this.shownReasoning) {
        this.reasoningEl.textContent = s.reasoning;
      } else if (s.reasoning.length > this.shownReasoning) {
        this.reasoningEl.appendChild(doc.createTextNode(s.reasoning.slice(this.shownReasoning)));
      }
      this.shownReasoning = s.reasoning.length;
    }
    if (this.onSynced) this.onSynced();
  }
}

/**
 * Follower applies the open chat's frames. The chat view supplies:
 *   call(method, ...args)      the transport
 *   states                     Map messageId → ReplyState, shared with the view
 *   onUnknown(frame)           a frame for a reply the view does not show
 *   onFinished(state)          a reply ended (status not streaming)
 *   onChanged(state)           status/metrics/reasoning may have changed
 */
export class Follower {
  constructor(chatId, { call, states, onUnknown, onFinished, onChanged }) {
    this.chatId = chatId;
    this.call = call;
    this.states = states;
    this.onUnknown = onUnknown || (() => {});
    this.onFinished = onFinished || (() => {});
    this.onChanged = onChanged || (() => {});
    this.buffer = new Map(); // messageId → frames waiting (unknown id, or a snapshot in flight)
    this.holding = 0; // > 0 while an action that will name a new reply is in flight
    this.snapshotting = false;
    this.gaps = 0;
    this.closed = false;
  }

  close() {
    this.closed = true;
  }

  /** hold buffers frames of unknown replies until release(). */
  hold() {
    this.holding++;
  }

  /** release stops holding; frames buffered for ids still unknown go to onUnknown. */
  release(n = 1) {
    this.holding = Math.max(0, this.holding - n);
    if (this.holding > 0) return;
    for (const [id, frames] of [...this.buffer]) {
      if (!this.states.has(id) && frames.length) {
        this.buffer.delete(id);
        this.onUnknown(frames[frames.length - 1]);
      }
    }
  }

  /**
   * retire forgets replies an action is about to replace (a regenerate, or
   * an edit that rewinds the turns after it). Call it after hold(): the
   * store may give the new reply the id of a deleted one, and its first
   * frames can arrive before the call returns; they must wait for adopt
   * instead of going to the old, finished reply, which would drop them
   * and leave the new one waiting for its first words for ever.
   */
  retire(ids) {
    for (const id of ids) this.states.delete(id);
  }

  /** adopt registers a reply we started; buffered frames are replayed. */
  adopt(state) {
    this.states.set(state.messageId, state);
    this.replay(state.messageId);
  }

  replay(id) {
    const frames = (this.buffer.get(id) || []).sort((a, b) => a.seq - b.seq);
    this.buffer.delete(id);
    for (const f of frames) this.frame(f);
  }

  frame(f) {
    if (this.closed || !f || f.chatId !== this.chatId) return;
    let st = this.states.get(f.messageId);
    if (st && st.final && f.status === 'streaming') {
      // A finished reply gets no more streaming frames: this is a new
      // reply under a reused id (a regenerate or an edit, perhaps from
      // another device; see retire). Treat it as unknown.
      this.states.delete(f.messageId);
      st = undefined;
    }
    if (!st) {
      if (this.holding > 0 || this.snapshotting) {
        if (!this.buffer.has(f.messageId)) this.buffer.set(f.messageId, []);
        this.buffer.get(f.messageId).push(f);
      } else {
        this.onUnknown(f);
      }
      return;
    }
    if (this.snapshotting) {
      if (!this.buffer.has(f.messageId)) this.buffer.set(f.messageId, []);
      this.buffer.get(f.messageId).push(f);
      return;
    }
    const wasFinal = st.final;
    const r = st.apply(f);
    if (r === 'gap') {
      if (!this.buffer.has(f.messageId)) this.buffer.set(f.messageId, []);
      this.buffer.get(f.messageId).push(f);
      this.resync();
      return;
    }
    if (r === 'applied') {
      this.gaps = 0;
      this.onChanged(st);
      if (!wasFinal && st.final) this.onFinished(st);
    }
  }

  /**
   * resync asks Chats.Live for the running reply's whole state. Frames that
   * arrive meanwhile are buffered and replayed after it.
   */
  async resync() {
    if (this.snapshotting || this.closed) return;
    if (++this.gaps > 20) {
      console.warn('lembas: too many gaps in the reply stream; reloading instead');
      this.gaps = 0;
      this.onUnknown(null);
      return;
    }
    this.snapshotting = true;
    let live = null;
    let failed = false;
    try {
      live = await this.call('Chats.Live', this.chatId);
    } catch (err) {
      failed = true;
      console.warn('lembas: Chats.Live failed:', err && err.message);
    }
    this.snapshotting = false;
    if (this.closed) return;
    if (failed) {
      this.onUnknown(null);
      return;
    }
    if (!live || !live.frame) {
      // Nothing is running any more: the reply ended between frames.
      this.buffer.clear();
      this.onUnknown(null);
      return;
    }
    let st = this.states.get(live.messageId);
    if (!st) {
      this.onUnknown({ chatId: this.chatId, messageId: live.messageId, seq: live.frame.seq, status: live.frame.status });
      return;
    }
    const wasFinal = st.final;
    if (!wasFinal) {
      st.snapshot(live.frame);
      this.onChanged(st);
      if (st.final) this.onFinished(st);
    }
    // Replay what arrived during the call (apply drops what the snapshot
    // already covers); frames of replies still unknown go to onUnknown.
    for (const id of [...this.buffer.keys()]) {
      if (this.states.has(id)) this.replay(id);
    }
    this.release(0);
  }

  /** attach follows a reply shown as streaming (from Chats.Messages). */
  attach(state) {
    this.states.set(state.messageId, state);
    return this.resync();
  }
}

// ---------- Routing frames to the open chat ----------

// The open chat's follower gets its frames. Frames of other chats are kept
// for a few seconds: a chat created by Send is opened only after Send
// answers, and its first frames may arrive before that.
let current = null;
const recent = new Map(); // chatId → [{at, frame}]
const KEEP_MS = 15000;
const KEEP_MAX = 5000;

export function routeFrame(f) {
  if (!f || typeof f.chatId !== 'number') return;
  if (current && current.chatId === f.chatId) {
    current.frame(f);
    return;
  }
  const now = Date.now();
  let list = recent.get(f.chatId);
  if (!list) recent.set(f.chatId, (list = []));
  list.push({ at: now, frame: f });
  while (list.length && (list.length > KEEP_MAX || now - list[0].at > KEEP_MS)) list.shift();
  if (recent.size > 50) {
    for (const [id, l] of recent) if (!l.length || now - l[l.length - 1].at > KEEP_MS) recent.delete(id);
  }
}

/** followChat makes fol the open chat's follower and hands it recent frames. */
export function followChat(fol) {
  current = fol;
  const list = recent.get(fol.chatId) || [];
  recent.delete(fol.chatId);
  const now = Date.now();
  for (const { at, frame } of list) if (now - at <= KEEP_MS) fol.frame(frame);
}

export function unfollowChat(fol) {
  if (current === fol) current = null;
}
