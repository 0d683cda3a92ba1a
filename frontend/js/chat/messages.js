// messages.js — one chat turn each: user turns as text (with an inline
// editor), assistant turns as sanitised HTML with reasoning, status,
// metrics and actions. A reply that is streaming is drawn by a ReplyView
// (frames.js) into a body Preact never touches.

import { html, Component, useState, useEffect, useRef } from '../../vendor/htm-preact/standalone.module.js';
import { ReplyState, ReplyView } from './frames.js';
import { partsOf } from './parts.js';
import { AskCard, PlanCard, planOf } from '../agent/cards.js';
import { Icon, confirmAction, toast } from '../core/ui.js';
import { formatMetrics, metricsTitle, formatDate } from '../core/format.js';
import { AttachmentList, SmallIcon, filesFrom, isUploading, useAttachments, useDropTarget } from './attachments.js';
import { ReadAloudButton, readAloud, audioStatus } from './voice.js';
import { OmittedTurns } from './omitted.js';

// ---------- Versions ----------

/**
 * Versions is a message's ‹ 2/3 › control: a regenerated reply or an
 * edited turn keeps what it replaced, and these buttons choose which
 * version (and the branch after it) the chat shows and sends. Drawn only
 * for a message with several versions; disabled while a reply is written.
 */
export function Versions({ msg, disabled, onSwitch }) {
  const v = msg.versions;
  if (!v || v.count < 2 || !onSwitch) return null;
  const go = (i, label) => onSwitch(v.ids[i], label);
  return html`
    <div class="msg-versions" role="group" aria-label="Versions">
      <button type="button" class="btn btn-ghost btn-sm btn-icon" aria-label="Previous version" title="Previous version"
        disabled=${disabled || v.index === 0} onClick=${() => go(v.index - 1, 'Previous version')}>
        <${Icon} name="chevronLeft" />
      </button>
      <span class="msg-versions-count" aria-live="polite">
        <span class="visually-hidden">Version </span>${v.index + 1}/${v.count}
      </span>
      <button type="button" class="btn btn-ghost btn-sm btn-icon" aria-label="Next version" title="Next version"
        disabled=${disabled || v.index >= v.count - 1} onClick=${() => go(v.index + 1, 'Next version')}>
        <${Icon} name="chevronRight" />
      </button>
    </div>`;
}

// DeleteVersion is the message's Delete version action when it has
// several versions: after a confirm it removes this version and what
// followed it. (A button among the actions, not a menu: a message is
// paint-contained, which would clip a menu drawn inside it.)
function DeleteVersion({ msg, disabled, onDeleteVersion }) {
  const v = msg.versions;
  if (!v || v.count < 2 || !onDeleteVersion || disabled) return null;
  const run = async () => {
    const ok = await confirmAction({
      title: 'Delete this version?',
      body: `Version ${v.index + 1} of ${v.count} and every message after it are deleted. The other versions stay.`,
      confirmLabel: 'Delete version', danger: true,
    });
    if (ok) onDeleteVersion(msg.id);
  };
  return html`
    <button type="button" class="btn btn-ghost btn-sm" onClick=${run}>
      <${Icon} name="trash" /><span>Delete version</span>
    </button>`;
}

// ---------- User turns ----------

export function UserMessage({ msg, canEdit, onEdit, onCopy, highlighted, onSwitchVersion, onDeleteVersion }) {
  const [editing, setEditing] = useState(false);
  const editBtn = useRef(null);
  const cancel = () => {
    setEditing(false);
    setTimeout(() => editBtn.current && editBtn.current.focus(), 0);
  };

  return html`
    <article class=${'msg msg-user' + (highlighted ? ' is-highlighted' : '')} id=${'msg-' + msg.id} aria-label="Your message">
      ${editing ? html`<${EditForm} msg=${msg} onEdit=${onEdit} onDone=${() => setEditing(false)} onCancel=${cancel} />` : html`
        ${msg.attachments && msg.attachments.length ? html`<${AttachmentList} items=${msg.attachments} label="Attached files" />` : null}
        ${msg.content ? html`<div class="msg-bubble"><p class="msg-text">${msg.content}</p></div>` : null}
        <div class="msg-footer">
          <${Versions} msg=${msg} disabled=${!canEdit} onSwitch=${onSwitchVersion} />
          <div class="msg-actions">
            <button type="button" class="btn btn-ghost btn-sm" ref=${editBtn} onClick=${() => setEditing(true)} disabled=${!canEdit}
              title=${canEdit ? 'Edit this message' : 'Wait for the reply to finish'}>
              <${Icon} name="edit" /><span>Edit</span>
            </button>
            <button type="button" class="btn btn-ghost btn-sm" onClick=${() => onCopy(msg.content || '')}>
              <${Icon} name="copy" /><span>Copy</span>
            </button>
            <${DeleteVersion} msg=${msg} disabled=${!canEdit} onDeleteVersion=${onDeleteVersion} />
          </div>
        </div>`}
    </article>`;
}

