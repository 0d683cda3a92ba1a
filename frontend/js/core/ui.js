// ui.js — shared pieces: icons, popovers and menus (focus trapped, Escape
// closes), modal dialogs (native <dialog>), toasts, model avatars and
// badges. Every string shown here is rendered as text.

import { html, useState, useEffect, useLayoutEffect, useRef, useCallback } from '../../vendor/htm-preact/standalone.module.js';
import { formatContext, monogram } from './format.js';
import { Field } from './fields.js';

// ---------- Icons ----------

const PATHS = {
  plus: 'M12 5v14M5 12h14',
  search: 'M11 18a7 7 0 1 0 0-14 7 7 0 0 0 0 14zM20 20l-4-4',
  more: 'M5 12h.01M12 12h.01M19 12h.01',
  folder: 'M3 7a2 2 0 0 1 2-2h4l2 2h8a2 2 0 0 1 2 2v8a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2z',
  chevronDown: 'M6 9l6 6 6-6',
  chevronRight: 'M9 6l6 6-6 6',
  chevronLeft: 'M15 6l-6 6 6 6',
  pin: 'M9 4h6l-1 6 4 3v2H6v-2l4-3zM12 15v5',
  trash: 'M4 7h16M9 7V4h6v3M6 7l1 13h10l1-13',
  copy: 'M9 9h10v11H9zM5 15V4h10',
  edit: 'M4 20h4L19 9l-4-4L4 16zM13 7l4 4',
  regenerate: 'M20 11a8 8 0 1 0-2.3 5.7M20 5v6h-6',
  continue: 'M5 12h12M13 6l6 6-6 6',
  stop: 'M7 7h10v10H7z',
  send: 'M12 19V5M6 11l6-6 6 6',
  close: 'M6 6l12 12M18 6L6 18',
  settings: 'M12 15a3 3 0 1 0 0-6 3 3 0 0 0 0 6zM19 12l2-1-1-3-2.2.3-1.6-1.6L16.5 4l-3-1L12 5h0l-1.5-2-3 1 .3 2.2-1.6 1.6L4 8l-1 3 2 1-2 1 1 3 2.2-.3 1.6 1.6-.3 2.2 3 1L12 19l1.5 2 3-1-.3-2.2 1.6-1.6 2.2.3 1-3z',
  sliders: 'M4 6h10M18 6h2M4 12h4M12 12h8M4 18h12M20 18h0M14 4v4M8 10v4M16 16v4',
  arrowDown: 'M12 5v14M6 13l6 6 6-6',
  arrowUp: 'M12 19V5M6 11l6-6 6 6',
  bell: 'M6 16V11a6 6 0 1 1 12 0v5l2 2H4zM10 20h4',
  check: 'M5 12l5 5 9-10',
  back: 'M19 12H5M11 6l-6 6 6 6',
  book: 'M5 4h12a2 2 0 0 1 2 2v14H7a2 2 0 0 1-2-2zM5 18a2 2 0 0 1 2-2h12',
};

export function Icon({ name, className }) {
  return html`<svg class=${'icon' + (className ? ' ' + className : '')} viewBox="0 0 24 24" aria-hidden="true" focusable="false"><path d=${PATHS[name] || ''} /></svg>`;
}

// ---------- Focus ----------

const FOCUSABLE = 'a[href], button:not([disabled]), input:not([disabled]):not([type="hidden"]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"]), summary';

export function focusables(root) {
  if (!root) return [];
  return [...root.querySelectorAll(FOCUSABLE)].filter((el) => !el.closest('[hidden]') && el.getClientRects().length > 0);
}

// trapTab keeps Tab and Shift+Tab inside root.
export function trapTab(e, root) {
  if (e.key !== 'Tab' || !root) return;
  const els = focusables(root);
  if (els.length === 0) {
    e.preventDefault();
    return;
  }
  const first = els[0];
  const last = els[els.length - 1];
  const active = document.activeElement;
  if (e.shiftKey && (active === first || !root.contains(active))) {
    e.preventDefault();
    last.focus();
  } else if (!e.shiftKey && (active === last || !root.contains(active))) {
    e.preventDefault();
    first.focus();
  }
}

