// frames.js — applying `gen` frames (docs/API.md, Events) to a reply.
//
// Three layers, so the logic can be driven without a browser:
//   ReplyState  pure: seq continuity and the reply's parts (parts.js), each
//               changed by the frame's operations on it.
//   ReplyView   binds a state to DOM: one view per part, in order, each
//               drawn by the component of its kind (parts.js); batched to
//               one sync per animation frame.
//   Follower    routes the open chat's frames to states, buffers frames for
//               a reply whose id is not known yet, and on a gap (or when
//               attaching to a running reply) asks Chats.Live for a snapshot.

import { isTool, newPart, partsOf, viewFor } from './parts.js';

export class ReplyState {
  /**
   * @param {number} messageId
   * @param {object} o  html, reasoning and parts: what is shown already
   *   (a Message's fields); status; fresh: true when the reply was just
   *   started by us, so its first frame (seq 1) can be taken without a
   *   snapshot.
   */
  constructor(messageId, { html = '', reasoning = '', parts = null, status = 'streaming', fresh = false, error = '', metrics = null, content = '' } = {}) {
    this.messageId = messageId;
    this.seq = null; // last applied seq; null = unknown
    this.fresh = fresh;
    // startedHere: this page started the reply (fresh), so it is one seen
    // finishing here even when its last frame came before it was drawn.
    // Automatic reading aloud takes it (messages.js).
    this.startedHere = fresh;
    this.parts = partsOf({ parts, html, reasoning });
    this.status = status;
    this.error = error;
    this.metrics = metrics;
    // content is the Markdown source, from the final frame (Copy).
    this.content = content;
    this.final = status !== 'streaming';
    this.finalFull = this.final ? this.joined() : undefined;
    // activity is what the reply is doing while nothing streams
    // ("Searching the web for …"), plain text; '' when nothing.
    this.activity = '';
    // ask is what the reply waits for the reader to answer (an agent's
    // card: agent/cards.js), or null. Frames carry it on every change,
    // null included, so an answered card goes.
    this.ask = null;
    this.rev = 0; // bumps on every change
    this.listeners = new Set();
  }

  subscribe(fn) {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  emit() {
    this.rev++;
    for (const fn of [...this.listeners]) fn(this);
  }

  /** The HTML of the text parts (appended code text aside). */
  joined() {
    return this.parts.filter((p) => p.kind === 'text').map((p) => p.joined()).join('');
  }

  /** The reasoning parts' text, joined. */
  get reasoning() {
    return this.parts.filter((p) => p.kind === 'reasoning').map((p) => p.text).join('');
  }

  hasContent() {
    return this.parts.some((p) => p.hasText() || (p.kind !== 'text' && p.kind !== 'reasoning'));
  }

  /** hasText: the reply has text of its own, not only reasoning. */
  hasText() {
    return this.parts.some((p) => p.kind === 'text' && p.hasText());
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
    if (!this.fits(f)) return 'gap';
    this.seq = f.seq;
    this.fresh = false;
    this.take(f);
    this.emit();
    return 'applied';
  }

  // fits: every op names a part that is open by then (opened earlier, or
  // by an op before it): anything else means frames were missed.
  fits(f) {
    let n = this.parts.length;
    for (const op of Array.isArray(f.parts) ? f.parts : []) {
      if (!op || typeof op.i !== 'number' || op.i < 0) return false;
      if (op.open) {
        if (op.i > n) return false;
        if (op.i === n) n++;
      } else if (op.i >= n) {
        return false;
      }
    }
    return true;
  }

  // take applies a frame's part operations in order, then its status.
  take(f) {
    for (const op of Array.isArray(f.parts) ? f.parts : []) {
      if (!op || typeof op.i !== 'number' || op.i < 0 || op.i > this.parts.length) continue;
      if (op.open) {
        const old = this.parts[op.i];
        if (old && old.kind === op.open) {
          // Opened again (a snapshot, or the first frame over what the
          // page drew): the same part, emptied, so its view is kept.
          old.reset();
          old.closed = false;
          if (old.kind !== 'text') {
            old.name = String(op.name || '');
            old.callId = String(op.callId || '');
            old.error = !!op.error;
          }
        } else {
          this.parts[op.i] = newPart(op.open, op.open === 'text' ? {} : { name: op.name, callId: op.callId, error: op.error });
        }
      }
      const part = this.parts[op.i];
      if (!part) continue;
      part.take(op);
      if (op.close) part.closed = true;
    }
    if (typeof f.status === 'string' && f.status) this.status = f.status;
    if (typeof f.error === 'string') this.error = f.error;
    if (f.metrics && typeof f.metrics === 'object') this.metrics = f.metrics;
    if (typeof f.content === 'string' && f.content) this.content = f.content;
    if (typeof f.activity === 'string') this.activity = f.activity;
    if (f.ask !== undefined) this.ask = f.ask && typeof f.ask === 'object' ? f.ask : null;
    if (this.status !== 'streaming') {
      this.activity = '';
      this.ask = null;
      this.final = true;
      this.finalFull = this.joined();
    }
  }

  /** snapshot replaces everything with a Chats.Live frame (every part opened again). */
  snapshot(f) {
    this.seq = typeof f.seq === 'number' ? f.seq : this.seq;
    this.fresh = false;
    const ops = Array.isArray(f.parts) ? f.parts : [];
    this.activity = '';
    // A snapshot is the whole state: no ask in it is no card.
    if (f.ask === undefined) this.ask = null;
    this.take(f);
    this.parts.length = Math.min(this.parts.length, ops.length);
    this.emit();
  }

  /** finishFrom ends the reply from a stored Message (after a reload). */
  finishFrom(msg) {
    this.final = true;
    this.activity = '';
    this.ask = null;
    this.status = msg.status;
    this.error = msg.error || '';
    this.metrics = msg.metrics || null;
    if (typeof msg.content === 'string') this.content = msg.content;
    if (typeof msg.html === 'string') {
      const next = partsOf(msg);
      // Parts of the same kind at the same place are kept (reset), so
      // their views are too.
      this.parts = next.map((p, i) => {
        const old = this.parts[i];
        if (!old || old.kind !== p.kind) return p;
        old.reset(p.kind === 'text' ? p.base : p.text);
        return old;
      });
    }
    this.finalFull = this.joined();
    this.emit();
  }
}

const raf = typeof requestAnimationFrame === 'function' ? (fn) => requestAnimationFrame(fn) : (fn) => setTimeout(fn, 16);

/**
 * ReplyView renders a ReplyState into `container`: one element per part,
 * in order, each drawn by the view of its kind. It syncs at most once per
 * animation frame, so math in a live tail is typeset at most once a frame.
 * onAnnounce(text) is told each sealed block's text (for a polite live
 * region); onSynced() runs after every sync. A state that is over is drawn
 * at once.
 */
export class ReplyView {
  constructor(state, container, { onAnnounce = null, onSynced = null, schedule = raf } = {}) {
    this.state = state;
    this.container = container;
    this.hooks = { onAnnounce };
    this.onSynced = onSynced;
    this.schedule = schedule;
    this.queued = false;
    this.views = [];
    // groups[i] is the activity block that part i (a tool call or
    // result) is drawn in: one per run of tool parts, a round's calls and
    // results together.
    this.groups = [];
    this.activityEl = null;
    container.replaceChildren();
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
    const doc = this.container.ownerDocument;
    s.parts.forEach((part, i) => {
      let v = this.views[i];
      if (!v || v.part !== part) {
        const nv = viewFor(part, doc, this.hooks);
        if (v) v.el.replaceWith(nv.el);
        else if (isTool(part)) this.groupFor(i, doc).body.appendChild(nv.el);
        else this.container.appendChild(nv.el);
        this.views[i] = v = nv;
      }
      v.sync(s.final);
    });
    while (this.views.length > s.parts.length) this.views.pop().el.remove();
    for (const g of new Set(this.groups)) if (g) this.syncGroup(g, s);
    this.syncActivity(s, doc);
    if (this.onSynced) this.onSynced();
  }

