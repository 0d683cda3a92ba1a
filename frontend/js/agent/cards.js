// cards.js — what an agent reply asks of the person, drawn in its bubble.
//
// AskCard is the reply's `ask` (frames and Chats.Live; docs/API.md): one
// card for a whole round — the calls waiting for approval (each tool with
// what it would run or touch), the questions ask_user put (options as
// buttons, free text each), or "this reply is waiting for you". It is
// answered once (Chats.Answer) and disappears when the next frame says
// ask is null; a card shown after its answer would be a button one could
// press twice, so nothing here hides it early except the answer's own
// busy state.
//
// PlanCard is a finished reply's plan_submit: the plan, as plain text (it
// is model output), with "Carry out this plan" (Chats.CarryOutPlan, which
// switches the chat to Edit).
//
// Everything shown comes from the model or the host: text only, never HTML.

import { html, useState, useEffect, useRef } from '../../vendor/htm-preact/standalone.module.js';
import { call } from '../core/transport.js';
import { toast } from '../core/ui.js';

/** argsOf parses a tool call's JSON arguments, or gives null. */
export function argsOf(text) {
  try {
    const v = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? v : null;
  } catch {
    return null;
  }
}

// callLines are what an approve item shows beside its tool: the command or
// path, and the directory it runs in, read from the call's arguments when
// the reply holds it; else the item's own text.
function callLines(item, parts) {
  const call = parts.find((p) => p.kind === 'tool_call' && p.callId && p.callId === item.callId);
  const a = call ? argsOf(call.text) : null;
  const main = a && typeof (a.command ?? a.path) === 'string' ? String(a.command ?? a.path) : '';
  const cwd = a && typeof a.cwd === 'string' ? a.cwd : '';
  const text = String(item.text || '');
  return { main: main || text, cwd, text: main && text && !text.includes(main) ? text : '' };
}

function remaining(deadline, now) {
  const ms = Number(deadline) - now;
  if (!Number.isFinite(ms) || !deadline) return '';
  if (ms <= 0) return 'Time is up.';
  const m = Math.ceil(ms / 60000);
  return m <= 1 ? 'Less than a minute left to answer.' : `${m} minutes left to answer.`;
}

function Question({ item, value, onValue }) {
  const id = 'ask-q-' + item.key;
  const options = Array.isArray(item.options) ? item.options.map(String) : [];
  return html`
    <li class="ask-question" data-key=${item.key}>
      <p class="ask-question-text" id=${id + '-label'}>${String(item.text || '')}</p>
      ${options.length > 0 && html`
        <div class="ask-options" role="group" aria-labelledby=${id + '-label'}>
          ${options.map((o, i) => html`
            <button type="button" key=${i} class=${'btn btn-sm ask-option' + (value === o ? ' is-chosen' : '')}
              aria-pressed=${value === o ? 'true' : 'false'} onClick=${() => onValue(value === o ? '' : o)}>${o}</button>`)}
        </div>`}
      <label class="visually-hidden" for=${id}>Your answer</label>
      <input class="input ask-answer" id=${id} value=${value} placeholder=${options.length ? 'Or write your own answer' : 'Your answer'}
        autocomplete="off" onInput=${(e) => onValue(e.currentTarget.value)} />
    </li>`;
}

/**
 * AskCard draws ask ({id, kind, items, deadline}) for the reply
 * messageId; parts are the reply's parts, where an approve item's call
 * is found by its callId. Render it with key=${ask.id}: its state
 * belongs to one ask.
 */
