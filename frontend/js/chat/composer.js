// composer.js — the message box. Enter sends, Shift+Enter is a newline,
// nothing is sent while an input method is composing (Enter then confirms
// the composition) or when the box is empty. One button: Send when idle,
// Stop while the open chat is replying. The draft is saved ~500 ms after
// typing stops, and flushed when the composer goes away.

import { html, useState, useEffect, useRef, useLayoutEffect } from '../../vendor/htm-preact/standalone.module.js';
import { Icon, toast } from '../core/ui.js';
import { AttachmentList, SmallIcon, filesFrom, formatSize, droppedFile, useAttachments, isUploading, dropTarget } from './attachments.js';
import { on, isDesktop } from '../core/transport.js';
import { DictateButton } from './voice.js';
import { KnowledgeScope, LibraryAttach } from '../library/inchat.js';

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
 *   onSend(text, attachmentIds) resolves to true when the message was accepted
 *   vision       the chosen model sees images (false: a warning before sending)
 *   tools        the tools the chosen model offers (empty: no tools switch)
 *   toolsOff, onToolsOff(off)  the chat's "tools off" switch
 *   onStop()
 *   autoFocus
 *   library      {bases, scope, setScope} when the person keeps a library
 *                (null: no knowledge control, no "Attach from library")
 *   meter        the context meter (compact.js), shown above the bar
 */
