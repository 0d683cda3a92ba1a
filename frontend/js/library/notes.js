// notes.js — Library → Notes: Markdown notes, written by the person or by
// the model for them, and notes others share with them. A list (search,
// newest first) beside one note: an editor for an own note (title, body,
// Write/Preview — the preview is the server's rendering, as the note will
// be shown — Save, Delete, Share), the rendered note, read-only, for a
// shared one. Leaving with unsaved changes asks first.

import { html, useState, useEffect, useRef } from '../../vendor/htm-preact/standalone.module.js';
import { call } from '../core/transport.js';
import { hrefs, navigate } from '../core/router.js';
import { CloseButton, Icon, confirmAction, toast, useDebounced } from '../core/ui.js';
import { Field, FilterBar, FormError, useFormError } from '../core/fields.js';
import { Rendered, Snippet } from '../core/html.js';
import { formatWhen } from '../core/format.js';
import { useLibraryEvents, useLeaveGuard, Missing, OwnerLine, SharedCount, MarkdownEditor } from './common.js';
import { ShareButton } from './share.js';

const noteTitle = (n) => (n && n.title ? n.title : 'Untitled note');

function NoteEditor({ note, onSaved, onDeleted }) {
  const creating = !note;
  // A list's notes and an empty body come without body (omitted when empty).
  const [base, setBase] = useState(() => ({ title: (note && note.title) || '', body: (note && note.body) || '' }));
  const [title, setTitle] = useState(base.title);
  const [body, setBody] = useState(base.body);
  const [shared, setShared] = useState(note ? note.sharedWith : 0);
  const [busy, setBusy] = useState('');
  const { error, fail, clear } = useFormError();
  const dirty = title !== base.title || body !== base.body;
  const leave = useLeaveGuard(dirty);
  const first = useRef(null);
  useEffect(() => {
    if (creating && first.current) first.current.focus({ preventScroll: true });
  }, []);
  // The note changed elsewhere (another window, or a reply's notes_write):
  // shown as it is now unless this form holds unsaved changes, so a later
  // Save does not put back the old text unseen.
  const stamp = note ? note.updatedAt : 0;
  useEffect(() => {
    if (!note || dirty || (note.title === base.title && (note.body || '') === base.body)) return;
    const now = { title: note.title || '', body: note.body || '' };
    setBase(now);
    setTitle(now.title);
    setBody(now.body);
  }, [stamp]);

  const save = async (e) => {
    e.preventDefault();
    setBusy('save');
    clear();
    try {
      const saved = creating
        ? await call('Library.CreateNote', { title: title.trim(), body })
        : await call('Library.UpdateNote', note.id, { title: title.trim(), body });
      const kept = { title: saved.title || '', body: saved.body || '' };
      setBase(kept);
      setTitle(kept.title);
      setBody(kept.body);
      toast(creating ? `Created the note “${noteTitle(saved)}”.` : 'Note saved.');
      onSaved(saved, creating);
    } catch (err) {
      fail(err.message);
    }
    setBusy('');
  };

  const remove = async () => {
    const ok = await confirmAction({
      title: `Delete the note “${noteTitle(note)}”?`,
      body: shared > 0 ? 'It is gone for you and for everyone you shared it with. This cannot be undone.' : 'This cannot be undone.',
      confirmLabel: 'Delete note',
      danger: true,
    });
    if (!ok) return;
    setBusy('delete');
    try {
      await call('Library.DeleteNote', note.id);
      toast(`Deleted the note “${noteTitle(note)}”.`);
      setBase({ title, body }); // nothing left to keep
      onDeleted();
    } catch (err) {
      fail(err.message);
      setBusy('');
    }
  };

  return html`
    <form class="card library-detail" id="note-form" aria-labelledby="note-heading" onSubmit=${save} noValidate>
      <header class="card-header">
        <div class="library-detail-head">
          <h2 class="card-title" id="note-heading">${creating ? 'New note' : noteTitle(base)}</h2>
          ${!creating && html`<p class="card-subtitle">Changed ${formatWhen(note.updatedAt)}${shared > 0 ? ` · shared with ${shared}` : ''}</p>`}
        </div>
        <${CloseButton} label="Close the note" onClose=${() => leave(hrefs.library('notes'))} />
      </header>
      <div class="card-body form-grid">
        <${Field} id="note-title" inputRef=${first} label="Title" value=${title} autocomplete="off" onValue=${setTitle} />
        <${MarkdownEditor} id="note-body" label="Text" value=${body} onValue=${setBody} rows="14"
          hint="Markdown: headings, lists, links, code. Preview shows it as it will be read." />
        <${FormError} error=${error} id="note-error" />
      </div>
      <div class="card-actions wrap">
        ${!creating && html`<button type="button" class="btn btn-danger-ghost" id="note-delete" disabled=${!!busy} onClick=${remove}>Delete</button>`}
        ${!creating && html`<${ShareButton} kind="note" id=${note.id} name=${noteTitle(note)} onChange=${(list) => { setShared(list.length); onSaved(null); }} />`}
        <span class="spacer"></span>
        ${dirty && html`<span class="library-unsaved" id="note-unsaved">Unsaved changes</span>`}
        <button type="submit" class="btn btn-primary" id="note-save" disabled=${!!busy || (!creating && !dirty)}>
          ${busy === 'save' ? 'Saving…' : creating ? 'Create note' : 'Save'}</button>
      </div>
    </form>`;
}

