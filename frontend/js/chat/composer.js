// composer.js — the message box. Enter sends, Shift+Enter is a newline,
// nothing is sent while an input method is composing (Enter then confirms
// the composition) or when the box is empty. One button: Send when idle,
// Stop while the open chat is replying. The draft is saved ~500 ms after
// typing stops, and flushed when the composer goes away.
//
// The menu: a character that starts a token (`/` at the start of the
// message for a command, `@` for a reference) opens one menu of what can
// follow it, filtered as the token is typed. What each character offers
// comes from the trigger registry (registerTrigger): commands.js gives
// `/`, mentions.js `@`. Arrow keys move, Enter or Tab chooses the
// highlighted item, Tab with none highlighted completes the items' common
// prefix (the only one: chooses it), Escape closes. `@` highlights its
// first item as soon as a letter follows (spec.pick). Enter with nothing
// highlighted sends, and a message is run as a command only on an exact
// match (commands.js parseSlash): anything else is sent as written.
//
// The mirror: a textarea cannot style its own text, so .composer__mirror
// sits behind it holding the same text in transparent glyphs, with a
// rounded background behind each token. Everything that decides where a
// character lands is declared once for both in composer.css, and the
// mirror's scroll follows the textarea's.

import { html, useState, useEffect, useRef, useLayoutEffect } from '../../vendor/htm-preact/standalone.module.js';
import { Icon, toast } from '../core/ui.js';
import { AttachmentList, SmallIcon, filesFrom, formatSize, droppedFile, useAttachments, isUploading, dropTarget } from './attachments.js';
import { on, isDesktop } from '../core/transport.js';
import { DictateButton } from './voice.js';
import { KnowledgeScope, LibraryAttach } from '../library/inchat.js';
import { slashTrigger, parseSlash, execute } from './commands.js';
import { FILL_EVENT } from './suggestions.js';
import { trigger as mentionTrigger } from './mentions.js';
import { useMe } from '../core/store.js';

export const DRAFT_DELAY_MS = 500;

// A last line that is empty still takes its height in the mirror.
const ZWSP = '\u200b';

// ---------- The trigger registry ----------

const triggers = new Map();

/**
 * registerTrigger makes char open the composer's menu. spec:
 *   label                what the menu is called for this char (its
 *                        aria-label: "Commands", "References")
 *   items(query, ctx) → [{key, text, label, hint?, note?}] (or a promise of
 *                        them; a note item only says something, shown muted):
 *                        what to offer for the token typed so far (query:
 *                        the token without char); ctx is the composer's
 *                        context (chat.js's commands context, with
 *                        refs {chatId, agent} and library)
 *   choose(item, ctx)    do it; ctx: {app, text, replace(str) (the token
 *                        becomes str), clear(), restore(str), attach(file)
 *                        (a ready attachment, as "Attach from library"
 *                        adds), focus()}
 *   atStart              only at the very start of the message (else at
 *                        the start or after whitespace)
 *   spaces               the token runs on past spaces (to the caret, on
 *                        its line)
 *   highlight(word, ctx) whether the mirror marks this word (default: every
 *                        word starting with char)
 *   pick                 once something follows char, the first item is
 *                        highlighted, so Enter or Tab chooses it (a picker:
 *                        "@sco" and Enter meant scones.md, and was sent as
 *                        "@sco"); without it nothing is until an arrow key,
 *                        and Enter sends what was written
 * It returns a function that takes the entry away again.
 */
export function registerTrigger(char, spec) {
  triggers.set(char, spec);
  return () => {
    if (triggers.get(char) === spec) triggers.delete(char);
  };
}

registerTrigger('/', slashTrigger);
registerTrigger('@', mentionTrigger);

/** tokenAt finds the trigger token the caret is in: {char, spec, start, end, query} or null. */
export function tokenAt(text, caret) {
  for (const [char, spec] of triggers) {
    if (spec.atStart) {
      if (text[0] !== char || caret < 1) continue;
      const query = text.slice(1, caret);
      if (query.includes('\n') || (!spec.spaces && /\s/.test(query))) continue;
      return { char, spec, start: 0, end: caret, query };
    }
    let i = caret - 1;
    while (i >= 0 && !/\s/.test(text[i]) && text[i] !== char) i--;
    if (i < 0 || text[i] !== char || (i > 0 && !/\s/.test(text[i - 1]))) continue;
    return { char, spec, start: i, end: caret, query: text.slice(i + 1, caret) };
  }
  return null;
}

