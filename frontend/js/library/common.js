// common.js — what the library's tabs share: following `library` events,
// the guard that keeps unsaved text from being left behind, the owner line
// of a shared item, a Markdown editor with the server's preview.

import { html, useEffect, useRef, useState } from '../../vendor/htm-preact/standalone.module.js';
import { call, on } from '../core/transport.js';
import { navigate } from '../core/router.js';
import { confirmAction } from '../core/ui.js';
import { Field } from '../core/fields.js';
import { Rendered } from '../core/html.js';

/**
 * useLibraryEvents calls reload when the library changes (a `library` event
 * of one of kinds, from this or another window, or the model writing a
 * note or a memory) and after a resync.
 */
export function useLibraryEvents(kinds, reload) {
  const latest = useRef(reload);
  latest.current = reload;
  useEffect(() => {
    let timer = 0;
    const soon = () => {
      clearTimeout(timer);
      timer = setTimeout(() => latest.current(), 60);
    };
    const off = on('library', (ev) => {
      if (!ev || !ev.kind || kinds.includes(ev.kind)) soon();
    });
    window.addEventListener('lembas:resync', soon);
    return () => {
      clearTimeout(timer);
      off();
      window.removeEventListener('lembas:resync', soon);
    };
  }, []);
}

const confirmLeave = () => confirmAction({
  title: 'Leave without saving?',
  body: 'Your changes have not been saved; leaving drops them.',
  confirmLabel: 'Leave',
  danger: true,
});

/**
 * useLeaveGuard keeps unsaved text from being dropped unnoticed: while
 * dirty, a click on a link within the app asks first, and so does closing
 * or reloading the page (the browser asks). It returns leave(href), which
 * the view's own buttons (Close, Cancel) go through.
 */
export function useLeaveGuard(dirty) {
  const dirtyRef = useRef(dirty);
  dirtyRef.current = dirty;
  useEffect(() => {
    const onClick = (e) => {
      if (!dirtyRef.current || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
      const a = e.target instanceof Element ? e.target.closest('a[href^="#"]') : null;
      if (!a) return;
      const href = a.getAttribute('href');
      if (href === location.hash) return;
      e.preventDefault();
      e.stopPropagation();
      confirmLeave().then((ok) => {
        if (!ok) return;
        dirtyRef.current = false;
        navigate(href);
      });
    };
    const onUnload = (e) => {
      if (!dirtyRef.current) return;
      e.preventDefault();
      e.returnValue = '';
    };
    document.addEventListener('click', onClick, true);
    window.addEventListener('beforeunload', onUnload);
    return () => {
      document.removeEventListener('click', onClick, true);
      window.removeEventListener('beforeunload', onUnload);
    };
  }, []);
  return async (href) => {
    if (dirtyRef.current && !(await confirmLeave())) return;
    dirtyRef.current = false;
    navigate(href);
  };
}

/**
 * Missing stands in a detail pane for an item that is not there (deleted,
 * or no longer shared): what happened, and the way back to the list.
 */
export function Missing({ id, what, back, backLabel }) {
  return html`
    <div class="card" id=${id}><div class="card-body">
      <p role="status">This ${what} is not here: it was deleted, or it is no longer shared with you.</p>
      <p><a href=${back}>${backLabel}</a></p>
    </div></div>`;
}

/** OwnerLine says whose a shared item is ("Shared by Samwise · read only"). */
export function OwnerLine({ item, id }) {
  if (!item || item.mine) return null;
  const name = item.owner && item.owner.name ? item.owner.name : 'someone';
  return html`<p class="library-owner" id=${id}>Shared with you by ${name} · read only</p>`;
}

/** SharedCount says how many an own item is shared with, or nothing. */
export function SharedCount({ item }) {
  if (!item || !item.mine || !(item.sharedWith > 0)) return null;
  return html`<span class="badge">Shared with ${item.sharedWith}</span>`;
}

/**
 * MarkdownEditor is a Markdown text field with a Write/Preview switch on
 * its label's line (the visible label; Field's own is for screen readers). The preview is the server's rendering (Library.Preview, the renderer
 * notes are shown with), never Markdown rendered here; the text field stays
 * in the page while it shows, hidden, so its undo history is kept.
 */
export function MarkdownEditor({ id, label, value, onValue, rows, hint }) {
  const [mode, setMode] = useState('write');
  const [preview, setPreview] = useState({ html: '', loading: false, error: '' });
  const seq = useRef(0);
  const show = async () => {
    setMode('preview');
    const n = ++seq.current;
    setPreview((p) => ({ ...p, loading: true, error: '' }));
    try {
      const r = await call('Library.Preview', { markdown: value || '' });
      if (n === seq.current) setPreview({ html: r && typeof r.html === 'string' ? r.html : '', loading: false, error: '' });
    } catch (err) {
      if (n === seq.current) setPreview({ html: '', loading: false, error: err.message });
    }
  };
  const write = () => {
    seq.current++;
    setMode('write');
  };
  const previewing = mode === 'preview';
  return html`
    <div class="md-editor">
      <div class="md-head">
        <span class="field-label" aria-hidden="true">${label}</span>
        <div class="md-modes" role="group" aria-label=${label + ': write or preview'}>
          <button type="button" class="btn btn-sm btn-ghost md-mode" id=${id + '-write'} aria-pressed=${previewing ? 'false' : 'true'}
            onClick=${write}>Write</button>
          <button type="button" class="btn btn-sm btn-ghost md-mode" id=${id + '-preview'} aria-pressed=${previewing ? 'true' : 'false'}
            onClick=${show}>Preview</button>
        </div>
      </div>
      <${Field} id=${id} label=${label} labelHidden as="textarea" inputClass="md-source" rows=${rows} value=${value} onValue=${onValue}
        hidden=${previewing} hint=${hint}
        after=${!!previewing && html`
          <div class="md-preview" id=${id + '-preview-box'} aria-live="polite">
            ${!!preview.loading && html`<p class="loading-line" role="status">Setting it in fair letters…</p>`}
            ${!!preview.error && html`<p class="error-note" role="alert">${preview.error}</p>`}
            ${!preview.loading && !preview.error && ((value || '').trim()
              ? html`<${Rendered} className="md library-md" id=${id + '-rendered'} markup=${preview.html} />`
              : html`<p class="muted">Nothing to preview yet.</p>`)}
          </div>`} />
    </div>`;
}

/**
 * RenderedMarkdown shows Markdown that arrives without its rendering (a
 * shared skill's body) as the server renders it (Library.Preview).
 */
export function RenderedMarkdown({ markdown, id }) {
  const [out, setOut] = useState(null);
  useEffect(() => {
    let live = true;
    call('Library.Preview', { markdown }).then(
      (r) => { if (live) setOut({ html: r && typeof r.html === 'string' ? r.html : '' }); },
      (err) => { if (live) setOut({ error: err.message }); },
    );
    return () => { live = false; };
  }, [markdown]);
  if (!out) return html`<p class="loading-line" role="status">Setting it in fair letters…</p>`;
  if (out.error) return html`<p class="error-note" role="alert">${out.error}</p>`;
  return html`<${Rendered} className="md library-md" id=${id} markup=${out.html} />`;
}
