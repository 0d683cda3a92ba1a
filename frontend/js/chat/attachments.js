// attachments.js — files in the composer and in sent messages. The bytes go
// through the shared HTTP handler (POST /api/files) in the browser and in
// the desktop app alike (there it is the Wails asset server): never as
// base64 through the bridge. Names come from users and are rendered as text
// only; images are shown from GET /api/files/{id}, which serves only our
// re-encoded PNG and JPEG inline.

import { html, useState, useEffect, useRef } from '../../vendor/htm-preact/standalone.module.js';
import { call, ApiError, isDesktop } from '../core/transport.js';
import { sourceTitle } from './mentions.js';

// The limits until Files.Limits answers (the server's defaults).
const FALLBACK = { maxBytes: 32 << 20, maxFiles: 10, maxPending: 40, accept: '', kinds: '', allowed: true };
let limitsPromise = null;

/** limits resolves to {maxBytes, maxFiles, accept, kinds, allowed}. */
export function limits() {
  if (!limitsPromise) {
    limitsPromise = call('Files.Limits').catch(() => {
      limitsPromise = null;
      return FALLBACK;
    });
  }
  return limitsPromise;
}

export function formatSize(n) {
  if (!Number.isFinite(n) || n < 0) return '';
  if (n >= 1 << 20) return (n / (1 << 20)).toFixed(n >= 10 << 20 ? 0 : 1) + ' MB';
  if (n >= 1 << 10) return Math.round(n / (1 << 10)) + ' KB';
  return n + ' bytes';
}

async function readError(res) {
  let body = null;
  try {
    body = await res.json();
  } catch {
    // not JSON
  }
  const e = body && body.error;
  const kind = e && e.kind ? e.kind : res.status === 401 ? 'unauthorized' : res.status >= 500 ? 'unavailable' : 'invalid';
  return new ApiError(kind, (e && e.message) || `The server answered ${res.status}.`);
}

/**
 * multipartBytes builds a multipart/form-data body with one file field as
 * plain bytes. The desktop app needs it: a FormData holding a File or Blob,
 * sent to the Wails asset server, crashes the whole app (SIGSEGV inside
 * WebKitGTK's webkit_uri_scheme_request_get_http_body, which Wails v2.9.2
 * calls for every request); a body of bytes is read safely.
 */