/**
 * Popover is a non-modal panel anchored below its trigger. While open it
 * keeps focus inside, closes on Escape (focus returns to the trigger) and
 * on a click outside. `initialFocus` is a selector inside the panel.
 */
export function Popover({ open, onClose, anchorRef, label, className, initialFocus, children, role = 'dialog' }) {
  const ref = useRef(null);
  useEffect(() => {
    if (!open) return undefined;
    const panel = ref.current;
    const first = (initialFocus && panel.querySelector(initialFocus)) || focusables(panel)[0] || panel;
    first.focus({ preventScroll: true });
    const onDown = (e) => {
      if (panel.contains(e.target)) return;
      if (anchorRef && anchorRef.current && anchorRef.current.contains(e.target)) return;
      onClose(false);
    };
    document.addEventListener('pointerdown', onDown, true);
    return () => document.removeEventListener('pointerdown', onDown, true);
  }, [open]);
  if (!open) return null;
  const onKey = (e) => {
    if (e.key === 'Escape') {
      e.preventDefault();
      e.stopPropagation();
      onClose(true);
      if (anchorRef && anchorRef.current) anchorRef.current.focus();
      return;
    }
    trapTab(e, ref.current);
  };
  return html`
    <div class=${'popover' + (className ? ' ' + className : '')} role=${role} aria-modal="false"
      aria-label=${label} tabindex="-1" ref=${ref} onKeyDown=${onKey}>
      ${children}
    </div>`;
}

/**
 * MenuButton: an icon button opening a menu of actions. items is
 * [{label, run, danger?}]; arrow keys move, Enter runs, Escape closes.
 */
export function MenuButton({ label, items, className, icon = 'more', align = 'end' }) {
  const [open, setOpen] = useState(false);
  const btn = useRef(null);
  const menu = useRef(null);
  // The menu is fixed to the viewport, so a scrolling list (the sidebar)
  // does not clip it; it opens upwards when there is no room below.
  useLayoutEffect(() => {
    if (!open || !menu.current || !btn.current) return;
    const r = btn.current.getBoundingClientRect();
    const m = menu.current;
    const gap = 4;
    const mh = m.offsetHeight;
    const mw = m.offsetWidth;
    let top = r.bottom + gap;
    if (top + mh > window.innerHeight - gap) top = Math.max(gap, r.top - mh - gap);
    let left = align === 'end' ? r.right - mw : r.left;
    left = Math.max(gap, Math.min(left, window.innerWidth - mw - gap));
    m.style.top = `${Math.round(top)}px`;
    m.style.left = `${Math.round(left)}px`;
  }, [open]);

  useEffect(() => {
    if (!open) return undefined;
    const first = menu.current && menu.current.querySelector('[role="menuitem"]');
    if (first) first.focus();
    const onDown = (e) => {
      if (menu.current && menu.current.contains(e.target)) return;
      if (btn.current && btn.current.contains(e.target)) return;
      setOpen(false);
    };
    const onMove = (e) => {
      if (menu.current && e.target instanceof Node && menu.current.contains(e.target)) return;
      setOpen(false);
    };
    document.addEventListener('pointerdown', onDown, true);
    document.addEventListener('scroll', onMove, true);
    window.addEventListener('resize', onMove);
    return () => {
      document.removeEventListener('pointerdown', onDown, true);
      document.removeEventListener('scroll', onMove, true);
      window.removeEventListener('resize', onMove);
    };
  }, [open]);
  const close = (refocus) => {
    setOpen(false);
    if (refocus && btn.current) btn.current.focus();
  };
  const onKey = (e) => {
    const els = [...menu.current.querySelectorAll('[role="menuitem"]')];
    const i = els.indexOf(document.activeElement);
    if (e.key === 'ArrowDown') {
      e.preventDefault();
      els[(i + 1) % els.length].focus();
    } else if (e.key === 'ArrowUp') {
      e.preventDefault();
      els[(i - 1 + els.length) % els.length].focus();
    } else if (e.key === 'Home') {
      e.preventDefault();
      els[0].focus();
    } else if (e.key === 'End') {
      e.preventDefault();
      els[els.length - 1].focus();
    } else if (e.key === 'Escape') {
      e.preventDefault();
      e.stopPropagation();
      close(true);
    } else if (e.key === 'Tab') {
      e.preventDefault();
      close(true);
    }
  };
  return html`
    <span class="menu-anchor">
      <button type="button" ref=${btn} class=${'btn btn-ghost btn-icon btn-sm ' + (className || '')}
        aria-label=${label} title=${label} aria-haspopup="menu" aria-expanded=${open ? 'true' : 'false'}
        onClick=${() => setOpen((v) => !v)}>
        <${Icon} name=${icon} />
      </button>
      ${open && html`
        <div class=${'menu menu-' + align} role="menu" aria-label=${label} ref=${menu} onKeyDown=${onKey}>
          ${items.filter(Boolean).map((it) => html`
            <button type="button" role="menuitem" tabindex="-1" class=${'menu-item' + (it.danger ? ' is-danger' : '')}
              onClick=${() => { close(true); it.run(); }}>${it.label}</button>`)}
        </div>`}
    </span>`;
}

