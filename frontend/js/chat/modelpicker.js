// modelpicker.js — the hand-built model picker (a native <select> cannot
// show avatars, descriptions or badges) and the per-chat settings popover.
// The picker keeps the administrator's order; typing filters; arrow keys
// move, Enter chooses, Escape closes.

import { html, useState, useRef, useEffect, useMemo } from '../../vendor/htm-preact/standalone.module.js';
import { Popover, Avatar, Badges, Icon } from '../core/ui.js';
import { Field } from '../core/fields.js';

let pickerSeq = 0;

function matches(m, q) {
  if (!q) return true;
  const hay = [m.name, m.upstreamId, m.description, m.connectionName].filter(Boolean).join(' ').toLowerCase();
  return q.toLowerCase().split(/\s+/).filter(Boolean).every((w) => hay.includes(w));
}

export function ModelPicker({ models, value, onChange, disabled, compact }) {
  const id = useMemo(() => 'picker-' + ++pickerSeq, []);
  const [open, setOpen] = useState(false);
  const [query, setQuery] = useState('');
  const [active, setActive] = useState(0);
  const trigger = useRef(null);
  const list = useRef(null);
  const current = models.find((m) => m.id === value) || null;
  const shown = models.filter((m) => matches(m, query));

  const openWith = (q) => {
    setQuery(q);
    const i = q ? 0 : Math.max(0, models.findIndex((m) => m.id === value));
    setActive(i);
    setOpen(true);
  };
  const close = () => setOpen(false);
  const choose = (m) => {
    setOpen(false);
    if (trigger.current) trigger.current.focus();
    if (m && m.id !== value) onChange(m);
  };

  useEffect(() => {
    if (!open || !list.current) return;
    const el = list.current.querySelector('[aria-selected="true"], .is-active');
    const act = list.current.querySelector('.is-active');
    if (act) act.scrollIntoView({ block: 'nearest' });
    else if (el) el.scrollIntoView({ block: 'nearest' });
  }, [open, active, query]);

  const onTriggerKey = (e) => {
    if (disabled) return;
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      openWith('');
    } else if (e.key.length === 1 && !e.ctrlKey && !e.metaKey && !e.altKey && e.key !== ' ') {
      e.preventDefault();
      openWith(e.key);
    }
  };

  const onInputKey = (e) => {
    const n = shown.length;
    if (e.key === 'ArrowDown') {
      e.preventDefault();
      if (n) setActive((a) => (a + 1) % n);
    } else if (e.key === 'ArrowUp') {
      e.preventDefault();
      if (n) setActive((a) => (a - 1 + n) % n);
    } else if (e.key === 'PageDown') {
      e.preventDefault();
      if (n) setActive((a) => Math.min(n - 1, a + 8));
    } else if (e.key === 'PageUp') {
      e.preventDefault();
      if (n) setActive((a) => Math.max(0, a - 8));
    } else if (e.key === 'Enter') {
      e.preventDefault();
      if (shown[active]) choose(shown[active]);
    }
  };

  const activeId = shown[active] ? `${id}-opt-${shown[active].id}` : undefined;
  const label = current ? current.name : models.length ? 'Choose a model' : 'No models';
  return html`
    <div class=${'picker' + (compact ? ' picker-compact' : '')}>
      <button type="button" class="btn picker-trigger" ref=${trigger} disabled=${disabled}
        aria-haspopup="listbox" aria-expanded=${open ? 'true' : 'false'} aria-controls=${open ? id + '-list' : undefined}
        aria-label=${'Model: ' + label} onClick=${() => (open ? close() : openWith(''))} onKeyDown=${onTriggerKey}>
        ${current ? html`<${Avatar} model=${current} size="sm" />` : null}
        <span class="picker-name">${label}</span>
        <${Icon} name="chevronDown" className="picker-chevron" />
      </button>
      <${Popover} open=${open} onClose=${close} anchorRef=${trigger} label="Choose a model" className="picker-popover"
        initialFocus="input">
        <div class="picker-search">
          <${Icon} name="search" />
          <input type="text" class="picker-filter" value=${query} placeholder="Filter models" autocomplete="off"
            role="combobox" aria-expanded="true" aria-autocomplete="list" aria-label="Filter models"
            aria-controls=${id + '-list'} aria-activedescendant=${activeId}
            onInput=${(e) => { setQuery(e.currentTarget.value); setActive(0); }} onKeyDown=${onInputKey} />
        </div>
        <ul class="picker-list" role="listbox" id=${id + '-list'} aria-label="Models" ref=${list}>
          ${shown.length === 0 && html`<li class="picker-empty" role="presentation">${models.length ? 'No model matches.' : 'No models are available yet.'}</li>`}
          ${shown.map((m, i) => html`
            <li key=${m.id} id=${`${id}-opt-${m.id}`} role="option" aria-selected=${m.id === value ? 'true' : 'false'}
              class=${'picker-option' + (i === active ? ' is-active' : '') + (m.id === value ? ' is-selected' : '')}
              onMouseMove=${() => i !== active && setActive(i)} onClick=${() => choose(m)}>
              <${Avatar} model=${m} />
              <span class="picker-option-text">
                <span class="picker-option-name">${m.name}</span>
                <span class="picker-option-desc">${m.description || m.connectionName || m.upstreamId}</span>
              </span>
              <${Badges} model=${m} />
              ${m.id === value ? html`<${Icon} name="check" className="picker-check" />` : null}
            </li>`)}
        </ul>
      <//>
    </div>`;
}

