// fields.js — the form pieces every settings, administration, account and
// sign-in screen builds with: Field (a label, one control, its hint and its
// error, tied together by ids), useFormError and FormError (a form's one
// error, announced again when it repeats), PasswordField (with Show/Hide), PasswordPair
// (a new password and its repetition) and FilterBar (the search and filter
// row above a list). Written once, so that every form control has a label,
// every hint is announced with its control, and an error marks its field.

import { html, useState, useRef, useCallback } from '../../vendor/htm-preact/standalone.module.js';

const BASE = { input: 'input', textarea: 'input textarea', select: 'select' };

// describedBy joins the ids a control is described by, or gives undefined
// so that no empty attribute is written.
function describedBy(...ids) {
  const s = ids.filter(Boolean).join(' ');
  return s || undefined;
}

/**
 * Field is one labelled form control: <div class="field"> holding the
 * label, the control (as: input, textarea or select), a hint (p#ID-help)
 * and an error (p#ID-error); the control is described by both, and marked
 * aria-invalid while there is an error. onValue gets the control's value
 * as it changes; options ([{value, label}]) fill a select. Every other
 * prop goes to the control itself (type, autocomplete, placeholder, …).
 *
 *   inputClass   more classes for the control (field-narrow, mono)
 *   className    more classes for the field (grow)
 *   labelHidden  the label is for screen readers only
 *   beside       a node beside the control, in an .inline-row (a Save button)
 *   after        a node after the hint (a "Clear key" checkbox)
 *   inputRef     a ref to the control
 */
export function Field({
  id, label, hint, error, as = 'input', onValue, options, inputClass, className, labelHidden,
  beside, after, inputRef, children, ...rest
}) {
  const helpId = hint ? id + '-help' : '';
  const errorId = error ? id + '-error' : '';
  const cls = BASE[as] + (inputClass ? ' ' + inputClass : '');
  const props = {
    ...rest,
    id,
    ref: inputRef,
    class: cls,
    'aria-describedby': describedBy(helpId, errorId, rest['aria-describedby']),
    'aria-invalid': error ? 'true' : undefined,
  };
  if (onValue) props[as === 'select' ? 'onChange' : 'onInput'] = (e) => onValue(e.currentTarget.value);
  let control;
  if (as === 'select') {
    const value = rest.value;
    control = html`<select ...${props}>
      ${options ? options.map((o) => html`<option value=${o.value} selected=${o.value === value}>${o.label}</option>`) : children}
    </select>`;
  } else if (as === 'textarea') {
    control = html`<textarea ...${props}></textarea>`;
  } else {
    control = html`<input ...${props} />`;
  }
  return html`
    <div class=${'field' + (className ? ' ' + className : '')}>
      <label class=${labelHidden ? 'visually-hidden' : 'field-label'} for=${id}>${label}</label>
      ${beside ? html`<div class="inline-row">${control}${beside}</div>` : control}
      ${hint ? html`<p class="field-help" id=${helpId}>${hint}</p>` : null}
      ${error ? html`<p class="error-note" role="alert" id=${errorId}>${error}</p>` : null}
      ${after}
    </div>`;
}

/**
 * useFormError is a form's error: fail(text, more) shows text (more: other
 * fields the form reads, such as the error's kind), clear() hides it. Each
 * fail is a new error, so that FormError announces the same words again.
 */
export function useFormError() {
  const [error, setError] = useState(null);
  const n = useRef(0);
  const fail = useCallback((text, more) => setError({ ...more, text, n: ++n.current }), []);
  const clear = useCallback(() => setError(null), []);
  return { error, fail, clear };
}

/** FormError shows useFormError's error where a screen reader hears it at once. */
export function FormError({ error, id, className }) {
  return html`
    <div class=${className} aria-live="assertive">${error && html`<p class="error-note" role="alert" id=${id} key=${error.n}>${error.text}</p>`}</div>`;
}

