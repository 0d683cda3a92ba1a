// parts.js — the parts a reply is made of (docs/API.md, Events): the state
// of each kind as frames build it, and one view per kind that draws it.
//
// A text part is sanitised HTML from the server (html.js is the only way
// in); every other kind — reasoning, a tool call's arguments, a tool's
// result, a pause, a notice — is plain text, set as text and never parsed.

import { appendSanitised, setSanitised } from '../core/html.js';
import { typeset } from './math.js';

// ---------- State ----------

/**
 * TextPart keeps a text part's HTML as two regions: the sealed region —
 * base (from the last reset) plus the blocks sealed since — and the live
 * tail after it, which is replaced (or, inside an open code fence, grows
 * by escaped text appended to its code element).
 */
export class TextPart {
  constructor(html = '') {
    this.kind = 'text';
    this.closed = false;
    this.base = String(html || '');
    this.seals = [];
    this.tail = ''; // the tail's HTML as last replaced
    this.tailAppend = []; // escaped text appended inside its code element since
    this.tailRev = 0; // bumps on every replace
    this.resetRev = 0; // bumps whenever the sealed region is replaced
  }

  /** reset replaces everything with html (a reset, a snapshot, a stored message). */
  reset(html = '') {
    this.base = String(html || '');
    this.seals = [];
    this.tail = '';
    this.tailAppend = [];
    this.tailRev++;
    this.resetRev++;
  }

  /** take applies a part op's HTML in the documented order: reset, seals, tail. */
  take(op) {
    if (op.reset) this.reset(typeof op.full === 'string' ? op.full : '');
    if (Array.isArray(op.seal)) for (const b of op.seal) if (typeof b === 'string') this.seals.push(b);
    const text = typeof op.tail === 'string' ? op.tail : '';
    if (op.op === 'replace') {
      this.tail = text;
      this.tailAppend = [];
      this.tailRev++;
    } else if (op.op === 'append') {
      if (text) this.tailAppend.push(text);
    }
  }

  /** joined is the HTML the regions add up to (appended code text aside). */
  joined() {
    return this.base + this.seals.join('') + this.tail;
  }

  hasText() {
    return this.base.trim() !== '' || this.seals.length > 0 || this.tail.trim() !== '' || this.tailAppend.length > 0;
  }
}

/** PlainPart is every other kind: its text is plain and only grows. */
export class PlainPart {
  constructor(kind, { text = '', name = '', callId = '', error = false } = {}) {
    this.kind = kind;
    this.closed = false;
    this.text = String(text || '');
    this.name = String(name || '');
    this.callId = String(callId || '');
    this.error = !!error; // a failed tool result
    this.resetRev = 0; // bumps when the text is replaced, not appended to
  }

  reset(text = '') {
    this.text = String(text || '');
    this.resetRev++;
  }

  take(op) {
    if (typeof op.text === 'string') this.text += op.text;
  }

  hasText() {
    return this.text !== '';
  }
}

/** newPart makes the state of a part of kind (o: name, callId, text or html). */
export function newPart(kind, o = {}) {
  return kind === 'text' ? new TextPart(o.html) : new PlainPart(String(kind), o);
}

/**
 * partsOf returns a stored message's parts: its `parts` when the server
 * sent them, else its reasoning (if any) and then its HTML, which is how
 * every reply of reasoning and text is sent.
 */
export function partsOf({ parts = null, html = '', reasoning = '' } = {}) {
  if (Array.isArray(parts) && parts.length) {
    return parts.map((p) => newPart(p && p.kind, p || {}));
  }
  const out = [];
  if (reasoning) out.push(new PlainPart('reasoning', { text: reasoning }));
  if (html || !reasoning) out.push(new TextPart(html));
  return out;
}

// ---------- Views: one per kind ----------

// Whitespace between tags does not matter when comparing final HTML with
// what was built from blocks.
export const squash = (s) => String(s).replace(/>\s+</g, '><').trim();