// ---------- Per-chat settings ----------

function numOrUndef(s, int) {
  const t = String(s).trim();
  if (t === '') return undefined;
  const n = int ? parseInt(t, 10) : Number(t);
  return Number.isFinite(n) ? n : NaN;
}

/** paramsFromForm validates the sampling fields; returns {params} or {error}. */
export function paramsFromForm(f) {
  const params = {};
  const t = numOrUndef(f.temperature);
  if (Number.isNaN(t) || (t !== undefined && (t < 0 || t > 2))) return { error: 'Temperature must be a number from 0 to 2.' };
  if (t !== undefined) params.temperature = t;
  const p = numOrUndef(f.top_p);
  if (Number.isNaN(p) || (p !== undefined && (p < 0 || p > 1))) return { error: 'Top P must be a number from 0 to 1.' };
  if (p !== undefined) params.top_p = p;
  const mt = numOrUndef(f.max_tokens, true);
  if (Number.isNaN(mt) || (mt !== undefined && mt < 1)) return { error: 'Max tokens must be a whole number above 0.' };
  if (mt !== undefined) params.max_tokens = mt;
  if (f.reasoning_effort) params.reasoning_effort = f.reasoning_effort;
  return { params };
}

export function formFromParams(p) {
  const v = (x) => (x === undefined || x === null ? '' : String(x));
  return {
    temperature: v(p && p.temperature),
    top_p: v(p && p.top_p),
    max_tokens: v(p && p.max_tokens),
    reasoning_effort: (p && p.reasoning_effort) || '',
  };
}

/**
 * inheritedHint is what an empty field stands for: the value the chat
 * inherits from its model, else the server's own default.
 */
function inheritedHint(inherited, k) {
  const v = inherited ? inherited[k] : undefined;
  if (v === undefined || v === null || v === '') return inherited ? 'Server default' : 'Default';
  return `Model: ${v}`;
}

/**
 * ParamFields: temperature, top_p, max_tokens and reasoning effort. With
 * inherited (a model's params), an empty field shows the value it stands
 * for; without, it says "Default".
 */