export function AskCard({ ask, messageId, parts = [] }) {
  const items = Array.isArray(ask.items) ? ask.items : [];
  const approvals = items.filter((it) => it.kind === 'approve');
  const questions = items.filter((it) => it.kind === 'question');
  const [answers, setAnswers] = useState({});
  // choices: each approve item's "run" or "skip", once chosen (a card of
  // several calls is answered call by call, or all at once).
  const [choices, setChoices] = useState({});
  const [note, setNote] = useState('');
  const [busy, setBusy] = useState(false);
  const [now, setNow] = useState(Date.now());
  const card = useRef(null);
  // A new ask is a new card: its parent keys it by ask.id, so its answers
  // start empty. (An effect that emptied them ran after the first paint
  // and threw away a choice made before it.)
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 15000);
    return () => clearInterval(t);
  }, []);

  // answer sends the card: approve true or false for every call, or
  // null for each call's own choice; the note goes with the calls not run.
  const answer = async (approve) => {
    const out = {};
    for (const it of items) {
      if (it.kind === 'question') {
        out[it.key] = { approve: true, text: String(answers[it.key] || '').trim() };
        continue;
      }
      const run = approve === null ? choices[it.key] === 'run' : approve;
      out[it.key] = { approve: run, text: run ? '' : note.trim() };
    }
    setBusy(true);
    // The card goes when the reply's next frame says so, and a focus left
    // in it would fall to the page's start: a keyboard answer goes on in
    // the chat's message box.
    const el = card.current;
    const hadFocus = !!el && el.contains(document.activeElement);
    try {
      await call('Chats.Answer', messageId, { id: ask.id, items: out });
      if (hadFocus) {
        const ta = el.closest('.chat-view')?.querySelector('.composer-input') || document.getElementById('composer-input');
        if (ta && !ta.disabled) ta.focus({ preventScroll: true });
      }
    } catch (err) {
      toast(err.message, { error: true });
      setBusy(false);
    }
  };

  const several = approvals.length > 1;
  const chosen = approvals.filter((it) => choices[it.key]).length;
  const choose = (key, v) => setChoices((c) => ({ ...c, [key]: c[key] === v ? undefined : v }));
  const title = approvals.length > 0
    ? (approvals.length === 1 ? 'Run this?' : `Run these ${approvals.length} calls?`)
    : questions.length > 0 ? (questions.length === 1 ? 'A question for you' : 'Questions for you')
    : 'This reply is waiting for you';
  const left = remaining(ask.deadline, now);
  return html`
    <section class="ask-card" ref=${card} id=${'ask-' + messageId} data-ask=${ask.id} data-kind=${ask.kind} aria-label=${title}>
      <h3 class="ask-title">${title}</h3>
      ${approvals.length > 0 && html`
        <ul class="ask-calls" aria-label="Calls waiting for approval">
          ${approvals.map((it) => {
            const l = callLines(it, parts);
            return html`
              <li class="ask-call" key=${it.key} data-key=${it.key}>
                <span class="ask-call-tool">${String(it.tool || 'tool')}</span>
                <pre class="ask-call-main">${l.main}</pre>
                ${l.cwd ? html`<p class="ask-call-cwd">in <span class="mono">${l.cwd}</span></p>` : null}
                ${l.text ? html`<p class="ask-call-text">${l.text}</p>` : null}
                ${several ? html`
                  <div class="ask-call-choice" role="group" aria-label=${'Run ' + String(it.tool || 'this call') + '?'}>
                    <button type="button" class=${'btn btn-sm ask-call-skip' + (choices[it.key] === 'skip' ? ' is-chosen' : '')}
                      aria-pressed=${choices[it.key] === 'skip' ? 'true' : 'false'} disabled=${busy}
                      onClick=${() => choose(it.key, 'skip')}>Don't run</button>
                    <button type="button" class=${'btn btn-sm ask-call-run' + (choices[it.key] === 'run' ? ' is-chosen' : '')}
                      aria-pressed=${choices[it.key] === 'run' ? 'true' : 'false'} disabled=${busy}
                      onClick=${() => choose(it.key, 'run')}>Run</button>
                  </div>` : null}
              </li>`;
          })}
        </ul>`}
      ${questions.length > 0 && html`
        <ol class="ask-questions">
          ${questions.map((it) => html`<${Question} key=${it.key} item=${it} value=${answers[it.key] || ''}
            onValue=${(v) => setAnswers((a) => ({ ...a, [it.key]: v }))} />`)}
        </ol>`}
      ${ask.kind === 'wait' && items.length > 0 && approvals.length === 0 && questions.length === 0 && html`
        ${items.map((it) => html`<p class="ask-wait-text" key=${it.key}>${String(it.text || '')}</p>`)}`}
      ${approvals.length > 0 && html`
        <div class="ask-note">
          <label class="field-label" for=${'ask-note-' + messageId}>${several ? 'A note with the calls not run (optional)' : 'A note with “Don\'t run” (optional)'}</label>
          <input class="input" id=${'ask-note-' + messageId} value=${note} autocomplete="off"
            placeholder="Why not, or what to do instead" onInput=${(e) => setNote(e.currentTarget.value)} />
        </div>`}
      <div class="ask-actions">
        ${left ? html`<span class="ask-deadline">${left}</span>` : null}
        <span class="spacer"></span>
        ${several ? html`
          <button type="button" class="btn ask-decline" disabled=${busy} onClick=${() => answer(false)}>Don't run any</button>
          ${chosen > 0 ? html`
            <button type="button" class="btn ask-send-choices" disabled=${busy || chosen < approvals.length}
              title=${chosen < approvals.length ? 'Choose Run or Don\'t run for each call first' : ''}
              onClick=${() => answer(null)}>${`Send choices (${chosen} of ${approvals.length})`}</button>` : null}
          <button type="button" class="btn btn-primary ask-approve" disabled=${busy} onClick=${() => answer(true)}>Run all</button>`
        : approvals.length > 0 ? html`
          <button type="button" class="btn ask-decline" disabled=${busy} onClick=${() => answer(false)}>Don't run</button>
          <button type="button" class="btn btn-primary ask-approve" disabled=${busy} onClick=${() => answer(true)}>Run</button>`
        : questions.length > 0 ? html`
          <button type="button" class="btn btn-primary ask-send" disabled=${busy} onClick=${() => answer(true)}>Send answers</button>`
        : html`
          <button type="button" class="btn btn-primary ask-continue" disabled=${busy} onClick=${() => answer(true)}>Continue</button>`}
      </div>
    </section>`;
}