function NoteReader({ note }) {
  return html`
    <article class="card library-detail" id="note-view" aria-labelledby="note-heading">
      <header class="card-header">
        <div class="library-detail-head">
          <h2 class="card-title" id="note-heading">${noteTitle(note)}</h2>
          <${OwnerLine} item=${note} id="note-owner" />
        </div>
        <${CloseButton} label="Close the note" onClose=${() => navigate(hrefs.library('notes'))} />
      </header>
      <div class="card-body">
        <${Rendered} className="md library-md" id="note-rendered" markup=${note.html || ''} />
      </div>
    </article>`;
}

function NoteDetail({ id, onSaved, onDeleted }) {
  const [note, setNote] = useState(null);
  const [error, setError] = useState(null);
  const [version, setVersion] = useState(0);
  useEffect(() => {
    let live = true;
    call('Library.Note', id).then((n) => { if (live) { setNote(n); setError(null); } }, (err) => { if (live) setError(err); });
    return () => { live = false; };
  }, [id, version]);
  // Follow changes made elsewhere: the owner's, a reply's, or (for a
  // shared note) its owner's.
  useLibraryEvents(['note'], () => setVersion((v) => v + 1));
  if (error && error.kind === 'not_found') {
    return html`<${Missing} id="note-missing" what="note" back=${hrefs.library('notes')} backLabel="Back to the notes" />`;
  }
  if (error) return html`<p class="error-note" role="alert">${error.message}</p>`;
  if (!note) return html`<p class="loading-line" role="status">Unrolling the scroll…</p>`;
  return note.mine
    ? html`<${NoteEditor} note=${note} onSaved=${onSaved} onDeleted=${onDeleted} />`
    : html`<${NoteReader} note=${note} />`;
}

export function NotesTab({ sub }) {
  const [list, setList] = useState(null);
  const [error, setError] = useState(null);
  const [query, setQuery] = useState('');
  const queryRef = useRef('');
  const seq = useRef(0);
  const selectedId = /^\d+$/.test(sub || '') ? Number(sub) : 0;
  const creating = sub === 'new';

  const load = async () => {
    const n = ++seq.current;
    const q = queryRef.current.trim();
    try {
      const r = await call('Library.Notes', q ? { query: q } : {});
      if (n !== seq.current) return;
      setList(Array.isArray(r) ? r : []);
      setError(null);
    } catch (err) {
      if (n === seq.current) setError(err);
    }
  };
  useEffect(() => { load(); }, []);
  useLibraryEvents(['note'], load);
  const search = useDebounced(load, 250);
  const onQuery = (v) => {
    setQuery(v);
    queryRef.current = v;
    search();
  };

  const hasDetail = creating || selectedId > 0;
  const searching = query.trim() !== '';
  return html`
    <section class="settings-section" aria-labelledby="notes-title">
      <div class="section-head">
        <div>
          <h2 id="notes-title" class="section-title">Notes</h2>
          <p class="muted">Notes you write, notes the model writes for you, and notes shared with you.</p>
        </div>
        <a class="btn btn-primary" href=${hrefs.library('notes', 'new')} id="note-create"><${Icon} name="plus" /><span>New note</span></a>
      </div>
      ${error && html`<p class="error-note" role="alert">${error.message}</p>`}
      <div class=${'models-layout' + (hasDetail ? ' has-detail' : '')}>
        <div class="models-list-pane">
          <${FilterBar} search=${{ id: 'notes-search', label: 'Search notes', value: query, placeholder: 'Words in a title or text', onValue: onQuery }} />
          ${list === null && !error && html`<p class="loading-line" role="status">Leafing through the notes…</p>`}
          ${list !== null && list.length === 0 && (searching ? html`
            <p class="muted" role="status" id="notes-none">No notes match “${query.trim()}”.</p>` : html`
            <div class="empty-state" id="notes-empty">
              <p class="empty-state-title">No notes yet.</p>
              <p>Not a single line in the Red Book. Write one, or ask a model to take a note for you.</p>
            </div>`)}
          ${list !== null && list.length > 0 && html`
            <ul class="model-list library-list" aria-label="Notes" id="notes-list">
              ${list.map((n) => html`
                <li class=${'model-row' + (n.id === selectedId ? ' is-selected' : '')} key=${n.id}>
                  <a class="model-row-main" href=${hrefs.library('notes', String(n.id))} aria-current=${n.id === selectedId ? 'true' : undefined}>
                    <span class="model-row-text">
                      <span class="model-row-name">${noteTitle(n)}</span>
                      ${searching && !!n.snippet
                        ? html`<${Snippet} className="model-row-sub library-excerpt" markup=${n.snippet} />`
                        : !!n.excerpt && html`<span class="model-row-sub library-excerpt">${n.excerpt}</span>`}
                      <span class="model-row-sub">${n.mine ? '' : `${n.owner && n.owner.name ? n.owner.name : 'Someone'} · `}${formatWhen(n.updatedAt)}</span>
                    </span>
                    ${!n.mine && html`<span class="badge">Shared</span>`}
                    <${SharedCount} item=${n} />
                  </a>
                </li>`)}
            </ul>`}
        </div>
        ${hasDetail && html`
          <div class="models-detail-pane">
            ${creating
              ? html`<${NoteEditor} key="new" note=${null}
                  onSaved=${(saved) => { load(); navigate(hrefs.library('notes', String(saved.id))); }} onDeleted=${() => {}} />`
              : html`<${NoteDetail} key=${selectedId} id=${selectedId}
                  onSaved=${() => load()} onDeleted=${() => { load(); navigate(hrefs.library('notes')); }} />`}
          </div>`}
      </div>
    </section>`;
}