/**
 * EditForm edits a sent turn: its text and its files. The files start as
 * the message's; new ones upload as in the composer. Saving sends the
 * files only when they changed (null keeps them), and starts a new reply.
 */
function EditForm({ msg, onEdit, onDone, onCancel }) {
  const [text, setText] = useState(msg.content || '');
  const [saving, setSaving] = useState(false);
  const { files, lim, add, remove, keep } = useAttachments(msg.attachments, { discard: true });
  useDropTarget(add);
  const ta = useRef(null);
  const picker = useRef(null);

  useEffect(() => {
    if (ta.current) {
      ta.current.focus();
      ta.current.setSelectionRange(ta.current.value.length, ta.current.value.length);
      grow(ta.current);
    }
  }, []);

  const ready = files.filter((f) => f.status === 'ready');
  const ids = ready.map((f) => f.id);
  const filesChanged = ids.join(',') !== (msg.attachments || []).map((a) => a.id).join(',');
  const uploading = isUploading(files);
  const canSave = (!!text.trim() || ids.length > 0) && !uploading && !saving;
  const attachAllowed = !lim || lim.allowed !== false;

  const save = async (e) => {
    if (e) e.preventDefault();
    if (uploading) {
      toast('Wait for the files to finish uploading.');
      return;
    }
    if (!canSave) return;
    if (text === (msg.content || '') && !filesChanged) {
      onCancel();
      return;
    }
    setSaving(true);
    // Kept before the edit: its new version replaces this form (another
    // message id) before onEdit's answer comes back here.
    keep();
    const ok = await onEdit(msg, text, filesChanged ? ids : null);
    setSaving(false);
    if (ok) onDone();
    else keep(false);
  };
  const onKey = (e) => {
    if (e.key === 'Escape') {
      e.preventDefault();
      e.stopPropagation();
      onCancel();
    } else if (e.key === 'Enter' && !e.shiftKey && !e.isComposing && e.keyCode !== 229) {
      save(e);
    }
  };
  const onPaste = (e) => {
    const list = filesFrom(e.clipboardData);
    if (!list.length || !attachAllowed) return;
    if (!(e.clipboardData.getData('text/plain') || '').trim()) e.preventDefault();
    add(list);
  };

  return html`
    <form class="msg-edit" onSubmit=${save}>
      <${AttachmentList} items=${files} onRemove=${remove} label="Files of this message" />
      <label class="visually-hidden" for=${'edit-' + msg.id}>Edit your message</label>
      <textarea id=${'edit-' + msg.id} class="input msg-edit-input" ref=${ta} value=${text}
        onInput=${(e) => { setText(e.currentTarget.value); grow(e.currentTarget); }} onKeyDown=${onKey} onPaste=${onPaste}></textarea>
      <p class="msg-edit-note">Saving sends a new version of this message; the current one and its replies stay, a click away.</p>
      <div class="msg-edit-actions">
        <input type="file" multiple class="visually-hidden" tabindex="-1" aria-hidden="true" ref=${picker}
          accept=${lim ? lim.accept : undefined} id=${'edit-file-' + msg.id}
          onChange=${(e) => { add([...e.currentTarget.files]); e.currentTarget.value = ''; }} />
        <button type="button" class="btn btn-sm btn-ghost" disabled=${!attachAllowed} aria-label="Attach files"
          title=${attachAllowed ? 'Attach files' : 'You are not allowed to attach files'}
          onClick=${() => picker.current && picker.current.click()}>
          <${SmallIcon} name="clip" />
        </button>
        <span class="spacer"></span>
        <button type="button" class="btn btn-sm" onClick=${onCancel}>Cancel</button>
        <button type="submit" class="btn btn-sm btn-primary" disabled=${!canSave}>Save and send</button>
      </div>
    </form>`;
}