/** segments splits text into plain runs and the tokens the mirror marks. */
export function segments(text, ctx) {
  const marks = [];
  for (const [char, spec] of triggers) {
    const ok = (w) => (spec.highlight ? spec.highlight(w, ctx) : w.length > 1);
    if (spec.atStart) {
      const m = text[0] === char ? /^\S+/.exec(text) : null;
      if (m && ok(m[0])) marks.push([0, m[0].length]);
      continue;
    }
    const re = new RegExp('(^|\\s)(' + char.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') + '\\S+)', 'g');
    for (let m; (m = re.exec(text));) {
      const at = m.index + m[1].length;
      if (ok(m[2])) marks.push([at, at + m[2].length]);
    }
  }
  marks.sort((a, b) => a[0] - b[0]);
  const out = [];
  let pos = 0;
  for (const [a, b] of marks) {
    if (a < pos) continue;
    if (a > pos) out.push({ text: text.slice(pos, a) });
    out.push({ text: text.slice(a, b), token: true });
    pos = b;
  }
  if (pos < text.length) out.push({ text: text.slice(pos) });
  return out;
}

function commonPrefix(list) {
  if (!list.length) return '';
  let p = list[0];
  for (const s of list) {
    let i = 0;
    while (i < p.length && i < s.length && p[i].toLowerCase() === s[i].toLowerCase()) i++;
    p = p.slice(0, i);
  }
  return p;
}

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
 *   commands     the context commands and triggers run with (chat.js's
 *                commandContext; null: only the global commands)
 *   meter        the context meter (compact.js), shown above the bar
 */
