// suggestions.js — the new-chat screen's suggestion cards and Settings →
// Suggestions (administrators). A card fills the composer with its
// prompt, or sends it when it says so; the cards are the instance's
// (Suggestions.List, per model where one is set). Titles and prompts are
// shown as text only.

import { html, useState, useEffect, useRef } from '../../vendor/htm-preact/standalone.module.js';
import { call } from '../core/transport.js';
import { hrefs, navigate } from '../core/router.js';
import { CloseButton, Icon, confirmAction, toast } from '../core/ui.js';
import { Field, FormError, useFormError } from '../core/fields.js';

/** FILL_EVENT asks the composer on screen to hold a text (detail: the text). */
export const FILL_EVENT = 'lembas-composer-fill';

/** fillComposer puts text in the composer on screen, caret at its end. */
export function fillComposer(text) {
  window.dispatchEvent(new CustomEvent(FILL_EVENT, { detail: String(text) }));
}

/**
 * SuggestionCards shows the cards for modelId (null: none chosen).
 * onSend(text, files) sends a card that sends.
 */
export function SuggestionCards({ modelId, onSend, disabled }) {
  const [list, setList] = useState(null);
  useEffect(() => {
    let live = true;
    call('Suggestions.List', modelId || null).then((l) => { if (live) setList(Array.isArray(l) ? l : []); }, () => { if (live) setList([]); });
    return () => { live = false; };
  }, [modelId]);
  if (!list || list.length === 0) return null;
  const choose = (s) => {
    if (s.send && onSend && !disabled) onSend(s.prompt, []);
    else fillComposer(s.prompt);
  };
  return html`
    <ul class="suggestions" aria-label="Suggestions" id="suggestions">
      ${list.map((s) => html`
        <li key=${s.id}>
          <button type="button" class="suggestion-card" data-send=${s.send ? 'true' : 'false'} disabled=${!!s.send && !!disabled}
            onClick=${() => choose(s)}>
            <span class="suggestion-title">${s.title}</span>
            <span class="suggestion-prompt">${s.prompt}</span>
            ${s.send ? html`<span class="suggestion-sends">Sends at once</span>` : null}
          </button>
        </li>`)}
    </ul>`;
}

// ---------- Settings → Suggestions ----------

function SuggestionForm({ item, models, onSaved, onDeleted, onClose }) {
  const creating = !item;
  const [title, setTitle] = useState(item ? item.title : '');
  const [prompt, setPrompt] = useState(item ? item.prompt : '');
  const [send, setSend] = useState(item ? item.send : false);
  const [model, setModel] = useState(item && item.modelId ? String(item.modelId) : '');
  const [busy, setBusy] = useState('');
  const { error, fail, clear } = useFormError();
  const first = useRef(null);
  useEffect(() => { if (first.current) first.current.focus({ preventScroll: true }); }, [item && item.id]);

  const save = async (e) => {
    e.preventDefault();
    clear();
    if (!title.trim()) return fail('Give the suggestion a title.');
    if (!prompt.trim()) return fail('Write the prompt the suggestion puts in the composer.');
    const input = { title: title.trim(), prompt, send, modelId: model ? Number(model) : null };
    setBusy('save');
    try {
      const saved = creating ? await call('Suggestions.Create', input) : await call('Suggestions.Update', item.id, input);
      toast(creating ? 'Suggestion added.' : 'Suggestion saved.');
      onSaved(saved);
    } catch (err) {
      fail(err.message);
    }
    setBusy('');
  };
  const remove = async () => {
    const ok = await confirmAction({ title: 'Delete this suggestion?', body: 'It is no longer shown on the new-chat screen.', confirmLabel: 'Delete', danger: true });
    if (!ok) return;
    setBusy('delete');
    try {
      await call('Suggestions.Delete', item.id);
      toast('Suggestion deleted.');
      onDeleted();
    } catch (err) {
      fail(err.message);
      setBusy('');
    }
  };
  const idp = item ? `suggestion-${item.id}` : 'suggestion-new';
  return html`
    <form class="card model-detail" id="suggestion-form" aria-labelledby=${idp + '-title'} onSubmit=${save} noValidate>
      <header class="card-header">
        <h2 class="card-title" id=${idp + '-title'}>${creating ? 'New suggestion' : item.title}</h2>
        <${CloseButton} label="Close the suggestion" onClose=${onClose} />
      </header>
      <div class="card-body form-grid">
        <${Field} id=${idp + '-name'} inputRef=${first} label="Title" value=${title} autocomplete="off" maxlength="80" onValue=${setTitle} />
        <${Field} id=${idp + '-prompt'} as="textarea" label="Prompt" value=${prompt} rows="5" onValue=${setPrompt}
          hint="What the card puts in the composer." />
        <label class="check"><input type="checkbox" id=${idp + '-send'} checked=${send} onChange=${(e) => setSend(e.currentTarget.checked)} />
          <span>Send it at once (else it only fills the composer)</span></label>
        <${Field} id=${idp + '-model'} as="select" label="Shown with" value=${model} onValue=${setModel}>
          <option value="">Every model</option>
          ${models.map((m) => html`<option value=${String(m.id)}>${m.displayName || m.name}</option>`)}
        <//>
        <${FormError} error=${error} />
      </div>
      <div class="card-actions wrap">
        ${!creating && html`<button type="button" class="btn btn-danger-ghost" disabled=${!!busy} onClick=${remove}>Delete suggestion</button>`}
        <span class="spacer"></span>
        <button type="button" class="btn" onClick=${onClose}>Cancel</button>
        <button type="submit" class="btn btn-primary" id="suggestion-save" disabled=${!!busy}>${busy === 'save' ? 'Saving…' : creating ? 'Add suggestion' : 'Save'}</button>
      </div>
    </form>`;
}