/**
 * TextView draws a text part into div.msg-body. Sealed blocks are appended
 * as their own nodes and never rebuilt; the tail is replaced (or its code
 * element grows). A part that is over when first drawn (a stored reply) is
 * set as one piece of HTML, as it always was.
 */
class TextView {
  constructor(part, doc, hooks) {
    this.part = part;
    this.hooks = hooks;
    this.el = doc.createElement('div');
    this.el.className = 'msg-body md';
    this.resetRev = -1;
    this.shownBase = '';
    this.shownSeals = 0;
    this.shownTailRev = -1;
    this.shownTail = '';
    this.shownAppends = 0;
    this.prevSealStrings = [];
    this.sealedEl = null;
    this.tailEl = null;
    this.announcedEnd = false;
  }

  sync(final) {
    const p = this.part;
    const doc = this.el.ownerDocument;
    if (this.whole) {
      // Drawn whole: stays so until something is added (a reply
      // continued here), then is drawn in regions from the start.
      if (this.resetRev === p.resetRev && p.seals.length === 0 && this.shownTailRev === p.tailRev && p.tailAppend.length === 0) return;
      this.whole = false;
      this.resetRev = -1;
      this.shownBase = '';
    }
    if (this.resetRev !== p.resetRev) {
      // A reset whose HTML is what is already on screen (the end of a
      // reply, a snapshot) keeps the DOM: no flash, no second typesetting.
      const shown = this.sealedEl && this.shownAppends === 0 ? this.shownBase + this.prevSealStrings.join('') + this.shownTail : null;
      if (shown !== null && p.seals.length === 0 && p.tail === '' && squash(p.base) === squash(shown)) {
        this.resetRev = p.resetRev;
        this.shownTailRev = p.tailRev;
        return;
      }
      if (!this.sealedEl && final && p.seals.length === 0 && p.tail === '' && p.tailAppend.length === 0) {
        // A stored reply: its HTML set once, as one piece.
        setSanitised(this.el, p.base);
        typeset(this.el);
        this.whole = true;
        this.resetRev = p.resetRev;
        this.shownTailRev = p.tailRev;
        this.announcedEnd = true;
        return;
      }
      this.sealedEl = doc.createElement('div');
      this.sealedEl.className = 'msg-sealed';
      this.tailEl = doc.createElement('div');
      this.tailEl.className = 'msg-tail';
      setSanitised(this.sealedEl, p.base);
      this.el.replaceChildren(this.sealedEl, this.tailEl);
      typeset(this.sealedEl);
      this.resetRev = p.resetRev;
      this.shownBase = p.base;
      this.shownSeals = 0;
      this.prevSealStrings = [];
      this.shownTailRev = -1;
      this.shownTail = '';
      this.shownAppends = 0;
    }
    while (this.shownSeals < p.seals.length) {
      const markup = p.seals[this.shownSeals++];
      this.prevSealStrings.push(markup);
      const nodes = appendSanitised(this.sealedEl, markup);
      typeset(nodes);
      if (this.hooks.onAnnounce) this.hooks.onAnnounce(nodes.map((n) => n.textContent).join(' ').trim());
    }
    if (this.shownTailRev !== p.tailRev) {
      setSanitised(this.tailEl, p.tail);
      this.shownTail = p.tail;
      this.shownTailRev = p.tailRev;
      this.shownAppends = 0;
      typeset(this.tailEl);
    }
    while (this.shownAppends < p.tailAppend.length) {
      // Escaped text for the open code fence: it grows inside its <code>.
      const codes = this.tailEl.querySelectorAll('.code-block code');
      const target = codes.length ? codes[codes.length - 1] : this.tailEl;
      appendSanitised(target, p.tailAppend[this.shownAppends++]);
    }
    if ((final || p.closed) && !this.announcedEnd) {
      this.announcedEnd = true;
      const t = this.tailEl.textContent.trim();
      if (this.hooks.onAnnounce && t) this.hooks.onAnnounce(t);
    }
  }
}

/**
 * PlainView draws plain text that grows: new text is appended as a text
 * node, never parsed.
 */