/**
 * PasswordField is a password with a Show/Hide button beside it, which
 * names the field it shows for screen readers.
 */
export function PasswordField({ id, label, hint, value, onValue, autocomplete, inputRef, inputClass, ...rest }) {
  const [shown, setShown] = useState(false);
  const helpId = hint ? id + '-help' : undefined;
  return html`
    <div class="field">
      <label class="field-label" for=${id}>${label}</label>
      <div class="password-row">
        <input id=${id} ref=${inputRef} class=${'input' + (inputClass ? ' ' + inputClass : '')} type=${shown ? 'text' : 'password'}
          value=${value} autocomplete=${autocomplete} spellcheck="false" autocapitalize="off" aria-describedby=${helpId}
          onInput=${(e) => onValue(e.currentTarget.value)} ...${rest} />
        <button type="button" class="btn btn-ghost btn-sm password-toggle" aria-controls=${id} aria-pressed=${shown ? 'true' : 'false'}
          onClick=${() => setShown((v) => !v)}>${shown ? 'Hide' : 'Show'}<span class="visually-hidden"> ${label.toLowerCase()}</span></button>
      </div>
      ${hint ? html`<p class="field-help" id=${helpId}>${hint}</p>` : null}
    </div>`;
}

/**
 * PasswordPair is a new password and its repetition, both autocomplete
 * new-password. With toggle each has a Show/Hide button. The form checks
 * the pair with pairProblem when it is submitted.
 */
export function PasswordPair({
  id, confirmId, label = 'Password', confirmLabel = 'Repeat the password', hint,
  value, confirm, onValue, onConfirm, toggle = false, inputClass, required,
}) {
  if (toggle) {
    return html`
      <${PasswordField} id=${id} label=${label} hint=${hint} value=${value} onValue=${onValue} autocomplete="new-password"
        inputClass=${inputClass} required=${required} />
      <${PasswordField} id=${confirmId} label=${confirmLabel} value=${confirm} onValue=${onConfirm} autocomplete="new-password"
        inputClass=${inputClass} required=${required} />`;
  }
  return html`
    <${Field} id=${id} label=${label} hint=${hint} type="password" value=${value} onValue=${onValue} autocomplete="new-password"
      inputClass=${inputClass} required=${required} />
    <${Field} id=${confirmId} label=${confirmLabel} type="password" value=${confirm} onValue=${onConfirm} autocomplete="new-password"
      inputClass=${inputClass} required=${required} />`;
}

/**
 * pairProblem says what is wrong with a new password and its repetition
 * (empty: the words for none given), or '' when nothing is.
 */
export function pairProblem(value, confirm, empty, differ = 'The two passwords differ.') {
  if (!value) return empty;
  if (value !== confirm) return differ;
  return '';
}

/** isWebAddress reports whether s is an http or https URL (a server's base URL). */
export function isWebAddress(s) {
  try {
    const u = new URL(s);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * modelOptions are a default-model select's options: first (value '0'),
 * then the value itself when it names a model no longer in models, then
 * every model by name.
 */
export function modelOptions(models, value, first) {
  const known = models.some((m) => String(m.id) === value);
  return [
    { value: '0', label: first },
    ...(!known && value !== '0' ? [{ value, label: 'Model no longer available' }] : []),
    ...models.map((m) => ({ value: String(m.id), label: m.name })),
  ];
}

/**
 * FilterBar is the search row above a list: a search field that takes the
 * room there is, then one select a filter ({id, label, value, options,
 * onValue}). Both call back with the new value.
 */
export function FilterBar({ search, filters = [] }) {
  return html`
    <div class="filters" role="search">
      <${Field} id=${search.id} label=${search.label} className="grow" type="search" value=${search.value}
        placeholder=${search.placeholder} onValue=${search.onValue} />
      ${filters.map((f) => html`
        <${Field} key=${f.id} id=${f.id} label=${f.label} as="select" value=${f.value} options=${f.options} onValue=${f.onValue} />`)}
    </div>`;
}