/** planOf returns the plan a finished reply submitted ({text}) or null. */
export function planOf(parts) {
  for (let i = parts.length - 1; i >= 0; i--) {
    const p = parts[i];
    if (p.kind !== 'tool_call' || p.name !== 'plan_submit') continue;
    const a = argsOf(p.text);
    let text = '';
    if (a) text = typeof a.plan === 'string' ? a.plan : String(Object.values(a).find((v) => typeof v === 'string') || '');
    else text = String(p.text || '');
    return { text, callId: p.callId };
  }
  return null;
}

/** PlanCard shows a submitted plan, with "Carry out this plan" when it may be. */
export function PlanCard({ plan, canCarryOut, onCarryOut }) {
  const [busy, setBusy] = useState(false);
  const go = async () => {
    setBusy(true);
    try {
      await onCarryOut();
    } finally {
      setBusy(false);
    }
  };
  return html`
    <section class="plan-card" aria-label="The proposed plan">
      <h3 class="ask-title">The proposed plan</h3>
      <pre class="plan-text">${plan.text}</pre>
      ${canCarryOut && html`
        <div class="ask-actions">
          <span class="plan-hint">Switches the chat to Edit: files change without asking, commands still ask.</span>
          <span class="spacer"></span>
          <button type="button" class="btn btn-primary plan-carry" disabled=${busy} onClick=${go}>Carry out this plan</button>
        </div>`}
    </section>`;
}

/** RewoundNotice is the line an agent chat shows once its transcript was rewound. */
export function RewoundNotice() {
  return html`<p class="part-notice agent-rewound" role="note">The transcript was rewound; files changed by earlier steps are still on the host.</p>`;
}