class PlainView {
  constructor(part, doc, textEl) {
    this.part = part;
    this.textEl = textEl;
    this.shown = 0;
    this.resetRev = -1;
  }

  syncText() {
    const p = this.part;
    if (this.resetRev !== p.resetRev || p.text.length < this.shown) {
      this.textEl.textContent = p.text;
      this.resetRev = p.resetRev;
    } else if (p.text.length > this.shown) {
      this.textEl.appendChild(this.textEl.ownerDocument.createTextNode(p.text.slice(this.shown)));
    }
    this.shown = p.text.length;
  }
}

function el(doc, tag, className, text) {
  const e = doc.createElement(tag);
  if (className) e.className = className;
  if (text) e.textContent = text;
  return e;
}

/**
 * FoldView: a part folded under a summary line (reasoning, a tool call, a
 * tool result). label gives the summary's text from the part.
 */
class FoldView extends PlainView {
  constructor(part, doc, { cls, summaryCls, textTag, textCls, label, hideEmpty = false }) {
    const details = el(doc, 'details', cls);
    const summary = details.appendChild(el(doc, 'summary', summaryCls));
    const text = details.appendChild(el(doc, textTag, textCls));
    super(part, doc, text);
    this.el = details;
    this.summary = summary;
    this.label = label;
    this.hideEmpty = hideEmpty;
  }

  sync() {
    const label = this.label(this.part);
    if (this.summary.textContent !== label) this.summary.textContent = label;
    this.syncText();
    if (this.hideEmpty) this.el.hidden = this.part.text === '';
  }
}

/** ReasoningView: the model's reasoning, folded, as it always was. */
const ReasoningView = class extends FoldView {
  constructor(part, doc) {
    super(part, doc, { cls: 'reasoning', summaryCls: 'reasoning-summary', textTag: 'div', textCls: 'reasoning-text', label: () => 'Reasoning', hideEmpty: true });
  }
};

/** isTool: the part belongs to a round's activity block (a call or its result). */
export const isTool = (part) => !!part && (part.kind === 'tool_call' || part.kind === 'tool_result');

/**
 * argsSummary is a call's arguments on one line: the values of its JSON
 * object ("Bree weather"), else the text as the model wrote it.
 */
export function argsSummary(text) {
  let v = null;
  try {
    v = JSON.parse(text);
  } catch {
    /* not JSON (yet): shown as written */
  }
  const line = v && typeof v === 'object' && !Array.isArray(v)
    ? Object.values(v).map((x) => (typeof x === 'string' ? x : JSON.stringify(x))).join(' · ')
    : String(text || '');
  const flat = line.replace(/\s+/g, ' ').trim();
  return flat.length > 120 ? flat.slice(0, 119) + '…' : flat;
}

