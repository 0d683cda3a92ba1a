// skills.js — Library → Skills: named instructions a model can read when a
// task calls for one. The model is shown each skill's name and one-line
// description, and reads the body when it needs it. A list beside one
// skill: a form for an own skill (name, description, body with the
// server's preview, Save, Delete, Share), the skill read-only, with its
// owner, for a shared one. Leaving with unsaved changes asks first.

import { html, useState, useEffect, useRef } from '../../vendor/htm-preact/standalone.module.js';
import { call } from '../core/transport.js';
import { hrefs, navigate } from '../core/router.js';
import { CloseButton, Icon, confirmAction, toast } from '../core/ui.js';
import { Field, FormError, useFormError } from '../core/fields.js';
import { formatWhen } from '../core/format.js';
import { useLibraryEvents, useLeaveGuard, Missing, OwnerLine, SharedCount, MarkdownEditor, RenderedMarkdown } from './common.js';
import { ShareButton } from './share.js';

const fieldsOf = (s) => ({ name: (s && s.name) || '', description: (s && s.description) || '', body: (s && s.body) || '' });
const same = (a, b) => a.name === b.name && a.description === b.description && a.body === b.body;

function SkillEditor({ skill, onSaved, onDeleted }) {
  const creating = !skill;
  const [base, setBase] = useState(() => fieldsOf(skill));
  const [d, setDraft] = useState(base);
  const [shared, setShared] = useState(skill ? skill.sharedWith : 0);
  const [busy, setBusy] = useState('');
  const { error, fail, clear } = useFormError();
  const dirty = !same(d, base);
  const leave = useLeaveGuard(dirty);
  const set = (patch) => setDraft((x) => ({ ...x, ...patch }));
  const first = useRef(null);
  useEffect(() => {
    if (creating && first.current) first.current.focus({ preventScroll: true });
  }, []);

  const save = async (e) => {
    e.preventDefault();
    const input = { name: d.name.trim(), description: d.description.trim(), body: d.body };
    setBusy('save');
    clear();
    try {
      const saved = creating ? await call('Library.CreateSkill', input) : await call('Library.UpdateSkill', skill.id, input);
      const f = fieldsOf(saved);
      setBase(f);
      setDraft(f);
      toast(creating ? `Created the skill “${saved.name}”.` : 'Skill saved.');
      onSaved(saved);
    } catch (err) {
      fail(err.message);
    }
    setBusy('');
  };

  const remove = async () => {
    const ok = await confirmAction({
      title: `Delete the skill “${base.name}”?`,
      body: shared > 0 ? 'It is gone for you and for everyone you shared it with. This cannot be undone.' : 'This cannot be undone.',
      confirmLabel: 'Delete skill',
      danger: true,
    });
    if (!ok) return;
    setBusy('delete');
    try {
      await call('Library.DeleteSkill', skill.id);
      toast(`Deleted the skill “${base.name}”.`);
      setBase(d);
      onDeleted();
    } catch (err) {
      fail(err.message);
      setBusy('');
    }
  };

  return html`
    <form class="card library-detail" id="skill-form" aria-labelledby="skill-heading" onSubmit=${save} noValidate>
      <header class="card-header">
        <div class="library-detail-head">
          <h2 class="card-title" id="skill-heading">${creating ? 'New skill' : base.name}</h2>
          ${!creating && html`<p class="card-subtitle">Changed ${formatWhen(skill.updatedAt)}${shared > 0 ? ` · shared with ${shared}` : ''}</p>`}
        </div>
        <${CloseButton} label="Close the skill" onClose=${() => leave(hrefs.library('skills'))} />
      </header>
      <div class="card-body form-grid">
        <${Field} id="skill-name" inputRef=${first} label="Name" value=${d.name} autocomplete="off" placeholder="Plan a walking trip"
          onValue=${(v) => set({ name: v })} />
        <${Field} id="skill-description" label="Description" value=${d.description} autocomplete="off"
          placeholder="Routes, stages and what to pack for a walk of several days"
          onValue=${(v) => set({ description: v })}
          hint="One line. The model sees the name and this line, and reads the instructions when a task fits." />
        <${MarkdownEditor} id="skill-body" label="Instructions" value=${d.body} onValue=${(v) => set({ body: v })} rows="12"
          hint="Markdown: the steps, rules or examples the model follows." />
        <${FormError} error=${error} id="skill-error" />
      </div>
      <div class="card-actions wrap">
        ${!creating && html`<button type="button" class="btn btn-danger-ghost" id="skill-delete" disabled=${!!busy} onClick=${remove}>Delete</button>`}
        ${!creating && html`<${ShareButton} kind="skill" id=${skill.id} name=${base.name} onChange=${(list) => { setShared(list.length); onSaved(null); }} />`}
        <span class="spacer"></span>
        ${dirty && html`<span class="library-unsaved" id="skill-unsaved">Unsaved changes</span>`}
        <button type="submit" class="btn btn-primary" id="skill-save" disabled=${!!busy || (!creating && !dirty)}>
          ${busy === 'save' ? 'Saving…' : creating ? 'Create skill' : 'Save'}</button>
      </div>
    </form>`;
}

