// knowledge.js — Library → Knowledge: the person's knowledge bases and
// those shared with them. A list beside one base: its name and description
// (own bases: rename, delete, share), its documents (upload by picker or
// drop, with progress; download, delete), and a search over it. A shared
// base is read-only and says whose it is. Document names, notes and owners'
// names are untrusted text; only a search hit's snippet (escaped text with
// <mark>, from the server) goes through core/html.js.

import { html, useState, useEffect, useRef } from '../../vendor/htm-preact/standalone.module.js';
import { call, ApiError, isDesktop } from '../core/transport.js';
import { hrefs, navigate } from '../core/router.js';
import { CloseButton, Icon, confirmAction, toast, toastError, useDebounced } from '../core/ui.js';
import { Field, FormError, useFormError } from '../core/fields.js';
import { formatBytes, formatDate } from '../core/format.js';
import { Snippet } from '../core/html.js';
import { useLibraryEvents, Missing, OwnerLine, SharedCount } from './common.js';
import { ShareButton } from './share.js';

const href = (sub) => hrefs.library('knowledge', sub);

/** documentsWord says "1 document" or "n documents". */
function documentsWord(n) {
  return `${n} ${n === 1 ? 'document' : 'documents'}`;
}

/** readError turns a failed upload's answer into an ApiError. */
function readError(status, text) {
  let body = null;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  const e = body && body.error;
  const kind = e && e.kind ? e.kind : status === 401 ? 'unauthorized' : status >= 500 ? 'unavailable' : 'invalid';
  return new ApiError(kind, (e && e.message) || `The server answered ${status}.`);
}

/**
 * uploadBody is the multipart body of one document: the field "base"
 * before "file" (the server reads the base first). The desktop app sends
 * bytes: a FormData holding a File crashes WebKitGTK's asset server.
 */
async function uploadBody(base, file) {
  if (!isDesktop()) {
    const form = new FormData();
    form.append('base', String(base));
    form.append('file', file, file.name);
    return { body: form };
  }
  const boundary = '----lembas' + Math.random().toString(36).slice(2) + Date.now().toString(36);
  const name = String(file.name || 'document');
  const plain = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const star = encodeURIComponent(name).replace(/['()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
  const type = /^[\w.+-]+\/[\w.+-]+$/.test(file.type || '') ? file.type : 'application/octet-stream';
  const enc = new TextEncoder();
  const head = enc.encode(`--${boundary}\r\nContent-Disposition: form-data; name="base"\r\n\r\n${base}\r\n`
    + `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${plain}"; filename*=UTF-8''${star}\r\n`
    + `Content-Type: ${type}\r\n\r\n`);
  const tail = enc.encode(`\r\n--${boundary}--\r\n`);
  const data = new Uint8Array(await file.arrayBuffer());
  const body = new Uint8Array(head.length + data.length + tail.length);
  body.set(head, 0);
  body.set(data, head.length);
  body.set(tail, head.length + data.length);
  return { body, type: `multipart/form-data; boundary=${boundary}` };
}

/** uploadDocument sends one file into a base; onProgress gets 0..1. */
async function uploadDocument(base, file, onProgress) {
  const { body, type } = await uploadBody(base, file);
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', '/api/library/documents');
    xhr.withCredentials = true;
    if (type) xhr.setRequestHeader('Content-Type', type);
    xhr.upload.onprogress = (e) => { if (e.lengthComputable) onProgress(e.loaded / e.total); };
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        try {
          resolve(JSON.parse(xhr.responseText));
        } catch {
          reject(new ApiError('invalid', 'The server answered something unexpected.'));
        }
      } else {
        reject(readError(xhr.status, xhr.responseText));
      }
    };
    xhr.onerror = () => reject(new ApiError('unavailable', 'Could not reach the server to upload the file.'));
    xhr.send(body);
  });
}

