// inchat.js — the library in a chat's composer: which knowledge bases the
// chat's replies may search (KnowledgeScope), and a document attached from
// the library (LibraryAttach: an unsent copy joins the composer's files, so
// the message keeps it whatever later happens to the document). Names are
// untrusted text; only search snippets go through core/html.js.

import { html, useState, useEffect, useRef } from '../../vendor/htm-preact/standalone.module.js';
import { call } from '../core/transport.js';
import { Popover, useDebounced } from '../core/ui.js';
import { formatBytes } from '../core/format.js';

const PATHS = {
  book: 'M5 4h9a3 3 0 0 1 3 3v13H8a3 3 0 0 1-3-3zM5 17a3 3 0 0 1 3-3h9M9 8h5',
  shelf: 'M4 4h4v16H4zM10 4h4v16h-4zM16 5l4 1-3 14-4-1',
};

function LibIcon({ name }) {
  return html`<svg class="icon" viewBox="0 0 24 24" aria-hidden="true" focusable="false"><path d=${PATHS[name]} /></svg>`;
}

/** scopeLabel says which bases a chat searches, in a few words. */
export function scopeLabel(scope, bases) {
  if (!scope || !scope.scoped) return 'All bases';
  const n = (scope.bases || []).length;
  if (n === 0) return 'No bases';
  if (n === 1) {
    const b = bases.find((x) => x.id === scope.bases[0].id);
    return (b || scope.bases[0]).name;
  }
  return `${n} bases`;
}

/**
 * KnowledgeScope is the composer's "Knowledge:" control: every base the
 * person can see, or only some. scope is {scoped, bases: [{id, name}]};
 * onChange gets the new {scoped, bases: [id]}.
 */
export function KnowledgeScope({ bases, scope, onChange }) {
  const [open, setOpen] = useState(false);
  const btn = useRef(null);
  const chosen = scope && scope.scoped ? (scope.bases || []).map((b) => b.id) : [];
  const set = (scoped, ids) => onChange({ scoped, bases: ids });
  const toggle = (id, on) => {
    const next = on ? [...new Set([...chosen, id])] : chosen.filter((x) => x !== id);
    set(true, next);
  };
  return html`
    <span class="kb-scope">
      <button type="button" class="btn btn-ghost btn-sm kb-scope-button" id="composer-knowledge" ref=${btn}
        aria-haspopup="dialog" aria-expanded=${open ? 'true' : 'false'} title="Which knowledge bases replies may search"
        onClick=${() => setOpen(!open)}>
        <${LibIcon} name="book" /><span class="kb-scope-text"><span class="kb-scope-prefix">Knowledge: </span>${scopeLabel(scope, bases)}</span>
      </button>
      <${Popover} open=${open} onClose=${() => setOpen(false)} anchorRef=${btn} label="Knowledge bases for this chat" className="kb-scope-panel">
        <fieldset class="fieldset">
          <legend class="field-label">Replies may search</legend>
          <div class="radio-list">
            <label class="check"><input type="radio" name="kb-scope" id="kb-scope-all" checked=${!(scope && scope.scoped)}
              onChange=${() => set(false, [])} /><span>All bases</span></label>
            <label class="check"><input type="radio" name="kb-scope" id="kb-scope-some" checked=${!!(scope && scope.scoped)}
              onChange=${() => set(true, chosen)} /><span>Only these</span></label>
          </div>
          <ul class="kb-scope-list" aria-label="Knowledge bases">
            ${bases.map((b) => html`
              <li key=${b.id}>
                <label class="check"><input type="checkbox" checked=${chosen.includes(b.id)}
                  onChange=${(e) => toggle(b.id, e.currentTarget.checked)} />
                  <span>${b.name}${b.mine ? '' : html` <span class="muted">(${b.owner.name})</span>`}</span></label>
              </li>`)}
          </ul>
        </fieldset>
      </${Popover}>
    </span>`;
}

