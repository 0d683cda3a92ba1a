// omitted.js — the transcript's marker above a reply that was made without
// the chat's oldest turns: the backend sends only the newest turns that fit
// the model's context and says how many it left out (metrics.omittedTurns).

import { html } from '../../vendor/htm-preact/standalone.module.js';

export function OmittedTurns({ metrics }) {
  const n = metrics && Number.isInteger(metrics.omittedTurns) ? metrics.omittedTurns : 0;
  if (n <= 0) return null;
  const text = n === 1 ? '1 earlier turn was not sent' : `${n.toLocaleString()} earlier turns were not sent`;
  return html`<p class="msg-omitted" role="note"
    title="The chat is longer than the model's context, so this reply was written from the newest turns only.">${text}</p>`;
}