function BaseForm({ base, onSaved, onClose }) {
  const creating = !base;
  const [name, setName] = useState(base ? base.name : '');
  const [description, setDescription] = useState(base ? base.description : '');
  const [busy, setBusy] = useState(false);
  const { error, fail, clear } = useFormError();
  const first = useRef(null);
  useEffect(() => { if (first.current) first.current.focus({ preventScroll: true }); }, []);
  const save = async (e) => {
    e.preventDefault();
    clear();
    if (!name.trim()) return fail('Give the knowledge base a name.');
    setBusy(true);
    try {
      const b = creating
        ? await call('Library.CreateBase', { name: name.trim(), description: description.trim() })
        : await call('Library.UpdateBase', base.id, { name: name.trim(), description: description.trim() });
      toast(creating ? `Created “${b.name}”.` : 'Saved.');
      onSaved(b);
    } catch (err) {
      fail(err.message);
      setBusy(false);
    }
  };
  const idp = base ? `kb-${base.id}` : 'kb-new';
  return html`
    <form class="card" id="kb-form" aria-labelledby=${idp + '-form-title'} onSubmit=${save} noValidate>
      <header class="card-header">
        <h2 class="card-title" id=${idp + '-form-title'}>${creating ? 'New knowledge base' : 'Rename'}</h2>
        <${CloseButton} label=${creating ? 'Close the new knowledge base' : 'Close the form'} onClose=${onClose} />
      </header>
      <div class="card-body form-grid">
        <${Field} id=${idp + '-name'} inputRef=${first} label="Name" value=${name} autocomplete="off" placeholder="Household papers" onValue=${setName} />
        <${Field} id=${idp + '-description'} as="textarea" rows="2" label="Description" value=${description} onValue=${setDescription}
          hint="What it holds. Replies see base names when they search." />
        <${FormError} error=${error} id="kb-error" />
      </div>
      <div class="card-actions">
        <span class="spacer"></span>
        <button type="button" class="btn" onClick=${onClose}>Cancel</button>
        <button type="submit" class="btn btn-primary" id="kb-save" disabled=${busy}>${busy ? 'Saving…' : creating ? 'Create' : 'Save'}</button>
      </div>
    </form>`;
}

/** Uploads shows the files on their way into a base, and why one failed. */
function Uploads({ items, onDismiss }) {
  if (!items.length) return null;
  return html`
    <ul class="kb-uploads" aria-label="Uploads" id="kb-uploads">
      ${items.map((u) => html`
        <li class=${'kb-upload' + (u.error ? ' is-error' : '')} key=${u.key}>
          <span class="kb-upload-name">${u.name}</span>
          ${u.error
            ? html`<span class="kb-upload-error" role="alert">${u.error}</span>
                <button type="button" class="btn btn-ghost btn-sm" onClick=${() => onDismiss(u.key)}>Dismiss</button>`
            : html`<progress class="kb-upload-progress" max="1" value=${u.progress} aria-label=${'Uploading ' + u.name}></progress>
                <span class="muted">${u.progress >= 1 ? 'Reading…' : Math.round(u.progress * 100) + '%'}</span>`}
        </li>`)}
    </ul>`;
}

/**
 * saveDocument is the document link's click in the desktop window, where
 * WebKitGTK saves nothing for a download link: the app asks where to save
 * it in the system's dialog and writes it (Desktop.SaveDocument, like a
 * chat export). In a browser the link is a plain download.
 */
async function saveDocument(e, doc) {
  if (!isDesktop()) return;
  e.preventDefault();
  try {
    const r = await call('Desktop.SaveDocument', doc.id);
    if (r && r.saved) toast(`Saved ${r.name}`, { timeout: 4000 });
  } catch (err) {
    toastError('Could not save the document', err);
  }
}