/**
 * LibraryAttach is the composer's "Attach from library": find a document
 * (a search over every base the person can see, or a base's list), and
 * onAttach gets the unsent copy (an Attachment, as an upload gives).
 */
export function LibraryAttach({ bases, onAttach, disabled }) {
  const [open, setOpen] = useState(false);
  const [query, setQuery] = useState('');
  const [docs, setDocs] = useState(null); // [{id, name, sub}]
  const [base, setBase] = useState(null);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(0);
  const btn = useRef(null);
  const seq = useRef(0);
  const search = useDebounced(async (q) => {
    const n = ++seq.current;
    if (!q.trim()) {
      setDocs(null);
      return;
    }
    try {
      const hits = await call('Library.Search', { query: q });
      if (n !== seq.current) return;
      const seen = new Map();
      for (const h of hits || []) if (!seen.has(h.documentId)) seen.set(h.documentId, { id: h.documentId, name: h.documentName, sub: h.baseName });
      setDocs([...seen.values()]);
      setError('');
    } catch (err) {
      if (n === seq.current) setError(err.message);
    }
  }, 250);
  const openBase = async (b) => {
    setBase(b);
    setDocs(null);
    try {
      const list = await call('Library.Documents', b.id);
      setDocs((list || []).map((d) => ({ id: d.id, name: d.name, sub: formatBytes(d.size) })));
      setError('');
    } catch (err) {
      setError(err.message);
    }
  };
  useEffect(() => {
    if (!open) { setQuery(''); setDocs(null); setBase(null); setError(''); }
  }, [open]);
  const attach = async (d) => {
    setBusy(d.id);
    try {
      const v = await call('Library.AttachDocument', d.id);
      onAttach(v);
      setOpen(false);
    } catch (err) {
      setError(err.message);
    }
    setBusy(0);
  };
  return html`
    <span class="kb-attach">
      <button type="button" class="btn btn-ghost composer-attach" id="composer-library" ref=${btn} disabled=${disabled}
        aria-haspopup="dialog" aria-expanded=${open ? 'true' : 'false'} aria-label="Attach from library" title="Attach a document from your library"
        onClick=${() => setOpen(!open)}>
        <${LibIcon} name="shelf" />
      </button>
      <${Popover} open=${open} onClose=${() => setOpen(false)} anchorRef=${btn} label="Attach from library" className="kb-attach-panel" initialFocus="#kb-attach-search">
        <label class="field-label" for="kb-attach-search">Attach from library</label>
        <input type="search" id="kb-attach-search" class="input" placeholder="Search your documents" value=${query}
          onInput=${(e) => { setQuery(e.currentTarget.value); setBase(null); search(e.currentTarget.value); }} />
        ${!!error && html`<p class="error-note" role="alert">${error}</p>`}
        ${!query.trim() && !base && html`
          <ul class="kb-attach-list" aria-label="Knowledge bases">
            ${bases.map((b) => html`<li key=${b.id}><button type="button" class="kb-attach-item" onClick=${() => openBase(b)}>
              <span class="kb-attach-name">${b.name}</span><span class="muted">${b.documents} ${b.documents === 1 ? 'document' : 'documents'}</span></button></li>`)}
          </ul>`}
        ${!!base && html`<button type="button" class="btn btn-ghost btn-sm" onClick=${() => { setBase(null); setDocs(null); }}>← ${base.name}</button>`}
        ${!!docs && docs.length === 0 && html`<p class="muted" role="status">${base ? 'No documents in this base.' : 'Nothing found.'}</p>`}
        ${!!docs && docs.length > 0 && html`
          <ul class="kb-attach-list" id="kb-attach-docs" aria-label="Documents">
            ${docs.map((d) => html`<li key=${d.id}><button type="button" class="kb-attach-item kb-attach-doc" disabled=${!!busy} onClick=${() => attach(d)}>
              <span class="kb-attach-name">${d.name}</span><span class="muted">${busy === d.id ? 'Attaching…' : d.sub}</span></button></li>`)}
          </ul>`}
      </${Popover}>
    </span>`;
}