// ---------- Modal dialogs ----------

let dialogSetter = null;
const dialogQueue = [];

function showDialog(spec) {
  return new Promise((resolve) => {
    dialogQueue.push({ ...spec, resolve, opener: document.activeElement });
    if (dialogSetter) dialogSetter(dialogQueue[0]);
  });
}

/** ask shows a one-field dialog; resolves to the text, or null. */
export function ask({ title, label, value = '', confirmLabel = 'Save', placeholder = '' }) {
  return showDialog({ kind: 'ask', title, label, value, confirmLabel, placeholder });
}

/** confirmAction resolves to true when confirmed. */
export function confirmAction({ title, body, confirmLabel = 'OK', danger = false }) {
  return showDialog({ kind: 'confirm', title, body, confirmLabel, danger });
}

/** choose shows a select; options is [{value, label}]; resolves to a value or null. */
export function choose({ title, label, options, value, confirmLabel = 'Move' }) {
  return showDialog({ kind: 'choose', title, label, options, value, confirmLabel });
}

function DialogView({ spec, onDone }) {
  const ref = useRef(null);
  const [value, setValue] = useState(spec.value ?? '');
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) {
      if (typeof d.showModal === 'function') d.showModal();
      else d.setAttribute('open', '');
    }
    const field = d.querySelector('input, select');
    if (field) {
      field.focus();
      if (field.select) field.select();
    }
  }, []);
  const finish = (result) => {
    const d = ref.current;
    if (d && d.open && typeof d.close === 'function') d.close();
    onDone(result);
  };
  const submit = (e) => {
    e.preventDefault();
    if (spec.kind === 'ask') {
      const v = value.trim();
      if (!v) return;
      finish(v);
    } else if (spec.kind === 'choose') finish(value);
    else finish(true);
  };
  const onCancel = (e) => {
    e.preventDefault();
    finish(spec.kind === 'confirm' ? false : null);
  };
  return html`
    <dialog class="dialog" ref=${ref} aria-labelledby="dialog-title" oncancel=${onCancel}
      onKeyDown=${(e) => trapTab(e, ref.current)}>
      <form class="dialog-form" onSubmit=${submit}>
        <h2 id="dialog-title" class="dialog-title">${spec.title}</h2>
        ${spec.kind === 'confirm' && spec.body ? html`<p class="dialog-body">${spec.body}</p>` : null}
        ${spec.kind === 'ask' && html`
          <${Field} id="dialog-field" label=${spec.label} value=${value} placeholder=${spec.placeholder} onValue=${setValue} autocomplete="off" />`}
        ${spec.kind === 'choose' && html`
          <${Field} id="dialog-field" label=${spec.label} as="select" value=${value} options=${spec.options} onValue=${setValue} />`}
        <div class="dialog-actions">
          <button type="button" class="btn" onClick=${() => finish(spec.kind === 'confirm' ? false : null)}>Cancel</button>
          <button type="submit" class=${'btn ' + (spec.danger ? 'btn-danger' : 'btn-primary')}>${spec.confirmLabel}</button>
        </div>
      </form>
    </dialog>`;
}