// URLs in a tool's result become links only when they are http or https.
const URL_RE = /\bhttps?:\/\/[^\s<>"'`)\]]+/g;

/** safeHref returns the URL when it parses as http or https, else ''. */
export function safeHref(u) {
  try {
    const url = new URL(u);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : '';
  } catch {
    return '';
  }
}

/**
 * linkify fills target with text as text nodes, with http(s) URLs as
 * anchors whose text is the URL: never parsed as HTML, and no other scheme
 * (javascript:, data:) ever becomes a link.
 */
export function linkify(target, text) {
  const doc = target.ownerDocument;
  target.replaceChildren();
  let at = 0;
  for (const m of String(text).matchAll(URL_RE)) {
    const href = safeHref(m[0]);
    if (!href) continue;
    if (m.index > at) target.appendChild(doc.createTextNode(text.slice(at, m.index)));
    const a = el(doc, 'a', 'tool-link', m[0]);
    a.href = href;
    a.target = '_blank';
    a.rel = 'noopener noreferrer';
    target.appendChild(a);
    at = m.index + m[0].length;
  }
  if (at < text.length) target.appendChild(doc.createTextNode(text.slice(at)));
}

/** ToolCallView: one call of a round — the tool's name and its arguments on a line. */
class ToolCallView {
  constructor(part, doc) {
    this.part = part;
    this.el = el(doc, 'div', 'tool-call');
    this.nameEl = this.el.appendChild(el(doc, 'span', 'tool-call-name'));
    this.argsEl = this.el.appendChild(el(doc, 'span', 'tool-call-args'));
  }

  sync() {
    const p = this.part;
    if (this.nameEl.textContent !== p.name) this.nameEl.textContent = p.name || 'tool';
    const a = argsSummary(p.text);
    if (this.argsEl.textContent !== a) this.argsEl.textContent = a;
  }
}

/** ToolResultView: what a call returned, folded: escaped text, http(s) links only. */
class ToolResultView {
  constructor(part, doc) {
    this.part = part;
    this.el = el(doc, 'details', 'tool-result');
    this.summary = this.el.appendChild(el(doc, 'summary', 'tool-result-summary'));
    this.body = this.el.appendChild(el(doc, 'pre', 'tool-result-text'));
    this.shown = null;
  }

  sync() {
    const p = this.part;
    const label = (p.error ? 'Failed: ' : 'Result: ') + (p.name || 'tool');
    if (this.summary.textContent !== label) this.summary.textContent = label;
    this.el.classList.toggle('is-error', p.error);
    if (this.shown !== p.text) {
      linkify(this.body, p.text);
      this.shown = p.text;
    }
  }
}

/**
 * LineView: one line of plain text, its class saying what it is: a pause
 * (the reply waits for the reader) or a notice (a line from LLeMbas itself).
 */
class LineView extends PlainView {
  constructor(part, doc, cls) {
    const p = el(doc, 'p', cls);
    super(part, doc, p);
    this.el = p;
  }

  sync() {
    this.syncText();
  }
}

/**
 * pauseSummary reads a pause part's text — what it asked ("Asked to
 * approve 2 calls:"), a "- " line per item, and once it is over how it
 * ended ("Approved", "Declined", …) — as {head, items, outcome}.
 */
export function pauseSummary(text) {
  const lines = String(text || '').split('\n');
  const head = (lines.shift() || '').replace(/[:.]\s*$/, '');
  const items = [];
  let outcome = '';
  for (const l of lines) {
    if (l.startsWith('- ')) items.push(l.slice(2));
    else if (l.trim()) outcome = l.trim();
  }
  return { head, items, outcome };
}

/**
 * PauseView: a pause as one line — what the reply asked and how it was
 * answered ("Asked to approve 1 call · Approved"), or that it waits; the
 * items it asked about are folded under it. While the card is live it
 * says everything the line would repeat, so the line stays short.
 */
class PauseView {
  constructor(part, doc) {
    this.part = part;
    this.el = el(doc, 'details', 'part-pause');
    this.summary = this.el.appendChild(el(doc, 'summary', 'part-pause-summary'));
    this.items = this.el.appendChild(el(doc, 'p', 'part-pause-items'));
    this.shown = null;
  }

  sync(final) {
    const p = this.part;
    const key = (final ? '1' : '0') + p.text;
    if (this.shown === key) return;
    this.shown = key;
    const { head, items, outcome } = pauseSummary(p.text);
    // "Waiting for you" (a card with nothing to list) says its state itself.
    const state = outcome || (final ? 'not answered' : items.length ? 'waiting for your answer' : '');
    this.summary.textContent = state ? head + ' · ' + state : head;
    this.items.textContent = items.join('\n');
    // State as data, not classes: the part's class says only its kind.
    this.el.dataset.outcome = outcome;
    this.el.toggleAttribute('data-bare', items.length === 0);
  }
}

const NoticeView = class extends LineView {
  constructor(part, doc) {
    super(part, doc, 'part-notice');
  }
};

const VIEWS = {
  text: TextView,
  reasoning: ReasoningView,
  tool_call: ToolCallView,
  tool_result: ToolResultView,
  pause: PauseView,
  notice: NoticeView,
};

/** viewFor returns the view of a part (an unknown kind is drawn as a notice). */
export function viewFor(part, doc, hooks) {
  const View = VIEWS[part.kind] || NoticeView;
  return new View(part, doc, hooks);
}