  // groupFor returns the activity block of tool part i: the one of the
  // part before it when that is a tool part too, else a new block.
  groupFor(i, doc) {
    let g = i > 0 && isTool(this.state.parts[i - 1]) ? this.groups[i - 1] : null;
    if (!g) {
      const details = doc.createElement('details');
      details.className = 'tool-activity';
      const summary = details.appendChild(doc.createElement('summary'));
      summary.className = 'tool-activity-summary';
      const body = details.appendChild(doc.createElement('div'));
      body.className = 'tool-activity-body';
      g = { el: details, summary, body, from: i };
      this.container.appendChild(details);
    }
    this.groups[i] = g;
    return g;
  }

  // syncGroup writes a block's summary: the tools its round used. Once
  // the reply has ended, a call with no result (stopped or interrupted
  // while it ran) is counted as not finished, not as used.
  syncGroup(g, s) {
    const names = [];
    const calls = [];
    const answered = new Set();
    let failed = 0;
    for (let i = g.from; i < s.parts.length && this.groups[i] === g; i++) {
      const p = s.parts[i];
      if (p.kind === 'tool_call') {
        calls.push(p.callId);
        if (p.name && !names.includes(p.name)) names.push(p.name);
      }
      if (p.kind === 'tool_result') {
        answered.add(p.callId);
        if (p.error) failed++;
      }
    }
    const unfinished = s.final ? calls.filter((id) => !answered.has(id)).length : 0;
    const notes = [];
    if (failed) notes.push(failed + ' failed');
    if (unfinished) notes.push(unfinished + ' not finished');
    const label = (unfinished === calls.length && calls.length ? 'Called ' : 'Used ') + (names.join(', ') || 'tools') +
      (notes.length ? ' (' + notes.join(', ') + ')' : '');
    if (g.summary.textContent !== label) g.summary.textContent = label;
  }

  // syncActivity shows the reply's activity line after its parts.
  syncActivity(s, doc) {
    if (!s.activity) {
      if (this.activityEl) this.activityEl.hidden = true;
      return;
    }
    if (!this.activityEl) {
      this.activityEl = doc.createElement('p');
      this.activityEl.className = 'reply-activity';
      this.activityEl.setAttribute('role', 'status');
    }
    if (this.activityEl.textContent !== s.activity) this.activityEl.textContent = s.activity;
    this.activityEl.hidden = false;
    if (this.container.lastChild !== this.activityEl) this.container.appendChild(this.activityEl);
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
      st.snapshot(live.frame.ask === undefined && live.ask !== undefined ? { ...live.frame, ask: live.ask } : live.frame);
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