export function DialogHost() {
  const [current, setCurrent] = useState(null);
  useEffect(() => {
    dialogSetter = setCurrent;
    if (dialogQueue.length) setCurrent(dialogQueue[0]);
    return () => { dialogSetter = null; };
  }, []);
  if (!current) return null;
  const done = (result) => {
    dialogQueue.shift();
    const opener = current.opener;
    current.resolve(result);
    setCurrent(dialogQueue[0] || null);
    if (!dialogQueue.length && opener && opener.isConnected && typeof opener.focus === 'function') opener.focus();
  };
  return html`<${DialogView} key=${dialogQueue.length + ':' + current.title} spec=${current} onDone=${done} />`;
}

// ---------- Toasts ----------

let toastSetter = null;
let toasts = [];
let toastSeq = 0;

/**
 * toast shows a short message at the bottom; with action {label, run} it
 * offers one button (e.g. Undo). Returns a function that dismisses it.
 */
export function toast(message, { action, timeout = 6000, error = false } = {}) {
  const id = ++toastSeq;
  toasts = [...toasts, { id, message: String(message), action, error }];
  if (toastSetter) toastSetter(toasts);
  const dismiss = () => {
    toasts = toasts.filter((t) => t.id !== id);
    if (toastSetter) toastSetter(toasts);
  };
  if (timeout > 0) setTimeout(dismiss, timeout);
  return dismiss;
}

export function toastError(prefix, err) {
  const msg = err && err.message ? err.message : String(err || 'Something went wrong.');
  return toast(prefix ? `${prefix}: ${msg}` : msg, { error: true, timeout: 9000 });
}

// KEEP_CLEAR are the controls that stay put while the page under them
// scrolls: toasts go above the highest of them that is on screen.
const KEEP_CLEAR = ['.chat-composer', '.jump-latest', '.shell.is-sidebar-open .sidebar-footer'];

// placeToasts puts the toasts over the middle of the main column, just
// above the composer (or the bottom of the window when there is none), so
// that they cover the transcript or the page, which scroll, and never the
// composer's buttons, the sidebar's account chip or the top bar. The
// values go to CSS variables that overlays.css positions the host with.
function placeToasts(el, last) {
  const main = document.getElementById('main');
  if (!main) return;
  const m = main.getBoundingClientRect();
  let bottom = window.innerHeight;
  for (const sel of KEEP_CLEAR) {
    const c = document.querySelector(sel);
    const r = c && c.getBoundingClientRect();
    if (r && r.height > 0 && r.top < bottom && r.bottom > 0) bottom = r.top;
  }
  const v = `${Math.round(m.left + m.width / 2)}|${Math.round(m.width)}|${Math.round(window.innerHeight - bottom)}`;
  if (v === last.current) return;
  last.current = v;
  const [x, w, b] = v.split('|');
  el.style.setProperty('--toasts-x', `${x}px`);
  el.style.setProperty('--toasts-room', `${w}px`);
  el.style.setProperty('--toasts-bottom', `${b}px`);
}