export function grow(el) {
  if (!el) return;
  el.style.height = 'auto';
  el.style.height = el.scrollHeight + 2 + 'px';
}

// ---------- Assistant body (imperative) ----------

/**
 * AssistantBody owns the reply's parts. Preact renders its container once;
 * after that the DOM inside is written by a ReplyView, one view per part
 * (parts.js): bound to the live state, or drawn once from a stored
 * message's parts, so frames never re-set the whole body.
 */
class AssistantBody extends Component {
  componentDidMount() {
    this.bind();
  }

  shouldComponentUpdate(next) {
    return next.state !== this.props.state
      || (!next.state && (next.msg.html !== this.props.msg.html || next.msg.reasoning !== this.props.msg.reasoning
        || next.msg.parts !== this.props.msg.parts || next.msg.status !== this.props.msg.status));
  }

  componentDidUpdate() {
    this.bind();
  }

  componentWillUnmount() {
    if (this.view) this.view.destroy();
  }

  bind() {
    if (this.view) this.view.destroy();
    const { state, msg, onAnnounce, onSynced } = this.props;
    // A stored reply is a state that is already over.
    const st = state || new ReplyState(msg.id, { html: msg.html || '', reasoning: msg.reasoning || '', parts: msg.parts,
      status: msg.status === 'streaming' ? 'final' : msg.status });
    this.view = new ReplyView(st, this.content, { onAnnounce, onSynced: state ? onSynced : null });
  }

  render() {
    return html`<div class="msg-content" ref=${(el) => { this.content = el; }}></div>`;
  }
}

// ---------- Assistant turns ----------

const STATUS_TEXT = {
  stopped: 'Stopped.',
  interrupted: 'This reply was interrupted.',
  length: 'The reply hit the length limit.',
};

function statusLine(status, error) {
  if (status === 'error') return error ? `The reply failed: ${error}` : 'The reply failed.';
  return STATUS_TEXT[status] || '';
}

// What the chrome around the body depends on; the message re-renders only
// when this changes, not on every frame.
function signature(st) {
  if (!st) return '';
  // Metrics come with every frame but are only shown once the reply ends.
  return [st.status, st.error, st.final ? JSON.stringify(st.metrics || null) : '', st.hasContent(), st.final, JSON.stringify(st.ask)].join('|');
}

export class AssistantMessage extends Component {
  componentDidMount() {
    this.watch();
  }

  componentDidUpdate(prev) {
    if (prev.state !== this.props.state) this.watch();
  }

  componentWillUnmount() {
    if (this.unsub) this.unsub();
  }

  watch() {
    if (this.unsub) this.unsub();
    this.unsub = null;
    const st = this.props.state;
    if (!st) return;
    this.sig = signature(st);
    // Read aloud automatically only a reply seen finishing here: one that
    // was already over when the chat opened is never read. A reply this
    // page started counts even when it was over before it was drawn (a
    // fast one ends while Chats.Send is answered); it is read once.
    let wasLive = !st.final || st.startedHere;
    const finished = () => {
      if (wasLive && st.final) {
        wasLive = false;
        st.startedHere = false;
        if (st.status === 'final') {
          audioStatus().then((a) => { if (a.autoRead && a.tts) readAloud(this.replyText(), this.props.msg.id); });
        }
      }
    };
    finished();
    this.unsub = st.subscribe(() => {
      finished();
      const s = signature(st);
      if (s !== this.sig) {
        this.sig = s;
        this.forceUpdate();
      }
    });
  }

  // replyText is what reading aloud reads: the Markdown source when the
  // message has it, else the finished reply's text, else the text shown.
  // A reply that just finished is read from its state, not the page: the
  // last frame may not be drawn yet, and a turn not laid out yet
  // (content-visibility: auto) has no innerText.
  replyText() {
    if (this.props.msg.content) return this.props.msg.content;
    const st = this.props.state;
    if (st && st.final) {
      // An inert document: nothing in it loads or runs.
      return new DOMParser().parseFromString(st.finalFull ?? st.joined(), 'text/html').body.textContent;
    }
    const el = document.getElementById('msg-' + this.props.msg.id);
    const body = el && el.querySelector('.msg-body');
    return body ? body.innerText : '';
  }

