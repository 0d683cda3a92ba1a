// share.js — the Share button of an own knowledge base, note or skill, and
// its dialog: the people and groups of the household (Library.People) as
// checkboxes, those it is shared with now (Library.Shares) ticked, Save
// (Library.SetShares). Sharing lets them read, never change. The button
// shows only on the person's own items and only with library.share; the
// server refuses everything else anyway.

import { html, useState, useEffect, useRef } from '../../vendor/htm-preact/standalone.module.js';
import { call } from '../core/transport.js';
import { useCan } from '../core/store.js';
import { trapTab, toast } from '../core/ui.js';
import { FormError, useFormError } from '../core/fields.js';

/** granteeKey names a grantee uniquely: u:ID for a person, g:ID for a group. */
export function granteeKey(g) {
  return g.userId ? `u:${g.userId}` : `g:${g.groupId}`;
}

function targetOf(key) {
  const [k, id] = key.split(':');
  return k === 'u' ? { userId: Number(id) } : { groupId: Number(id) };
}

const KIND_WORDS = { base: 'knowledge base', note: 'note', skill: 'skill' };

function ShareDialog({ kind, id, name, onDone }) {
  const ref = useRef(null);
  const [people, setPeople] = useState(null);
  const [chosen, setChosen] = useState(new Set());
  const [busy, setBusy] = useState(false);
  const { error, fail, clear } = useFormError();

  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) {
      if (typeof d.showModal === 'function') d.showModal();
      else d.setAttribute('open', '');
    }
    let live = true;
    Promise.all([call('Library.People'), call('Library.Shares', { kind, id })]).then(
      ([p, s]) => {
        if (!live) return;
        setPeople(Array.isArray(p) ? p : []);
        setChosen(new Set((Array.isArray(s) ? s : []).map(granteeKey)));
      },
      (err) => { if (live) { setPeople([]); fail(err.message); } },
    );
    return () => { live = false; };
  }, []);

  useEffect(() => {
    if (people && ref.current) {
      const first = ref.current.querySelector('input');
      if (first) first.focus();
    }
  }, [people !== null]);

  const close = (result) => {
    const d = ref.current;
    if (d && d.open && typeof d.close === 'function') d.close();
    onDone(result);
  };
  const toggle = (key, checked) => {
    const next = new Set(chosen);
    if (checked) next.add(key);
    else next.delete(key);
    setChosen(next);
  };
  const save = async (e) => {
    e.preventDefault();
    setBusy(true);
    clear();
    try {
      const r = await call('Library.SetShares', { kind, id, to: [...chosen].map(targetOf) });
      const list = Array.isArray(r) ? r : [];
      toast(list.length ? `Shared “${name}” with ${list.length === 1 ? list[0].name : `${list.length} people and groups`}.` : `“${name}” is no longer shared.`);
      close(list);
    } catch (err) {
      fail(err.message);
      setBusy(false);
    }
  };

  const persons = (people || []).filter((g) => g.userId);
  const groups = (people || []).filter((g) => !g.userId && g.groupId);
  const row = (g) => {
    const key = granteeKey(g);
    const cid = 'share-' + key.replace(':', '-');
    return html`
      <li key=${key}>
        <label class="check member-check" for=${cid}>
          <input type="checkbox" id=${cid} checked=${chosen.has(key)} onChange=${(e) => toggle(key, e.currentTarget.checked)} />
          <span>${g.name}</span>
        </label>
      </li>`;
  };
  return html`
    <dialog class="dialog share-dialog" id="share-dialog" ref=${ref} aria-labelledby="share-title" aria-describedby="share-what"
      oncancel=${(e) => { e.preventDefault(); close(null); }} onKeyDown=${(e) => trapTab(e, ref.current)}>
      <form class="dialog-form" onSubmit=${save}>
        <h2 id="share-title" class="dialog-title">Share the ${KIND_WORDS[kind] || 'item'} “${name}”</h2>
        <p class="dialog-body" id="share-what">People you share with can read it, not change it.</p>
        ${people === null && html`<p class="loading-line" role="status">Asking who lives here…</p>`}
        ${people !== null && people.length === 0 && !error && html`<p class="muted">There is no one else to share with yet.</p>`}
        ${persons.length > 0 && html`
          <fieldset class="fieldset">
            <legend class="field-label">People</legend>
            <ul class="member-list share-list" id="share-people">${persons.map(row)}</ul>
          </fieldset>`}
        ${groups.length > 0 && html`
          <fieldset class="fieldset">
            <legend class="field-label">Groups</legend>
            <ul class="member-list share-list" id="share-groups">${groups.map(row)}</ul>
          </fieldset>`}
        <${FormError} error=${error} id="share-error" />
        <div class="dialog-actions">
          <button type="button" class="btn" onClick=${() => close(null)}>Cancel</button>
          <button type="submit" class="btn btn-primary" id="share-save" disabled=${busy || people === null}>${busy ? 'Saving…' : 'Save'}</button>
        </div>
      </form>
    </dialog>`;
}

/**
 * ShareButton opens the share dialog of an own item (kind: base, note or
 * skill). onChange gets the grantees after a save. It shows nothing for
 * someone without library.share.
 */
export function ShareButton({ kind, id, name, onChange, className }) {
  const may = useCan('library.share');
  const [open, setOpen] = useState(false);
  const btn = useRef(null);
  if (!may || !id) return null;
  const done = (list) => {
    setOpen(false);
    if (btn.current) btn.current.focus();
    if (list && onChange) onChange(list);
  };
  return html`
    <button type="button" class=${'btn' + (className ? ' ' + className : '')} ref=${btn} id=${`share-${kind}-${id}`}
      aria-haspopup="dialog" onClick=${() => setOpen(true)}>Share…</button>
    ${open && html`<${ShareDialog} kind=${kind} id=${id} name=${name} onDone=${done} />`}`;
}