export function Composer({ draft = '', saveDraft, onDraft, streaming, disabled, disabledReason, onSend, onStop, autoFocus, placeholder, vision = true, tools = [], toolsOff = false, onToolsOff, library = null, meter = null }) {
  const [text, setText] = useState(draft);
  const [sending, setSending] = useState(false);
  const { files, setFiles, lim, add: addFiles, remove, refuse } = useAttachments();
  const [dragging, setDragging] = useState(false);
  const picker = useRef(null);
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

  // A document attached from the library is an unsent upload already.
  const attachFromLibrary = (v) => {
    if (lim && files.filter((f) => f.status !== 'error').length >= lim.maxFiles) {
      toast(`A message can carry at most ${lim.maxFiles} files.`, { error: true });
      return;
    }
    setFiles((fs) => fs.concat({ ...v, key: 'l' + v.id, status: 'ready' }));
    if (ta.current) ta.current.focus({ preventScroll: true });
  };

  const removeFile = (item) => {
    remove(item);
    if (ta.current) ta.current.focus({ preventScroll: true });
  };

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

  const uploading = isUploading(files);
  const ready = files.filter((f) => f.status === 'ready');

  const submit = async () => {
    const v = text;
    if ((!v.trim() && ready.length === 0) || streaming || disabled || sending) return;
    if (uploading) {
      toast('Wait for the files to finish uploading.');
      return;
    }
    clearTimeout(timer.current);
    pending.current = null;
    setText('');
    setSending(true);
    let ok = false;
    try {
      ok = await onSend(v, ready.map((f) => f.id));
    } finally {
      setSending(false);
    }
    if (!ok) {
      setText((cur) => (cur === '' ? v : cur));
    } else {
      setFiles((fs) => fs.filter((f) => !ready.includes(f)));
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

  const canSend = (!!text.trim() || ready.length > 0) && !uploading && !disabled && !sending;
  const attachAllowed = !lim || lim.allowed !== false;
  const imagesHidden = !vision && files.some((f) => f.kind === 'image' && f.status !== 'error');
  // Files dropped anywhere in the window are for the message being
  // written, not only those that land on the box: the window listens while
  // a composer is shown, and the box lights up while files are over the
  // window. dragenter/dragleave fire for every element crossed, hence the
  // count; dragover repeats at least twice a second while a drag is over
  // the page, so a missed dragleave clears itself.
  const drops = useRef(null);
  drops.current = { add: addFiles, refuse, allowed: attachAllowed };
  useEffect(() => {
    let depth = 0;
    let idle = 0;
    // In the desktop window a file from outside shows up as a URI list
    // (WebKitGTK keeps the files from the page); the app takes the drop.
    const desktop = isDesktop();
    const kinds = desktop ? ['Files', 'text/uri-list'] : ['Files'];
    const carries = (e) => !!e.dataTransfer && [...(e.dataTransfer.types || [])].some((t) => kinds.includes(t));
    const stop = () => { depth = 0; clearTimeout(idle); setDragging(false); };
    const enter = (e) => { if (carries(e) && drops.current.allowed) { depth++; setDragging(true); } };
    const leave = (e) => { if (carries(e) && --depth <= 0) stop(); };
    const over = (e) => {
      if (!carries(e) || !drops.current.allowed) return;
      e.preventDefault();
      e.dataTransfer.dropEffect = 'copy';
      setDragging(true);
      clearTimeout(idle);
      idle = setTimeout(stop, 1000);
    };
    const drop = (e) => {
      stop();
      if (desktop) {
        // The app takes the files from GTK and offers them as
        // "files-dropped" below; a WebKit that still handed the page the
        // files too would attach them twice, and the URI list must not
        // drop into the box as text.
        if (carries(e)) e.preventDefault();
        return;
      }
      if (!drops.current.allowed) return;
      const list = filesFrom(e.dataTransfer);
      if (!list.length) return;
      e.preventDefault();
      (dropTarget() || drops.current.add)(list);
    };
    const listeners = [['dragenter', enter], ['dragleave', leave], ['dragover', over], ['drop', drop], ['dragend', stop]];
    for (const [name, f] of listeners) window.addEventListener(name, f);
    // Files dropped onto the desktop window, offered by the app.
    const off = on('files-dropped', (offers) => {
      stop();
      if (!Array.isArray(offers) || !offers.length) return;
      if (!drops.current.allowed) {
        toast('You are not allowed to attach files; ask an administrator.', { error: true });
        return;
      }
      // A folder or an unreadable file becomes a chip that says why, as a
      // refused pick does (a toast while a sent turn is being edited).
      const refused = offers.filter((o) => !o.token).map((o) => ({ name: o.name, error: `${o.name} ${o.error || 'could not be attached'}.` }));
      const list = offers.filter((o) => o.token).map(droppedFile);
      const editing = dropTarget();
      if (editing) {
        for (const r of refused) toast(r.error, { error: true });
        if (list.length) editing(list);
        return;
      }
      drops.current.refuse(refused);
      if (list.length) drops.current.add(list);
    });
    return () => {
      clearTimeout(idle);
      off();
      for (const [name, f] of listeners) window.removeEventListener(name, f);
    };
  }, []);
  const onPaste = (e) => {
    const list = filesFrom(e.clipboardData);
    if (!list.length || !attachAllowed) return;
    // Text pastes as text; only files (a copied image) become attachments.
    if (!(e.clipboardData.getData('text/plain') || '').trim()) e.preventDefault();
    addFiles(list);
  };
  const limitHint = lim ? `Up to ${lim.maxFiles} files, ${formatSize(lim.maxBytes)} each: images, PDFs and text files. Pick, drop or paste them.` : '';
  return html`
    <form class=${'composer' + (dragging ? ' is-dragging' : '')} onSubmit=${onSubmit}>
      <${AttachmentList} items=${files} onRemove=${removeFile} label="Files to send" />
      ${imagesHidden ? html`<p class="composer-warning" role="status">This model cannot see images: they will not be sent to it. Choose a model marked for vision to ask about them.</p>` : null}
      <label class="visually-hidden" for="composer-input">Message</label>
      <textarea id="composer-input" class="composer-input" ref=${ta} rows="1" value=${text}
        placeholder=${placeholder || 'Write a message'} aria-describedby=${disabledReason ? 'composer-note' : undefined}
        onInput=${(e) => { setText(e.currentTarget.value); schedule(e.currentTarget.value); }}
        onKeyDown=${onKeyDown} onPaste=${onPaste}
        oncompositionstart=${() => { composing.current = true; }}
        oncompositionend=${() => { setTimeout(() => { composing.current = false; }, 0); }}></textarea>
      ${meter}
      <div class="composer-bar">
        <input type="file" multiple class="visually-hidden" tabindex="-1" aria-hidden="true" ref=${picker}
          accept=${lim ? lim.accept : undefined} id="composer-file"
          onChange=${(e) => { addFiles([...e.currentTarget.files]); e.currentTarget.value = ''; }} />
        <button type="button" class="btn btn-ghost composer-attach" id="composer-attach" disabled=${!attachAllowed}
          title=${attachAllowed ? limitHint : 'You are not allowed to attach files'} aria-label="Attach files"
          onClick=${() => picker.current && picker.current.click()}>
          <${SmallIcon} name="clip" />
        </button>
        ${library && library.bases.length > 0 ? html`
          <${LibraryAttach} bases=${library.bases} onAttach=${attachFromLibrary} disabled=${!attachAllowed} />
          <${KnowledgeScope} bases=${library.bases} scope=${library.scope} onChange=${library.setScope} />` : null}
        ${tools.length > 0 && onToolsOff ? html`
          <label class="composer-tools" title=${'Let the reply use: ' + tools.map((t) => t.name).join(', ')}>
            <input type="checkbox" id="composer-tools" checked=${!toolsOff}
              onChange=${(e) => onToolsOff(!e.currentTarget.checked)} />
            <span>Tools</span>
          </label>` : null}
        <${DictateButton} onText=${(t) => { setText((cur) => { const v = cur ? cur.replace(/\s*$/, ' ') + t : t; schedule(v); return v; }); if (ta.current) ta.current.focus({ preventScroll: true }); }} />
        ${disabledReason ? html`<p id="composer-note" class="composer-note">${disabledReason}</p>` : html`<p class="composer-hint">Enter to send, Shift+Enter for a new line</p>`}
        <button type="submit" class=${'btn btn-primary composer-send' + (streaming ? ' is-stop' : '')} id="composer-button"
          disabled=${!streaming && !canSend}>
          <${Icon} name=${streaming ? 'stop' : 'send'} /><span>${streaming ? 'Stop' : 'Send'}</span>
        </button>
      </div>
    </form>`;
}