function DocumentRow({ doc, mine, onDeleted }) {
  const [busy, setBusy] = useState(false);
  const remove = async () => {
    const ok = await confirmAction({
      title: `Delete “${doc.name}”?`,
      body: 'Replies can no longer find it. Messages it was attached to keep their copy.',
      confirmLabel: 'Delete document',
      danger: true,
    });
    if (!ok) return;
    setBusy(true);
    try {
      await call('Library.DeleteDocument', doc.id);
      toast(`Deleted “${doc.name}”.`);
      onDeleted(doc);
    } catch (err) {
      toast(err.message, { error: true });
      setBusy(false);
    }
  };
  return html`
    <li class="kb-doc" key=${doc.id}>
      <span class="kb-doc-text">
        <a class="kb-doc-name" href=${doc.url} download=${doc.name} onClick=${(e) => saveDocument(e, doc)}>${doc.name}</a>
        <span class="kb-doc-sub muted">${formatBytes(doc.size)} · ${doc.kind === 'pdf' ? 'PDF' : 'Text'} · ${formatDate(doc.createdAt)}</span>
        ${!!doc.note && html`<span class="kb-doc-note">${doc.note}</span>`}
      </span>
      ${mine && html`
        <button type="button" class="btn btn-ghost btn-sm btn-danger-ghost kb-doc-delete" disabled=${busy}
          aria-label=${'Delete ' + doc.name} onClick=${remove}>Delete</button>`}
    </li>`;
}

function BaseSearch({ base }) {
  const [query, setQuery] = useState('');
  const [hits, setHits] = useState(null);
  const [error, setError] = useState('');
  const seq = useRef(0);
  const run = useDebounced(async (q) => {
    const n = ++seq.current;
    if (!q.trim()) {
      setHits(null);
      return;
    }
    try {
      const list = await call('Library.Search', { query: q, bases: [base.id] });
      if (n === seq.current) { setHits(Array.isArray(list) ? list : []); setError(''); }
    } catch (err) {
      if (n === seq.current) setError(err.message);
    }
  }, 250);
  return html`
    <section class="card" aria-labelledby="kb-search-title">
      <header class="card-header"><h3 class="card-title" id="kb-search-title">Search this base</h3></header>
      <div class="card-body">
        <label class="visually-hidden" for="kb-search">Search the documents</label>
        <input type="search" id="kb-search" class="input" placeholder="Words to find" value=${query}
          onInput=${(e) => { setQuery(e.currentTarget.value); run(e.currentTarget.value); }} />
        ${!!error && html`<p class="error-note" role="alert">${error}</p>`}
        ${!!hits && hits.length === 0 && html`<p class="muted" role="status">Nothing found.</p>`}
        ${!!hits && hits.length > 0 && html`
          <ul class="kb-hits" id="kb-hits" aria-label="Found">
            ${hits.map((h) => html`
              <li class="kb-hit" key=${h.documentId + ':' + h.seq}>
                <span class="kb-hit-name">${h.documentName}</span>
                <${Snippet} className="kb-hit-snippet" markup=${h.snippet} />
              </li>`)}
          </ul>`}
      </div>
    </section>`;
}

