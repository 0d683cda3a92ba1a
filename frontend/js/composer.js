// composer.js — the message box. Enter sends, Shift+Enter is a newline,
// nothing is sent while an input method is composing (Enter then confirms
// the composition) or when the box is empty. One button: Send when idle,
// Stop while the open chat is replying. The draft is saved ~500 ms after
// typing stops, and flushed when the composer goes away.

import { html, useState, useEffect, useRef, useLayoutEffect } from '../vendor/htm-preact/standalone.module.js';
import { Icon } from './ui.js';

export const DRAFT_DELAY_MS = 500;

/**
 * isSendKey decides whether a keydown in the box sends. Exported so it can
 * be driven without a browser.
 */
export function isSendKey(e, composing) {
  if (e.key !== 'Enter') return false;
  if (e.shiftKey || e.altKey) return false;
  // isComposing covers most engines; keyCode 229 is the IME's own keydown
  // (WebKit sends Enter that confirms a composition with isComposing false);
  // `composing` is our own compositionstart/compositionend flag.
  if (e.isComposing || e.keyCode === 229 || composing) return false;
  return true;
}

/**
 * Composer props:
 *   draft        the text to start with
 *   saveDraft    fn(text): persist the draft (called debounced and on unmount)
 *   onDraft      fn(text): optional, told of every change at once (cheap, local)
 *   streaming    the open chat is replying: the button is Stop
 *   disabled     nothing can be sent (no model, say); the reason in disabledReason
 *   onSend(text) resolves to true when the message was accepted
 *   onStop()
 *   autoFocus
 */
export function Composer({ draft = '', saveDraft, onDraft, streaming, disabled, disabledReason, onSend, onStop, autoFocus, placeholder }) {
  const [text, setText] = useState(draft);
  const [sending, setSending] = useState(false);
  const ta = useRef(null);
  const composing = useRef(false);
  const timer = useRef(0);
  const pending = useRef(null); // a draft not yet saved
  const save = useRef(saveDraft);
  save.current = saveDraft;

  const flush = () => {
    clearTimeout(timer.current);
    if (pending.current !== null && save.current) {
      const v = pending.current;
      pending.current = null;
      save.current(v);
    }
  };

  useEffect(() => {
    const onHide = () => flush();
    window.addEventListener('pagehide', onHide);
    return () => {
      window.removeEventListener('pagehide', onHide);
      flush();
    };
  }, []);

  useEffect(() => {
    if (autoFocus && ta.current) ta.current.focus({ preventScroll: true });
  }, []);

  useLayoutEffect(() => {
    const el = ta.current;
    if (!el) return;
    el.style.height = 'auto';
    el.style.height = el.scrollHeight + 2 + 'px';
  }, [text]);

  const schedule = (v) => {
    if (onDraft) onDraft(v);
    pending.current = v;
    clearTimeout(timer.current);
    timer.current = setTimeout(flush, DRAFT_DELAY_MS);
  };

  const submit = async () => {
    const v = text;
    if (!v.trim() || streaming || disabled || sending) return;
    clearTimeout(timer.current);
    pending.current = null;
    setText('');
    setSending(true);
    let ok = false;
    try {
      ok = await onSend(v);
    } finally {
      setSending(false);
    }
    if (!ok) {
      setText((cur) => (cur === '' ? v : cur));
    } else {
      if (onDraft) onDraft('');
      if (save.current) save.current('');
    }
    if (ta.current) ta.current.focus({ preventScroll: true });
  };

  // Preact adds a listener for "onFooBar" as "FooBar" unless the element
  // has an "onfoobar" property, which composition events lack: they are
  // written in lower case above so the listener is "compositionstart".
  const onKeyDown = (e) => {
    if (isSendKey(e, composing.current)) {
      e.preventDefault();
      submit();
    }
  };

  const onSubmit = (e) => {
    e.preventDefault();
    if (streaming) onStop();
    else submit();
  };

  const canSend = !!text.trim() && !disabled && !sending;
  return html`
    <form class="composer" onSubmit=${onSubmit}>
      <label class="visually-hidden" for="composer-input">Message</label>
      <textarea id="composer-input" class="composer-input" ref=${ta} rows="1" value=${text}
        placeholder=${placeholder || 'Write a message'} aria-describedby=${disabledReason ? 'composer-note' : undefined}
        onInput=${(e) => { setText(e.currentTarget.value); schedule(e.currentTarget.value); }}
        onKeyDown=${onKeyDown}
        oncompositionstart=${() => { composing.current = true; }}
        oncompositionend=${() => { setTimeout(() => { composing.current = false; }, 0); }}></textarea>
      <div class="composer-bar">
        ${disabledReason ? html`<p id="composer-note" class="composer-note">${disabledReason}</p>` : html`<p class="composer-hint">Enter to send, Shift+Enter for a new line</p>`}
        <button type="submit" class=${'btn btn-primary composer-send' + (streaming ? ' is-stop' : '')} id="composer-button"
          disabled=${!streaming && !canSend}>
          <${Icon} name=${streaming ? 'stop' : 'send'} /><span>${streaming ? 'Stop' : 'Send'}</span>
        </button>
      </div>
    </form>`;
}