export async function multipartBytes(file, name) {
  const boundary = '----lembas' + Math.random().toString(36).slice(2) + Date.now().toString(36);
  // The plain filename is an ASCII stand-in; filename* (RFC 5987) carries
  // the real one, and the server prefers it.
  const plain = String(name).replace(/[^\x20-\x7e]|["\\]/g, '_');
  const star = encodeURIComponent(String(name)).replace(/['()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
  const type = /^[\w.+-]+\/[\w.+-]+$/.test(file.type || '') ? file.type : 'application/octet-stream';
  const enc = new TextEncoder();
  const head = enc.encode(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${plain}"; filename*=UTF-8''${star}\r\n`
    + `Content-Type: ${type}\r\n\r\n`);
  const tail = enc.encode(`\r\n--${boundary}--\r\n`);
  const data = new Uint8Array(await file.arrayBuffer());
  const body = new Uint8Array(head.length + data.length + tail.length);
  body.set(head, 0);
  body.set(data, head.length);
  body.set(tail, head.length + data.length);
  return { body, type: `multipart/form-data; boundary=${boundary}` };
}

/** upload sends one File and resolves to its AttachmentView. */
export async function upload(file, name) {
  const fname = name || file.name || 'pasted';
  let init;
  if (file.token) {
    // A file dropped onto the desktop window: the app holds it under this
    // token (see droppedFile); only the token travels.
    return post('/api/files/dropped/' + encodeURIComponent(file.token), { method: 'POST', credentials: 'same-origin' });
  }
  if (isDesktop()) {
    const m = await multipartBytes(file, fname);
    init = { method: 'POST', body: m.body, headers: { 'Content-Type': m.type }, credentials: 'same-origin' };
  } else {
    const form = new FormData();
    form.append('file', file, fname);
    init = { method: 'POST', body: form, credentials: 'same-origin' };
  }
  return post('/api/files', init);
}

async function post(url, init) {
  let res;
  try {
    res = await fetch(url, init);
  } catch {
    throw new ApiError('unavailable', 'Could not reach the server to upload the file.');
  }
  if (!res.ok) throw await readError(res);
  return res.json();
}

const DROPPED_TYPES = { png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp', heic: 'image/heic', pdf: 'application/pdf' };

/**
 * droppedFile turns one of the desktop app's "files-dropped" offers
 * ({token, name, size}) into what the composer handles like a File: the
 * type is guessed from the name only to pick the chip's icon until the
 * upload says what the bytes are.
 */
export function droppedFile(offer) {
  const ext = (offer.name.match(/\.([a-z0-9]+)$/i) || [])[1] || '';
  return { token: offer.token, name: offer.name, size: offer.size, type: DROPPED_TYPES[ext.toLowerCase()] || 'text/plain' };
}

/** removeUpload deletes an unsent upload (best effort: the sweep takes the rest). */
export function removeUpload(id) {
  return fetch('/api/files/' + encodeURIComponent(id), { method: 'DELETE', credentials: 'same-origin' }).catch(() => {});
}

/**
 * check returns why file cannot be attached next to `count` others, or ''.
 * It runs before anything is uploaded.
 */
export function check(file, count, lim) {
  if (lim && lim.allowed === false) return 'You are not allowed to attach files; ask an administrator.';
  if (lim && count >= lim.maxFiles) return `A message can carry at most ${lim.maxFiles} files.`;
  if (lim && file.size > lim.maxBytes) {
    return `${file.name || 'This file'} is ${formatSize(file.size)}; the limit is ${formatSize(lim.maxBytes)}.`;
  }
  if (file.size === 0) return `${file.name || 'This file'} is empty.`;
  return '';
}

const ICON_PATHS = {
  file: 'M6 3h8l4 4v14H6zM14 3v4h4',
  image: 'M4 5h16v14H4zM4 16l5-5 4 4 3-3 4 4M15 9h.01',
  pdf: 'M6 3h8l4 4v14H6zM14 3v4h4M9 13h6M9 17h6',
  close: 'M6 6l12 12M18 6L6 18',
  clip: 'M8 12l6-6a3 3 0 0 1 4 4l-8 8a5 5 0 0 1-7-7l7-7',
};

export function SmallIcon({ name }) {
  return html`<svg class="icon" viewBox="0 0 24 24" aria-hidden="true" focusable="false"><path d=${ICON_PATHS[name] || ''} /></svg>`;
}

/**
 * Chip is one attachment: {name, kind, size, url?, status?, error?, note?}.
 * In the composer it has a remove button; in a sent message an image shows
 * its thumbnail and any file opens from its URL.
 */
export function Chip({ item, onRemove }) {
  const status = item.status || 'ready';
  const label = item.name || 'file';
  const icon = item.kind === 'image' ? 'image' : item.kind === 'pdf' ? 'pdf' : 'file';
  // Where an @ reference came from shows on the chip, not only in its
  // title: a touch screen has no hover.
  const size = item.sourceLabel ? `${formatSize(item.size)} · ${item.sourceLabel}` : formatSize(item.size);
  const detail = status === 'uploading' ? 'uploading…' : status === 'error' ? item.error : size;
  const body = html`
    ${item.kind === 'image' && item.url && status === 'ready'
      ? html`<img class="attach-thumb" src=${item.url} alt="" loading="lazy" width="40" height="40" />`
      : html`<span class="attach-icon"><${SmallIcon} name=${icon} /></span>`}
    <span class="attach-text">
      <span class="attach-name">${label}</span>
      ${detail ? html`<span class="attach-detail">${detail}</span>` : null}
      ${item.note && status === 'ready' ? html`<span class="attach-note">${item.note}</span>` : null}
    </span>`;
  return html`
    <li class=${'attach-chip is-' + status + ' kind-' + icon} data-kind=${item.kind || ''} title=${sourceTitle(item)}>
      ${item.url && status === 'ready' && !onRemove
        ? html`<a class="attach-link" href=${item.url} target="_blank" rel="noopener noreferrer">${body}</a>`
        : body}
      ${onRemove ? html`
        <button type="button" class="btn btn-ghost btn-sm attach-remove" onClick=${() => onRemove(item)}
          aria-label=${'Remove ' + label} title="Remove">
          <${SmallIcon} name="close" />
        </button>` : null}
    </li>`;
}

/** AttachmentList shows chips; onRemove makes them removable. */
export function AttachmentList({ items, onRemove, label }) {
  if (!items || items.length === 0) return null;
  return html`
    <ul class="attach-list" aria-label=${label || 'Attachments'}>
      ${items.map((it) => html`<${Chip} key=${it.key || it.id} item=${it} onRemove=${onRemove} />`)}
    </ul>`;
}

/** filesFrom returns the files of a paste or drop (DataTransfer). */
export function filesFrom(dt) {
  if (!dt) return [];
  if (dt.files && dt.files.length) return [...dt.files];
  const out = [];
  for (const it of dt.items || []) {
    if (it.kind === 'file') {
      const f = it.getAsFile();
      if (f) out.push(f);
    }
  }
  return out;
}

/** pastedName names a clipboard image, which browsers call "image.png". */
export function pastedName(file, i) {
  if (file.name && file.name !== 'image.png') return file.name;
  const ext = (file.type.split('/')[1] || 'png').replace(/[^a-z0-9]/g, '');
  const d = new Date();
  const pad = (n) => String(n).padStart(2, '0');
  return `pasted-${d.getFullYear()}${pad(d.getMonth() + 1)}${pad(d.getDate())}-${pad(d.getHours())}${pad(d.getMinutes())}${pad(d.getSeconds())}${i ? '-' + i : ''}.${ext}`;
}

/** isUploading says whether any of a message's files is still uploading. */
export function isUploading(files) {
  return files.some((f) => f.status === 'uploading');
}

/**
 * useAttachments holds the files of one message being written: chips
 * {key, name, size, kind, status: uploading|ready|error, id?, url?, error?,
 * sent?}. `sent` are the files of a sent message being edited: ready from
 * the start, and removing one only takes it off the list (the edit unbinds
 * it; the sweep takes it later). add checks each file against the limits
 * before uploading it; a refused or failed file becomes a chip that says
 * why. refuse adds chips for files that never reached the page ({name,
 * error}).
 *
 * With discard, uploads still unsent when the component goes away are
 * deleted (an edit that was cancelled), unless keep() was called (it is
 * being saved); otherwise they would count against the pending-upload
 * limit until the sweep. Call keep() before the save, not after: a saved
 * edit is a new version, a message of another id, and the page draws it
 * in place of the form before the save's caller resumes — the files the
 * form was unmounted with are bound by then (the DELETE was refused, 409).
 * keep(false) when the save failed.
 */
export function useAttachments(sent, { discard = false } = {}) {
  const [files, setFiles] = useState(() => (sent || []).map((a) => ({ ...a, key: 'a' + a.id, status: 'ready', sent: true })));
  const [lim, setLim] = useState(null);
  const current = useRef(files);
  current.current = files;
  const gone = useRef(false);
  const kept = useRef(false);
  useEffect(() => {
    let live = true;
    limits().then((l) => { if (live) setLim(l); });
    return () => {
      live = false;
      gone.current = true;
      if (discard && !kept.current) {
        for (const f of current.current) if (f.id && f.status === 'ready' && !f.sent) removeUpload(f.id);
      }
    };
  }, []);

  const newKey = () => 'f' + Math.random().toString(36).slice(2);
  const add = (list) => {
    let count = current.current.filter((f) => f.status !== 'error').length;
    const added = [];
    list.forEach((file, i) => {
      const name = file.name && file.name !== 'image.png' ? file.name : pastedName(file, i);
      const key = newKey();
      const why = check(file, count, lim);
      const kind = /^image\//.test(file.type) ? 'image' : file.type === 'application/pdf' ? 'pdf' : 'text';
      if (why) {
        added.push({ key, name, size: file.size, kind, status: 'error', error: why });
        return;
      }
      count++;
      added.push({ key, name, size: file.size, kind, status: 'uploading' });
      upload(file, name).then(
        (v) => {
          if (gone.current) {
            if (discard && !kept.current) removeUpload(v.id); // finished after a cancelled edit
            return;
          }
          setFiles((fs) => {
            if (!fs.some((f) => f.key === key)) {
              removeUpload(v.id); // removed while it uploaded
              return fs;
            }
            return fs.map((f) => (f.key === key ? { ...f, ...v, key, status: 'ready' } : f));
          });
        },
        (err) => setFiles((fs) => fs.map((f) => (f.key === key ? { ...f, status: 'error', error: err.message || 'The upload failed.' } : f))),
      );
    });
    if (added.length) setFiles((fs) => fs.concat(added));
  };
  const remove = (item) => {
    if (item.id && item.status === 'ready' && !item.sent) removeUpload(item.id);
    setFiles((fs) => fs.filter((f) => f.key !== item.key));
  };
  const refuse = (list) => {
    if (list.length) setFiles((fs) => fs.concat(list.map((r) => ({ key: newKey(), name: r.name, size: 0, kind: 'text', status: 'error', error: r.error }))));
  };
  const keep = (on = true) => { kept.current = on; };
  return { files, setFiles, lim, add, remove, refuse, keep };
}

// While a sent turn is being edited, files dropped anywhere in the window
// go to that edit rather than to the composer (the last editor opened
// wins). The composer owns the window's drop listeners and asks here.
const dropTargets = [];

/** useDropTarget makes add the receiver of dropped files while mounted. */
export function useDropTarget(add) {
  const current = useRef(add);
  current.current = add;
  useEffect(() => {
    const target = (list) => current.current(list);
    dropTargets.push(target);
    return () => {
      const i = dropTargets.indexOf(target);
      if (i >= 0) dropTargets.splice(i, 1);
    };
  }, []);
}

/** dropTarget is the open editor's receiver of dropped files, or null. */
export function dropTarget() {
  return dropTargets[dropTargets.length - 1] || null;
}