  // plan draws the plan a finished agent reply submitted, if it did.
  plan(msg, state, canCarryOut, onCarryOut) {
    const p = planOf(state ? state.parts : partsOf(msg));
    if (!p) return null;
    return html`<${PlanCard} plan=${p} canCarryOut=${canCarryOut && !!onCarryOut} onCarryOut=${() => onCarryOut(msg.id)} />`;
  }

  render({ msg, state, isLast, chatBusy, onCopy, onRegenerate, onContinue, onAnnounce, onSynced, highlighted, agent = false, onCarryOut,
    summarised = false, onSwitchVersion, onDeleteVersion }) {
    const status = state ? state.status : msg.status;
    const error = state ? state.error : msg.error;
    const metrics = state ? state.metrics : msg.metrics;
    const streaming = status === 'streaming';
    const hasContent = state ? state.hasContent() : !!(msg.html || msg.reasoning || (msg.parts && msg.parts.length));
    const line = statusLine(status, error);
    const m = formatMetrics(metrics);
    // A reply with no text yet has nothing to continue: Regenerate stays
    // (the server answers Continue on it as a regeneration too).
    const hasText = state ? state.hasText() : !!(msg.content || '').trim();
    const canContinue = isLast && !chatBusy && hasText && (status === 'length' || status === 'interrupted' || status === 'stopped');
    const canRegenerate = isLast && !chatBusy && !streaming;
    return html`
      <article class=${'msg msg-assistant' + (highlighted ? ' is-highlighted' : '') + (streaming ? ' is-streaming' : '')}
        id=${'msg-' + msg.id} aria-busy=${streaming ? 'true' : 'false'}
        aria-label=${'Reply' + (msg.modelLabel ? ' from ' + msg.modelLabel : '')}>
        ${summarised ? null : html`<${OmittedTurns} metrics=${metrics} />`}
        ${msg.modelLabel ? html`<p class="msg-model" title=${formatDate(msg.createdAt)}>${msg.modelLabel}</p>` : null}
        <${AssistantBody} state=${state} msg=${msg} onAnnounce=${onAnnounce} onSynced=${onSynced} />
        ${state && state.ask ? html`<${AskCard} key=${state.ask.id} ask=${state.ask} messageId=${msg.id} parts=${state.parts} />` : null}
        ${agent && !streaming ? this.plan(msg, state, isLast && !chatBusy, onCarryOut) : null}
        ${streaming && !hasContent ? html`<p class="loading-line msg-waiting">Waiting for the first words…</p>` : null}
        ${line ? html`<p class=${'msg-status' + (status === 'error' ? ' is-error' : '')}>${line}</p>` : null}
        ${!streaming && (m.length > 0 || canContinue || canRegenerate || msg.content || hasContent || msg.versions) ? html`
          <div class="msg-footer">
            <${Versions} msg=${msg} disabled=${chatBusy} onSwitch=${onSwitchVersion} />
            <div class="msg-actions">
              <button type="button" class="btn btn-ghost btn-sm" onClick=${() => onCopy(msg)}>
                <${Icon} name="copy" /><span>Copy</span>
              </button>
              ${canRegenerate && html`
                <button type="button" class="btn btn-ghost btn-sm" onClick=${onRegenerate}>
                  <${Icon} name="regenerate" /><span>Regenerate</span>
                </button>`}
              ${hasContent && html`<${ReadAloudButton} id=${msg.id} text=${() => this.replyText()} />`}
              ${canContinue && html`
                <button type="button" class="btn btn-ghost btn-sm" onClick=${onContinue}>
                  <${Icon} name="continue" /><span>Continue</span>
                </button>`}
              <${DeleteVersion} msg=${msg} disabled=${chatBusy} onDeleteVersion=${onDeleteVersion} />
            </div>
            ${m.length > 0 && html`<p class="msg-metrics" title=${metricsTitle(metrics)}>${m.join(' · ')}</p>`}
          </div>` : null}
      </article>`;
  }
}