function SkillReader({ skill }) {
  return html`
    <article class="card library-detail" id="skill-view" aria-labelledby="skill-heading">
      <header class="card-header">
        <div class="library-detail-head">
          <h2 class="card-title" id="skill-heading">${skill.name}</h2>
          <${OwnerLine} item=${skill} id="skill-owner" />
        </div>
        <${CloseButton} label="Close the skill" onClose=${() => navigate(hrefs.library('skills'))} />
      </header>
      <div class="card-body form-grid">
        <p id="skill-view-description">${skill.description}</p>
        <${RenderedMarkdown} markdown=${skill.body || ''} id="skill-rendered" />
      </div>
    </article>`;
}

function SkillDetail({ id, onSaved, onDeleted }) {
  const [skill, setSkill] = useState(null);
  const [error, setError] = useState(null);
  const [version, setVersion] = useState(0);
  useEffect(() => {
    let live = true;
    call('Library.Skill', id).then((s) => { if (live) { setSkill(s); setError(null); } }, (err) => { if (live) setError(err); });
    return () => { live = false; };
  }, [id, version]);
  // A shared skill follows its owner's changes (an own one is edited here).
  useLibraryEvents(['skill'], () => { if (skill && !skill.mine) setVersion((v) => v + 1); });
  if (error && error.kind === 'not_found') {
    return html`<${Missing} id="skill-missing" what="skill" back=${hrefs.library('skills')} backLabel="Back to the skills" />`;
  }
  if (error) return html`<p class="error-note" role="alert">${error.message}</p>`;
  if (!skill) return html`<p class="loading-line" role="status">Fetching the skill…</p>`;
  return skill.mine
    ? html`<${SkillEditor} skill=${skill} onSaved=${onSaved} onDeleted=${onDeleted} />`
    : html`<${SkillReader} skill=${skill} />`;
}

export function SkillsTab({ sub }) {
  const [list, setList] = useState(null);
  const [error, setError] = useState(null);
  const selectedId = /^\d+$/.test(sub || '') ? Number(sub) : 0;
  const creating = sub === 'new';
  const load = async () => {
    try {
      const r = await call('Library.Skills');
      setList(Array.isArray(r) ? r : []);
      setError(null);
    } catch (err) {
      setError(err);
    }
  };
  useEffect(() => { load(); }, []);
  useLibraryEvents(['skill'], load);

  const hasDetail = creating || selectedId > 0;
  return html`
    <section class="settings-section" aria-labelledby="skills-title">
      <div class="section-head">
        <div>
          <h2 id="skills-title" class="section-title">Skills</h2>
          <p class="muted">Instructions the model reads when a task calls for them: it sees each skill's name and description.</p>
        </div>
        <a class="btn btn-primary" href=${hrefs.library('skills', 'new')} id="skill-create"><${Icon} name="plus" /><span>New skill</span></a>
      </div>
      ${error && html`<p class="error-note" role="alert">${error.message}</p>`}
      ${list === null && !error && html`<p class="loading-line" role="status">Gathering the craft…</p>`}
      ${list !== null && html`
        <div class=${'models-layout' + (hasDetail ? ' has-detail' : '')}>
          <div class="models-list-pane">
            ${list.length === 0 && html`
              <div class="empty-state" id="skills-empty">
                <p class="empty-state-title">No skills yet.</p>
                <p>Even hobbits know a trick or two. Write down how a task should be done, and models will follow it.</p>
              </div>`}
            ${list.length > 0 && html`
              <ul class="model-list library-list" aria-label="Skills" id="skills-list">
                ${list.map((s) => html`
                  <li class=${'model-row' + (s.id === selectedId ? ' is-selected' : '')} key=${s.id}>
                    <a class="model-row-main" href=${hrefs.library('skills', String(s.id))} aria-current=${s.id === selectedId ? 'true' : undefined}>
                      <span class="model-row-text">
                        <span class="model-row-name">${s.name}</span>
                        ${!!s.description && html`<span class="model-row-sub">${s.description}</span>`}
                        ${!s.mine && html`<span class="model-row-sub">${s.owner && s.owner.name ? s.owner.name : 'Someone'}</span>`}
                      </span>
                      ${!s.mine && html`<span class="badge">Shared</span>`}
                      <${SharedCount} item=${s} />
                    </a>
                  </li>`)}
              </ul>`}
          </div>
          ${hasDetail && html`
            <div class="models-detail-pane">
              ${creating
                ? html`<${SkillEditor} key="new" skill=${null}
                    onSaved=${(saved) => { load(); navigate(hrefs.library('skills', String(saved.id))); }} onDeleted=${() => {}} />`
                : html`<${SkillDetail} key=${selectedId} id=${selectedId}
                    onSaved=${() => load()} onDeleted=${() => { load(); navigate(hrefs.library('skills')); }} />`}
            </div>`}
        </div>`}
    </section>`;
}