export function SuggestionsSettings({ sub }) {
  const [list, setList] = useState(null);
  const [models, setModels] = useState([]);
  const [error, setError] = useState(null);
  const [formKey, setFormKey] = useState(0);
  const selectedId = /^\d+$/.test(sub || '') ? Number(sub) : 0;
  const creating = sub === 'new';
  const load = async () => {
    try {
      const [l, m] = await Promise.all([call('Suggestions.Admin'), call('Models.Picker').catch(() => [])]);
      setList(Array.isArray(l) ? l : []);
      setModels(Array.isArray(m) ? m : []);
      setError(null);
    } catch (err) {
      setError(err);
    }
  };
  useEffect(() => { load(); }, []);
  const selected = list && selectedId ? list.find((s) => s.id === selectedId) : null;
  const close = () => navigate(hrefs.settings('suggestions'));
  const move = async (i, step) => {
    const ids = list.map((s) => s.id);
    const j = i + step;
    if (j < 0 || j >= ids.length) return;
    [ids[i], ids[j]] = [ids[j], ids[i]];
    try {
      await call('Suggestions.Reorder', ids);
      await load();
    } catch (err) {
      toast(err.message, { error: true });
    }
  };
  const modelName = (id) => {
    const m = models.find((x) => x.id === id);
    return m ? m.displayName || m.name : 'one model';
  };
  const hasDetail = creating || !!selected;
  return html`
    <section class="settings-section" aria-labelledby="suggestions-title">
      <div class="section-head">
        <div>
          <h2 id="suggestions-title" class="section-title">Suggestions</h2>
          <p class="muted">The cards on the new-chat screen. Choosing one fills the composer, or sends its prompt when it says so.</p>
        </div>
        <a class="btn btn-primary" href=${hrefs.settings('suggestions', 'new')} id="suggestion-create"><${Icon} name="plus" /><span>Add suggestion</span></a>
      </div>
      ${error && html`<p class="error-note" role="alert">${error.message}</p>`}
      ${!list && !error ? html`<p class="loading-line" role="status">Loading…</p>` : null}
      ${list !== null && html`
        <div class=${'models-layout' + (hasDetail ? ' has-detail' : '')}>
          <div class="models-list-pane">
            ${list.length === 0 && html`<div class="empty-state"><p class="empty-state-title">No suggestions.</p><p>The new-chat screen shows none.</p></div>`}
            ${list.length > 0 && html`
              <ul class="model-list" aria-label="Suggestions" id="suggestion-list">
                ${list.map((s, i) => html`
                  <li class=${'model-row' + (s.id === selectedId ? ' is-selected' : '')} key=${s.id}>
                    <a class="model-row-main" href=${hrefs.settings('suggestions', String(s.id))} aria-current=${s.id === selectedId ? 'true' : undefined}>
                      <span class="model-row-text">
                        <span class="model-row-name">${s.title}</span>
                        <span class="model-row-sub">${s.send ? 'Sends' : 'Fills the composer'}${s.modelId ? ' · only with ' + modelName(s.modelId) : ''}</span>
                      </span>
                    </a>
                    <button type="button" class="btn btn-ghost btn-sm" aria-label=${'Move ' + s.title + ' up'} title="Move up" disabled=${i === 0} onClick=${() => move(i, -1)}><${Icon} name="arrowUp" /></button>
                    <button type="button" class="btn btn-ghost btn-sm" aria-label=${'Move ' + s.title + ' down'} title="Move down" disabled=${i === list.length - 1} onClick=${() => move(i, 1)}><${Icon} name="arrowDown" /></button>
                  </li>`)}
              </ul>`}
          </div>
          ${hasDetail && html`
            <div class="models-detail-pane">
              <${SuggestionForm} key=${(selected ? selected.id : 'new') + ':' + formKey} item=${selected} models=${models}
                onClose=${close}
                onSaved=${async (s) => { await load(); setFormKey((k) => k + 1); navigate(hrefs.settings('suggestions', String(s.id))); }}
                onDeleted=${async () => { await load(); close(); }} />
            </div>`}
        </div>`}
    </section>`;
}