export function ToastHost() {
  const [list, setList] = useState(toasts);
  const ref = useRef(null);
  const last = useRef('');
  useEffect(() => {
    toastSetter = setList;
    return () => { toastSetter = null; };
  }, []);
  // While toasts show, they follow what they must keep clear of: the
  // composer grows as one types, a route change swaps it, "Jump to latest"
  // comes and goes, a phone's keyboard moves everything. One measurement a
  // frame, for the few seconds a toast lasts.
  const showing = list.length > 0;
  useLayoutEffect(() => {
    if (!showing || !ref.current) return undefined;
    let frame = 0;
    const tick = () => {
      if (ref.current) placeToasts(ref.current, last);
      frame = requestAnimationFrame(tick);
    };
    tick();
    return () => cancelAnimationFrame(frame);
  }, [showing]);
  const dismiss = (id) => {
    toasts = toasts.filter((t) => t.id !== id);
    setList(toasts);
  };
  return html`
    <div class="toasts" role="status" aria-live="polite" ref=${ref}>
      ${list.map((t) => html`
        <div class=${'toast' + (t.error ? ' is-error' : '')} key=${t.id}>
          <span class="toast-text">${t.message}</span>
          ${t.action && html`
            <button type="button" class="btn btn-sm toast-action"
              onClick=${() => { dismiss(t.id); t.action.run(); }}>${t.action.label}</button>`}
          <button type="button" class="btn btn-ghost btn-icon btn-sm" aria-label="Dismiss" title="Dismiss"
            onClick=${() => dismiss(t.id)}><${Icon} name="close" /></button>
        </div>`)}
    </div>`;
}

// ---------- Models ----------

export function Avatar({ model, size = '' }) {
  const [broken, setBroken] = useState(false);
  const name = model ? model.name || model.upstreamId || '' : '';
  const url = model && model.avatarUrl && !broken ? model.avatarUrl : '';
  const cls = 'avatar' + (size ? ' avatar-' + size : '');
  if (url) {
    return html`<img class=${cls} src=${url} alt="" width="32" height="32" onError=${() => setBroken(true)} />`;
  }
  return html`<span class=${cls + ' avatar-monogram'} aria-hidden="true">${monogram(name)}</span>`;
}

export function Badges({ model, showUnknownContext = false }) {
  if (!model) return null;
  const caps = model.capabilities || {};
  const ctx = formatContext(model.contextLength);
  const items = [];
  if (caps.vision) items.push(['vision', 'Vision']);
  if (caps.tools) items.push(['tools', 'Tools']);
  if (caps.reasoning) items.push(['reasoning', 'Reasoning']);
  if (ctx) items.push(['ctx', ctx + ' context']);
  else if (showUnknownContext) items.push(['ctx', 'Context unknown']);
  if (items.length === 0) return null;
  return html`<ul class="badges" aria-label="Capabilities">${items.map(([k, label]) => html`<li class=${'badge badge-' + k} key=${k}>${label}</li>`)}</ul>`;
}

// ---------- Misc ----------

/** useDebounced returns a function that calls fn after ms of quiet. */
export function useDebounced(fn, ms) {
  const timer = useRef(0);
  const latest = useRef(fn);
  latest.current = fn;
  useEffect(() => () => clearTimeout(timer.current), []);
  return useCallback((...args) => {
    clearTimeout(timer.current);
    timer.current = setTimeout(() => latest.current(...args), ms);
  }, [ms]);
}

/** CloseButton closes a details pane; label says what it closes ("Close the details"). */
export function CloseButton({ label, onClose }) {
  return html`
    <button type="button" class="btn btn-ghost btn-icon" aria-label=${label} title="Close" onClick=${onClose}>
      <${Icon} name="close" />
    </button>`;
}

export function ErrorNote({ error }) {
  if (!error) return null;
  return html`<p class="error-note" role="alert">${error.message || String(error)}</p>`;
}

/**
 * Pager moves through a list `limit` items at a time: Previous, "from–to of
 * total", Next. It shows nothing while everything fits on one page.
 */
export function Pager({ offset, limit, shown, total, onOffset }) {
  if (!total || total <= limit) return null;
  const from = offset + 1;
  const to = offset + shown;
  return html`
    <nav class="pager" aria-label="Pages">
      <button type="button" class="btn btn-sm" disabled=${offset === 0} onClick=${() => onOffset(Math.max(0, offset - limit))}>Previous</button>
      <span class="pager-text" role="status">${from}–${to} of ${total}</span>
      <button type="button" class="btn btn-sm" disabled=${offset + limit >= total} onClick=${() => onOffset(offset + limit)}>Next</button>
    </nav>`;
}
