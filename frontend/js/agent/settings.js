// settings.js — Settings → Agent (administrators): whether agent chats
// are on for this instance, and their limits: rounds per reply, how long
// one command may run, how much of its output reaches the model, and how
// long a reply waits for a person to answer a card.

import { html, useState, useEffect } from '../../vendor/htm-preact/standalone.module.js';
import { call } from '../core/transport.js';
import { toast } from '../core/ui.js';
import { Field, FormError, useFormError } from '../core/fields.js';

// LIMITS are the numeric settings: key, label, bounds, hint.
const LIMITS = [
  { key: 'maxRounds', id: 'agent-rounds', label: 'Rounds per reply', min: 1, max: 64, hint: 'How many times one reply may call tools and read their results (1–64).' },
  { key: 'commandTimeoutSec', id: 'agent-timeout', label: 'Command time limit (seconds)', min: 5, max: 3600, hint: 'A command still running after this is ended (5–3600).' },
  { key: 'outputCapKB', id: 'agent-output', label: 'Output cap (KB)', min: 4, max: 1024, hint: 'How much of a command\'s output or a file reaches the model (4–1024).' },
  { key: 'approvalTimeoutSec', id: 'agent-approval', label: 'Approval time limit (seconds)', min: 60, max: 86400, hint: 'How long a reply waits for an answer to its card; after that, what it asked about does not run and the reply ends (at least 60).' },
];

export function AgentSettings() {
  const [saved, setSaved] = useState(null);
  const [draft, setDraft] = useState(null);
  const [busy, setBusy] = useState(false);
  const { error, fail, clear } = useFormError();

  useEffect(() => {
    call('Agent.Settings').then(
      (s) => {
        setSaved(s);
        setDraft({ enabled: !!s.enabled, ...Object.fromEntries(LIMITS.map((l) => [l.key, String(s[l.key])])) });
      },
      (err) => fail(err.message),
    );
  }, []);

  const save = async (e) => {
    e.preventDefault();
    clear();
    const patch = {};
    if (draft.enabled !== !!saved.enabled) patch.enabled = draft.enabled;
    for (const l of LIMITS) {
      const n = Number(draft[l.key]);
      if (!Number.isInteger(n) || n < l.min || n > l.max) return fail(`${l.label}: a whole number from ${l.min} to ${l.max}.`);
      if (n !== saved[l.key]) patch[l.key] = n;
    }
    setBusy(true);
    try {
      const s = await call('Agent.SetSettings', patch);
      const next = s && typeof s === 'object' && 'enabled' in s ? s : await call('Agent.Settings');
      setSaved(next);
      setDraft({ enabled: !!next.enabled, ...Object.fromEntries(LIMITS.map((l) => [l.key, String(next[l.key])])) });
      toast('Agent settings saved.');
    } catch (err) {
      fail(err.message);
    }
    setBusy(false);
  };

  return html`
    <section class="settings-section" aria-labelledby="agent-settings-title">
      <div class="section-head">
        <div>
          <h2 id="agent-settings-title" class="section-title">Agent</h2>
          <p class="muted">Agent chats work on a host reached over SSH: replies run commands and change files there. People need the permission “Use agent chats”.</p>
        </div>
      </div>
      ${!draft && !error && html`<p class="loading-line" role="status">Loading…</p>`}
      ${!draft && html`<${FormError} error=${error} id="agent-settings-error" />`}
      ${!!draft && html`
        <form class="card" id="agent-settings" onSubmit=${save} noValidate>
          <div class="card-body form-grid">
            <label class="check"><input type="checkbox" id="agent-enabled" checked=${draft.enabled}
              onChange=${(e) => setDraft({ ...draft, enabled: e.currentTarget.checked })} /><span>Agent chats are on</span></label>
            ${LIMITS.map((l) => html`
              <${Field} key=${l.key} id=${l.id} label=${l.label} type="number" min=${l.min} max=${l.max} inputClass="field-narrow"
                value=${draft[l.key]} hint=${l.hint} onValue=${(v) => setDraft((d) => ({ ...d, [l.key]: v }))} />`)}
            <${FormError} error=${error} id="agent-settings-error" />
          </div>
          <div class="card-actions">
            <span class="spacer"></span>
            <button type="submit" class="btn btn-primary" id="agent-settings-save" disabled=${busy}>${busy ? 'Saving…' : 'Save'}</button>
          </div>
        </form>`}
    </section>`;
}
