// memories.js — Library → Memories: short facts about the person that go
// into every reply while memory is on. The switch and what it means, a box
// to add one (its length against the cap and the total used, counted as
// the server counts: characters), and every memory with who added it, to
// edit or delete. A refusal (too long, over the total) is the field's
// error and the text stays where it was typed.

import { html, useState, useEffect, useRef } from '../../vendor/htm-preact/standalone.module.js';
import { call } from '../core/transport.js';
import { confirmAction, toast, toastError } from '../core/ui.js';
import { Field } from '../core/fields.js';
import { formatNumber, formatWhen } from '../core/format.js';
import { useLibraryEvents } from './common.js';

// chars counts as the server does: characters (code points), not UTF-16 units.
const chars = (s) => [...s].length;

/**
 * submitOnEnter makes Enter save a memory (it is one line; Shift+Enter
 * still breaks the line, which the server folds to a space).
 */
function submitOnEnter(e) {
  if (e.key !== 'Enter' || e.shiftKey || e.isComposing) return;
  e.preventDefault();
  const form = e.currentTarget.form;
  if (form) form.requestSubmit();
}

const sourceText = (m) => (m.source === 'model' ? 'Added by the model' : 'Added by you');

function Counter({ id, text, view, extra = 0 }) {
  const n = chars(text);
  const over = n > view.maxLength;
  const total = view.used + extra;
  return html`
    <span id=${id} class=${'library-count' + (over || total > view.maxTotal ? ' is-over' : '')}>
      ${formatNumber(n)} / ${formatNumber(view.maxLength)} characters · ${formatNumber(total)} / ${formatNumber(view.maxTotal)} used in all
    </span>`;
}

function MemoryRow({ m, view, onView }) {
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState(m.text);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const input = useRef(null);
  const editBtn = useRef(null);
  const wasEditing = useRef(false);
  useEffect(() => {
    if (editing && input.current) input.current.focus();
    // Back from the editor (Cancel, Escape, Save): focus where it was.
    if (!editing && wasEditing.current && editBtn.current) editBtn.current.focus();
    wasEditing.current = editing;
  }, [editing]);
  const cancel = () => { setEditing(false); setText(m.text); setError(''); };

  const save = async (e) => {
    e.preventDefault();
    if (!text.trim()) {
      setError('Write something, or delete the memory.');
      return;
    }
    setBusy(true);
    try {
      onView(await call('Library.UpdateMemory', m.id, { text: text.trim() }));
      setEditing(false);
      setError('');
      toast('Memory saved.');
    } catch (err) {
      setError(err.message);
    }
    setBusy(false);
  };
  const remove = async () => {
    const ok = await confirmAction({
      title: 'Delete this memory?',
      body: `“${m.text}” will no longer be part of your replies.`,
      confirmLabel: 'Delete memory',
      danger: true,
    });
    if (!ok) return;
    try {
      onView(await call('Library.DeleteMemory', m.id));
      toast('Memory deleted.');
    } catch (err) {
      toastError('Could not delete the memory', err);
    }
  };
  const id = `memory-${m.id}`;
  if (editing) {
    return html`
      <li class="memory-row is-editing" id=${id}>
        <form class="memory-edit" onSubmit=${save} noValidate>
          <${Field} id=${id + '-text'} inputRef=${input} label="Memory" as="textarea" rows="2" value=${text} error=${error}
            onValue=${(v) => { setText(v); setError(''); }}
            onKeyDown=${(e) => { if (e.key === 'Escape') { e.preventDefault(); cancel(); } else submitOnEnter(e); }}
            after=${html`<${Counter} id=${id + '-count'} text=${text} view=${view} extra=${chars(text) - chars(m.text)} />`} />
          <div class="memory-actions">
            <button type="button" class="btn btn-sm" onClick=${cancel}>Cancel</button>
            <button type="submit" class="btn btn-sm btn-primary" id=${id + '-save'} disabled=${busy}>${busy ? 'Saving…' : 'Save'}</button>
          </div>
        </form>
      </li>`;
  }
  return html`
    <li class="memory-row" id=${id}>
      <div class="memory-text">
        <p class="memory-words">${m.text}</p>
        <p class="memory-meta">${sourceText(m)} · ${formatWhen(m.createdAt)}</p>
      </div>
      <div class="memory-actions">
        <button type="button" class="btn btn-sm btn-ghost" id=${id + '-edit'} ref=${editBtn} aria-label=${`Edit the memory “${m.text}”`}
          onClick=${() => { setText(m.text); setEditing(true); }}>Edit</button>
        <button type="button" class="btn btn-sm btn-danger-ghost" id=${id + '-delete'} aria-label=${`Delete the memory “${m.text}”`}
          onClick=${remove}>Delete</button>
      </div>
    </li>`;
}