export function ParamFields({ idPrefix, form, setForm, efforts, inherited = null }) {
  const set = (k) => (v) => setForm({ ...form, [k]: v });
  const effort = inherited && inherited.reasoning_effort;
  const cap = (s) => s[0].toUpperCase() + s.slice(1);
  const number = (id, label, k, min, max, step, inputmode) => html`
    <${Field} id=${idPrefix + id} label=${label} type="number" min=${min} max=${max} step=${step} inputmode=${inputmode}
      placeholder=${inheritedHint(inherited, k)} value=${form[k]} onValue=${set(k)} />`;
  return html`
    <div class="param-grid">
      ${number('-temp', 'Temperature', 'temperature', '0', '2', '0.05', 'decimal')}
      ${number('-topp', 'Top P', 'top_p', '0', '1', '0.05', 'decimal')}
      ${number('-max', 'Max tokens', 'max_tokens', '1', undefined, '1', 'numeric')}
      <${Field} id=${idPrefix + '-effort'} label="Reasoning effort" as="select" value=${form.reasoning_effort} onValue=${set('reasoning_effort')}
        options=${[
          { value: '', label: effort ? `Model: ${cap(effort)}` : inherited ? 'Server default' : 'Default' },
          ...efforts.map((e) => ({ value: e, label: cap(e) })),
        ]} />
    </div>`;
}

/**
 * promptHint is what an empty system prompt stands for: the model's prompt
 * (its text when the reader may see it), else none.
 */
function promptHint(model) {
  if (!model) return 'Leave empty to use the model\'s default';
  const text = (model.systemPrompt || '').trim();
  if (text) return `Model's prompt: ${text.length > 300 ? text.slice(0, 300) + '…' : text}`;
  if (model.hasSystemPrompt) return 'The model\'s own system prompt applies (set by an administrator).';
  return 'None: the model has no system prompt.';
}

/** ChatSettings: system prompt and sampling for one chat, in a popover. */
export function ChatSettings({ chat, model = null, efforts, onSave, disabled }) {
  const [open, setOpen] = useState(false);
  const [form, setForm] = useState(() => formFromParams(chat && chat.params));
  const [prompt, setPrompt] = useState((chat && chat.systemPrompt) || '');
  const [error, setError] = useState('');
  const [saving, setSaving] = useState(false);
  const trigger = useRef(null);

  const start = () => {
    setForm(formFromParams(chat && chat.params));
    setPrompt((chat && chat.systemPrompt) || '');
    setError('');
    setOpen(true);
  };
  const close = () => setOpen(false);
  const save = async (e) => {
    e.preventDefault();
    const r = paramsFromForm(form);
    if (r.error) {
      setError(r.error);
      return;
    }
    setSaving(true);
    const ok = await onSave({ params: r.params, systemPrompt: prompt });
    setSaving(false);
    if (ok) {
      setOpen(false);
      if (trigger.current) trigger.current.focus();
    }
  };
  return html`
    <div class="picker">
      <button type="button" class="btn btn-ghost btn-icon" ref=${trigger} disabled=${disabled}
        aria-haspopup="dialog" aria-expanded=${open ? 'true' : 'false'}
        aria-label="Chat settings" title=${disabled ? 'Chat settings are available after the first message' : 'Chat settings'}
        onClick=${() => (open ? close() : start())}>
        <${Icon} name="sliders" />
      </button>
      <${Popover} open=${open} onClose=${close} anchorRef=${trigger} label="Chat settings" className="settings-popover popover-end"
        initialFocus="textarea">
        <form class="popover-form" onSubmit=${save}>
          <h2 class="popover-title">Chat settings</h2>
          <${Field} id="chat-system-prompt" label="System prompt" as="textarea" rows="4" value=${prompt}
            placeholder=${promptHint(model)} onValue=${setPrompt} />
          <${ParamFields} idPrefix="chat" form=${form} setForm=${setForm} efforts=${efforts}
            inherited=${model ? model.params || {} : null} />
          ${error && html`<p class="error-note" role="alert">${error}</p>`}
          <div class="popover-actions">
            <button type="button" class="btn" onClick=${() => { close(); trigger.current && trigger.current.focus(); }}>Cancel</button>
            <button type="submit" class="btn btn-primary" disabled=${saving}>Save</button>
          </div>
        </form>
      <//>
    </div>`;
}