function BaseDetail({ base, onChanged, onDeleted, onClose }) {
  const [docs, setDocs] = useState(null);
  const [error, setError] = useState(null);
  const [uploads, setUploads] = useState([]);
  const [dragging, setDragging] = useState(false);
  const [renaming, setRenaming] = useState(false);
  const picker = useRef(null);
  const heading = useRef(null);
  const load = async () => {
    try {
      const list = await call('Library.Documents', base.id);
      setDocs(Array.isArray(list) ? list : []);
      setError(null);
    } catch (err) {
      setError(err);
    }
  };
  useEffect(() => {
    if (heading.current) heading.current.focus({ preventScroll: true });
  }, [base.id]);
  // The list follows `library` events; a base's documents follow it (an
  // upload or a delete from another window, or by the owner of a shared base).
  useEffect(() => { load(); }, [base.id, base.documents, base.updatedAt]);

  const add = (files) => {
    if (!base.mine) return;
    for (const file of files) {
      const key = 'u' + Math.random().toString(36).slice(2);
      setUploads((us) => us.concat({ key, name: file.name, progress: 0 }));
      const set = (patch) => setUploads((us) => us.map((u) => (u.key === key ? { ...u, ...patch } : u)));
      if (file.size === 0) {
        set({ error: `${file.name} is empty.` });
        continue;
      }
      uploadDocument(base.id, file, (p) => set({ progress: p })).then(
        (d) => {
          setUploads((us) => us.filter((u) => u.key !== key));
          setDocs((ds) => [d, ...(ds || []).filter((x) => x.id !== d.id)]);
          onChanged();
        },
        (err) => set({ error: err.message || 'The upload failed.' }),
      );
    }
  };
  const onDrop = (e) => {
    e.preventDefault();
    setDragging(false);
    const files = [...((e.dataTransfer && e.dataTransfer.files) || [])];
    if (files.length) add(files);
  };
  const onDragOver = (e) => {
    if (!base.mine || !e.dataTransfer || ![...(e.dataTransfer.types || [])].includes('Files')) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = 'copy';
    setDragging(true);
  };
  const remove = async () => {
    const ok = await confirmAction({
      title: `Delete the knowledge base “${base.name}”?`,
      body: `Its ${documentsWord(base.documents)} go with it, and replies can no longer search it. Messages its documents were attached to keep their copies.`,
      confirmLabel: 'Delete knowledge base',
      danger: true,
    });
    if (!ok) return;
    try {
      await call('Library.DeleteBase', base.id);
      toast(`Deleted “${base.name}”.`);
      onDeleted();
    } catch (err) {
      toast(err.message, { error: true });
    }
  };

  if (renaming) {
    return html`<${BaseForm} base=${base} onClose=${() => setRenaming(false)}
      onSaved=${(b) => { setRenaming(false); onChanged(b); }} />`;
  }
  return html`
    <section class="card kb-detail" aria-labelledby="kb-title" id="kb-detail">
      <header class="card-header">
        <h2 class="card-title" id="kb-title" tabindex="-1" ref=${heading}>${base.name}</h2>
        <${CloseButton} label="Close the knowledge base" onClose=${onClose} />
      </header>
      <div class="card-body">
        ${!!base.description && html`<p class="kb-description">${base.description}</p>`}
        <${OwnerLine} item=${base} id="kb-owner" />
        <p class="muted kb-meta">${documentsWord(base.documents)}, ${formatBytes(base.bytes)} <${SharedCount} item=${base} /></p>
        ${base.mine ? html`
          <div class=${'kb-drop' + (dragging ? ' is-dragging' : '')} id="kb-drop"
            onDragOver=${onDragOver} onDragLeave=${() => setDragging(false)} onDrop=${onDrop}>
            <input type="file" multiple class="visually-hidden" tabindex="-1" aria-hidden="true" aria-label="Add documents" ref=${picker} id="kb-file"
              accept=".pdf,.txt,.md,.markdown,.csv,.json,.html,.xml,.yaml,.yml,text/*,application/pdf"
              onChange=${(e) => { add([...e.currentTarget.files]); e.currentTarget.value = ''; }} />
            <button type="button" class="btn" id="kb-upload" onClick=${() => picker.current && picker.current.click()}>
              <${Icon} name="plus" /><span>Add documents</span>
            </button>
            <span class="muted">or drop PDF and text files here.</span>
          </div>` : html`<p class="muted" id="kb-readonly">You can read and search this base; only its owner changes it.</p>`}
        <${Uploads} items=${uploads} onDismiss=${(key) => setUploads((us) => us.filter((u) => u.key !== key))} />
        ${error && html`<p class="error-note" role="alert">${error.message}</p>`}
        ${!docs && !error ? html`<p class="loading-line" role="status">Loading…</p>` : null}
        ${!!docs && docs.length === 0 && html`<p class="muted">No documents yet.</p>`}
        ${!!docs && docs.length > 0 && html`
          <ul class="kb-docs" id="kb-docs" aria-label="Documents">
            ${docs.map((d) => html`<${DocumentRow} key=${d.id} doc=${d} mine=${base.mine}
              onDeleted=${(x) => { setDocs((ds) => ds.filter((y) => y.id !== x.id)); onChanged(); }} />`)}
          </ul>`}
      </div>
      ${base.mine && html`
        <div class="card-actions wrap">
          <button type="button" class="btn btn-danger-ghost" id="kb-delete" onClick=${remove}>Delete</button>
          <span class="spacer"></span>
          <${ShareButton} kind="base" id=${base.id} name=${base.name} onChange=${() => onChanged()} />
          <button type="button" class="btn" id="kb-rename" onClick=${() => setRenaming(true)}>Rename</button>
        </div>`}
    </section>
    <${BaseSearch} base=${base} />`;
}