export function Composer({ draft = '', saveDraft, onDraft, streaming, disabled, disabledReason, onSend, onStop, autoFocus, placeholder, vision = true, tools = [], toolsOff = false, onToolsOff, library = null, commands = null, refs = null, meter = null }) {
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
  const mirror = useRef(null);
  // The menu: {char, start, end, query, items, index} (index -1: nothing
  // highlighted), or null. dismissed: the token Escape closed it on.
  const [menu, setMenu] = useState(null);
  const dismissed = useRef('');
  const caretTo = useRef(-1); // where the caret goes once the text is drawn
  // The context triggers run with: chat.js's commands context, with the
  // chat's refs ({chatId, agent}), the library and whether the person may
  // attach files (canUpload: an `@` reference is an upload) for `@`.
  // Unknown (not read yet, or a server without accounts) counts as
  // allowed: the server refuses anyway, and a menu that says "not
  // allowed" to someone who is would be worse.
  const { me } = useMe();
  const canUpload = !me || !!me.admin || !Array.isArray(me.permissions) || me.permissions.includes('files.upload');
  const app = useRef(commands);
  app.current = { ...(refs || {}), library, canUpload, ...(commands || {}) };

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

  // A suggestion card fills the box (suggestions.js fillComposer).
  useEffect(() => {
    const fill = (e) => {
      const v = String(e.detail || '');
      setText(v);
      schedule(v);
      const el = ta.current;
      // Focused at once (a test's next look, or the next key, finds it
      // there); the caret goes to the end once the text is drawn.
      if (el) {
        el.focus({ preventScroll: true });
        requestAnimationFrame(() => el.setSelectionRange(v.length, v.length));
      }
    };
    window.addEventListener(FILL_EVENT, fill);
    return () => window.removeEventListener(FILL_EVENT, fill);
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
    if (caretTo.current >= 0) {
      const at = caretTo.current;
      caretTo.current = -1;
      el.setSelectionRange(at, at);
      refreshMenu(el.value, at);
    }
    syncScroll();
  }, [text]);

  const syncScroll = () => {
    if (mirror.current && ta.current) mirror.current.scrollTop = ta.current.scrollTop;
  };

  // refreshMenu opens, filters or closes the menu for the token at the
  // caret. A trigger's items may come as a promise (a call): a late answer
  // for a token no longer typed is dropped.
  const menuSeq = useRef(0);
  const refreshMenu = (value, caret) => {
    const tok = tokenAt(value, caret);
    const seq = ++menuSeq.current;
    if (!tok) {
      dismissed.current = '';
      setMenu(null);
      return;
    }
    const id = tok.char + tok.start + ':' + tok.query;
    if (dismissed.current && dismissed.current === id) return;
    dismissed.current = '';
    const apply = (items) => {
      if (seq !== menuSeq.current) return;
      const list = Array.isArray(items) ? items : [];
      const first = tok.spec.pick && tok.query ? list.findIndex((it) => !it.note) : -1;
      setMenu((old) => (list.length ? { ...tok, items: list, index: old && old.char === tok.char && old.query === tok.query ? Math.min(old.index, list.length - 1) : first } : null));
    };
    let got;
    try {
      got = tok.spec.items(tok.query, app.current);
    } catch (err) {
      console.warn('lembas: menu items:', err);
      got = [];
    }
    if (got && typeof got.then === 'function') got.then(apply, () => apply([]));
    else apply(got);
  };

  // The library's bases come after the page: an @ typed before them
  // offered nothing, and stayed so until the next key. They are asked
  // again once the bases are known.
  const baseCount = library && library.bases ? library.bases.length : 0;
  useEffect(() => {
    const el = ta.current;
    if (!baseCount || !el || document.activeElement !== el) return;
    const tok = tokenAt(el.value, el.selectionEnd);
    if (tok && tok.char === '@') refreshMenu(el.value, el.selectionEnd);
  }, [baseCount]);

  // setValue puts v in the box with the caret at caret (the draft follows).
  const setValue = (v, caret = v.length) => {
    caretTo.current = caret;
    setText(v);
    schedule(v);
  };

  // The menu on screen may be for a shorter token than the one typed (its
  // items came before the last key's answer): the choice replaces the whole
  // token at the caret, not only what was typed when the menu was drawn.
  const chooseItem = (m, item) => {
    const el = ta.current;
    const value = el ? el.value : text;
    const now = el ? tokenAt(value, el.selectionEnd) : null;
    const end = now && now.char === m.char && now.start === m.start ? now.end : m.end;
    menuSeq.current++;
    setMenu(null);
    m.spec.choose(item, {
      app: app.current,
      text: value,
      replace: (str) => setValue(value.slice(0, m.start) + str + value.slice(end), m.start + str.length),
      clear: () => { caretTo.current = -1; setText(''); schedule(''); },
      restore: (str) => { if (ta.current && ta.current.value === '') setValue(str); },
      attach: (file) => attachFromLibrary(file),
      focus: () => { if (ta.current) ta.current.focus({ preventScroll: true }); },
    });
    if (ta.current) ta.current.focus({ preventScroll: true });
  };

  // onMenuKey handles the keys the open menu takes; true when it took one.
  const onMenuKey = (e) => {
    const m = menu;
    if (!m || !m.items.length || composing.current || e.isComposing) return false;
    const n = m.items.length;
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      const step = e.key === 'ArrowDown' ? 1 : -1;
      setMenu({ ...m, index: m.index < 0 ? (step > 0 ? 0 : n - 1) : (m.index + step + n) % n });
      return true;
    }
    if (e.key === 'Escape') {
      dismissed.current = m.char + m.start + ':' + m.query;
      setMenu(null);
      e.stopPropagation();
      return true;
    }
    if (e.key === 'Enter' && !e.shiftKey && !e.altKey && m.index >= 0) {
      chooseItem(m, m.items[m.index]);
      return true;
    }
    if (e.key === 'Tab' && !e.shiftKey && !e.ctrlKey && !e.altKey && !e.metaKey) {
      if (m.index >= 0) chooseItem(m, m.items[m.index]);
      else if (n === 1) chooseItem(m, m.items[0]);
      else {
        const typed = text.slice(m.start, m.end);
        const prefix = commonPrefix(m.items.map((it) => it.text));
        if (prefix.length > typed.length) {
          const v = text.slice(0, m.start) + prefix + text.slice(m.end);
          setValue(v, m.start + prefix.length);
        } else setMenu({ ...m, index: 0 });
      }
      return true;
    }
    return false;
  };

  const schedule = (v) => {
    if (onDraft) onDraft(v);
    pending.current = v;
    clearTimeout(timer.current);
    timer.current = setTimeout(flush, DRAFT_DELAY_MS);
  };

  const uploading = isUploading(files);
  const ready = files.filter((f) => f.status === 'ready');

  const submit = async () => {
    let v = text;
    // A slash command runs on an exact match only, and whatever the chat
    // is doing (/stop while it replies, /help with no model); `//x` is
    // sent as `/x`; anything else is a message.
    const cmd = parseSlash(v, app.current);
    if (cmd && cmd.command) {
      clearTimeout(timer.current);
      pending.current = null;
      setText('');
      setMenu(null);
      if (save.current) save.current('');
      if (onDraft) onDraft('');
      const ok = await execute(cmd, app.current);
      if (!ok) setText((cur) => (cur === '' ? v : cur));
      return;
    }
    if (cmd && cmd.escaped !== undefined) v = cmd.escaped;
    if ((!v.trim() && ready.length === 0) || streaming || disabled || sending) return;
    if (uploading) {
      toast('Wait for the files to finish uploading.');
      return;
    }
    clearTimeout(timer.current);
    pending.current = null;
    setText('');
    setMenu(null);
    setSending(true);
    let ok = false;
    try {
      ok = await onSend(v, ready.map((f) => f.id));
    } finally {
      setSending(false);
    }
    if (!ok) {
      setText((cur) => (cur === '' ? text : cur));
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
    if (onMenuKey(e)) {
      e.preventDefault();
      return;
    }
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
      <div class="composer-field">
        ${menu && menu.items.length ? html`<${ComposerMenu} menu=${menu} onChoose=${(item) => chooseItem(menu, item)} />` : null}
        <div class="composer__mirror" ref=${mirror} aria-hidden="true">${segments(text, app.current).map((sg, i) => (sg.token
          ? html`<span key=${i} class="composer__token">${sg.text}</span>` : sg.text))}${ZWSP}</div>
        <textarea id="composer-input" class="composer-input" ref=${ta} rows="1" value=${text}
          placeholder=${placeholder || 'Write a message'} aria-describedby=${disabledReason ? 'composer-note' : undefined}
          role="combobox" aria-autocomplete="list" aria-haspopup="listbox" aria-expanded=${menu && menu.items.length ? 'true' : 'false'}
          aria-controls=${menu && menu.items.length ? 'composer-menu' : undefined}
          aria-activedescendant=${menu && menu.index >= 0 ? 'composer-menu-' + menu.index : undefined}
          onInput=${(e) => { const el = e.currentTarget; setText(el.value); schedule(el.value); refreshMenu(el.value, el.selectionEnd); }}
          onKeyDown=${onKeyDown} onPaste=${onPaste} onScroll=${syncScroll}
          onKeyUp=${(e) => { if (/^(ArrowLeft|ArrowRight|Home|End)$/.test(e.key)) refreshMenu(e.currentTarget.value, e.currentTarget.selectionEnd); }}
          onClick=${(e) => refreshMenu(e.currentTarget.value, e.currentTarget.selectionEnd)}
          onBlur=${() => setMenu(null)}
          oncompositionstart=${() => { composing.current = true; }}
          oncompositionend=${() => { setTimeout(() => { composing.current = false; }, 0); }}></textarea>
      </div>
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

// ComposerMenu is the list the open menu shows, above the box. An item is
// chosen on pointerdown (prevented, so the box keeps its focus and the
// menu is not closed by a blur first).
function ComposerMenu({ menu, onChoose }) {
  const list = useRef(null);
  useEffect(() => {
    const el = list.current && list.current.querySelector('.is-active');
    if (el) el.scrollIntoView({ block: 'nearest' });
  }, [menu.index]);
  return html`
    <ul class="composer-menu" id="composer-menu" role="listbox" ref=${list}
      aria-label=${menu.spec.label || 'Suggestions'}>
      ${menu.items.map((it, i) => html`
        <li key=${it.key} id=${'composer-menu-' + i} role="option" aria-selected=${i === menu.index ? 'true' : 'false'}
          class=${'composer-menu-item' + (i === menu.index ? ' is-active' : '') + (it.note ? ' is-note' : '')}
          onPointerDown=${(e) => { e.preventDefault(); onChoose(it); }}>
          <span class="composer-menu-label">${it.label}</span>
          ${it.hint ? html`<span class="composer-menu-hint">${it.hint}</span>` : null}
        </li>`)}
    </ul>`;
}