function AddMemory({ view, onView }) {
  const [text, setText] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const add = async (e) => {
    e.preventDefault();
    if (!text.trim()) {
      setError('Write the memory first.');
      return;
    }
    setBusy(true);
    try {
      onView(await call('Library.AddMemory', { text: text.trim() }));
      setText('');
      setError('');
      toast('Memory added.');
    } catch (err) {
      // The text stays in the box, to shorten or to keep.
      setError(err.message);
    }
    setBusy(false);
  };
  const count = view.maxCount > 0 ? ` You have ${view.items.length} of at most ${view.maxCount}.` : '';
  return html`
    <form class="card" id="memory-add" aria-labelledby="memory-add-title" onSubmit=${add} noValidate>
      <header class="card-header"><h3 class="card-title" id="memory-add-title">Add a memory</h3></header>
      <div class="card-body form-grid">
        <${Field} id="memory-new" label="Memory" as="textarea" rows="2" value=${text} error=${error}
          placeholder="For example: I prefer metric units." aria-describedby="memory-new-count"
          hint=${'One short fact about you, in a sentence; Enter adds it.' + count}
          onValue=${(v) => { setText(v); setError(''); }} onKeyDown=${submitOnEnter}
          after=${html`<${Counter} id="memory-new-count" text=${text} view=${view} extra=${chars(text.trim())} />`} />
      </div>
      <div class="card-actions">
        <button type="submit" class="btn btn-primary" id="memory-add-save" disabled=${busy}>${busy ? 'Adding…' : 'Add memory'}</button>
      </div>
    </form>`;
}

export function MemoriesTab() {
  const [view, setView] = useState(null);
  const [error, setError] = useState(null);
  const [switching, setSwitching] = useState(false);
  const load = async () => {
    try {
      setView(await call('Library.Memories'));
      setError(null);
    } catch (err) {
      setError(err);
    }
  };
  useEffect(() => { load(); }, []);
  useLibraryEvents(['memory'], load);

  const setOn = async (on) => {
    setSwitching(true);
    try {
      setView(await call('Library.SetMemoryOn', { on }));
      toast(on ? 'Memories are used in your replies.' : 'Memories are kept but no longer used in your replies.');
    } catch (err) {
      toastError('Could not change the memory switch', err);
    }
    setSwitching(false);
  };

  const items = view && Array.isArray(view.items) ? view.items : [];
  return html`
    <section class="settings-section" aria-labelledby="memories-title">
      <div class="section-head">
        <div>
          <h2 id="memories-title" class="section-title">Memories</h2>
          <p class="muted">Short facts about you that the model is told in every reply.</p>
        </div>
      </div>
      ${error && html`<p class="error-note" role="alert">${error.message}</p>`}
      ${!view && !error && html`<p class="loading-line" role="status">Recalling what was said…</p>`}
      ${!!view && html`
        <section class="card" aria-labelledby="memory-on-title">
          <header class="card-header"><h3 class="card-title" id="memory-on-title">Use memories in replies</h3></header>
          <div class="card-body settings-stack">
            <label class="switch-row">
              <span class="switch">
                <input type="checkbox" id="memory-on" checked=${!!view.on} disabled=${switching}
                  onChange=${(e) => setOn(e.currentTarget.checked)} />
                <span class="visually-hidden">Use memories in replies</span>
                <span class="switch-track" aria-hidden="true"></span>
              </span>
              <span id="memory-on-text">${view.on
                ? 'On: your memories are added to every reply, and the model may add one when you tell it something worth keeping. You can see and delete everything here.'
                : 'Off: your memories are kept but not added to replies, and the model cannot add any.'}</span>
            </label>
          </div>
        </section>
        <${AddMemory} view=${view} onView=${setView} />
        ${items.length === 0 ? html`
          <div class="empty-state" id="memories-empty">
            <p class="empty-state-title">No memories yet.</p>
            <p>Nothing is remembered — not even second breakfast. Add what every reply should know about you.</p>
          </div>` : html`
          <ul class="memory-list" id="memory-list" aria-label="Memories">
            ${items.map((m) => html`<${MemoryRow} key=${m.id + ':' + m.text} m=${m} view=${view} onView=${setView} />`)}
          </ul>`}`}
    </section>`;
}