/**
 * KnowledgeTab is the Library's Knowledge tab; sub is '' (the list),
 * 'new', or a base's id.
 */
export function KnowledgeTab({ sub }) {
  const [bases, setBases] = useState(null);
  const [error, setError] = useState(null);
  const selectedId = /^\d+$/.test(sub || '') ? Number(sub) : 0;
  const creating = sub === 'new';
  const load = async () => {
    try {
      const list = await call('Library.Bases');
      setBases(Array.isArray(list) ? list : []);
      setError(null);
    } catch (err) {
      setError(err);
    }
  };
  // Each navigation within the tab reads the list again: a link to a base
  // just shared, or one opened from elsewhere, is found.
  useEffect(() => { load(); }, [sub]);
  useLibraryEvents(['base', 'document'], load);
  const selected = bases && selectedId ? bases.find((b) => b.id === selectedId) : null;
  const missing = !!bases && selectedId > 0 && !selected;
  const close = () => navigate(href());
  const hasDetail = creating || !!selected || missing;
  const own = (bases || []).filter((b) => b.mine);
  const shared = (bases || []).filter((b) => !b.mine);
  const row = (b) => html`
    <li class=${'model-row' + (b.id === selectedId ? ' is-selected' : '')} key=${b.id}>
      <a class="model-row-main" href=${href(String(b.id))} aria-current=${b.id === selectedId ? 'true' : undefined}>
        <span class="model-row-text">
          <span class="model-row-name">${b.name}</span>
          <span class="model-row-sub">${b.mine ? '' : b.owner.name + ' · '}${documentsWord(b.documents)}${b.mine && b.sharedWith > 0 ? ' · shared' : ''}</span>
        </span>
      </a>
    </li>`;
  return html`
    <section class="settings-section" aria-labelledby="kb-section-title">
      <div class="section-head">
        <div>
          <h2 id="kb-section-title" class="section-title">Knowledge</h2>
          <p class="muted">Documents replies can search when they need them (with a model that uses tools). Nothing is sent until a reply searches.</p>
        </div>
        <a class="btn btn-primary" href=${href('new')} id="kb-create"><${Icon} name="plus" /><span>New base</span></a>
      </div>
      ${error && html`<p class="error-note" role="alert">${error.message}</p>`}
      ${!bases && !error ? html`<p class="loading-line" role="status">Loading…</p>` : null}
      ${bases !== null && html`
        <div class=${'models-layout' + (hasDetail ? ' has-detail' : '')}>
          <div class="models-list-pane">
            ${bases.length === 0 && html`
              <div class="empty-state">
                <p class="empty-state-title">No knowledge bases yet.</p>
                <p>Create one, then add PDF and text files to it.</p>
              </div>`}
            ${own.length > 0 && html`<ul class="model-list library-list" aria-label="Your knowledge bases" id="kb-list">${own.map(row)}</ul>`}
            ${shared.length > 0 && html`
              <h3 class="kb-list-title">Shared with you</h3>
              <ul class="model-list library-list" aria-label="Shared with you" id="kb-shared">${shared.map(row)}</ul>`}
          </div>
          ${hasDetail && html`
            <div class="models-detail-pane">
              ${creating
                ? html`<${BaseForm} onClose=${close} onSaved=${async (b) => { await load(); navigate(href(String(b.id))); }} />`
                : missing ? html`<${Missing} id="kb-missing" what="knowledge base" back=${href()} backLabel="Back to the knowledge bases" />`
                : html`<${BaseDetail} key=${selected.id} base=${selected} onClose=${close}
                    onChanged=${load} onDeleted=${async () => { await load(); close(); }} />`}
            </div>`}
        </div>`}
    </section>`;
}
