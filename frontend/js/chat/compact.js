// compact.js — compaction in the page (issue 16): the summary block that
// stands in the transcript where a chat's earlier turns were summarised
// (those turns folded behind a disclosure, still readable, and Undo), and
// the composer's context meter (what the next request will take).
//
// The server decides everything: which turns the summary covers
// (chat.compact.through, validated on every read), the summary's HTML
// (rendered and sanitised by the one renderer), and the token counts
// (chat.context; "~" when estimated, a percentage only when the model's
// window is known — unknown is not zero).

import { html, useState, useEffect } from '../../vendor/htm-preact/standalone.module.js';
import { call } from '../core/transport.js';
import { Rendered } from '../core/html.js';
import { formatNumber, formatContext, formatDate } from '../core/format.js';
import { toast, toastError } from '../core/ui.js';

const COMPACTED = 'lembas:compacted';

/**
 * compactChat asks the chat's model to summarise its earlier turns
 * (Chats.Compact) and tells the page's meter what the next request took
 * before. Resolves to the chat view, or null when it was refused (the
 * reason is shown as a toast). The /compact command calls it.
 */
export async function compactChat(chatId) {
  try {
    const view = await call('Chats.Compact', chatId);
    window.dispatchEvent(new CustomEvent(COMPACTED, { detail: { chatId, view } }));
    return view;
  } catch (err) {
    // A refusal (a chat too short to compact) says why in a
    // sentence of its own; "Could not compact this chat: there is
    // nothing…" read as a failure.
    if (err && err.kind === 'invalid') toast(err.message, { timeout: 6000 });
    else toastError('Could not compact this chat', err);
    return null;
  }
}

/** uncompactChat sends the chat's full turns again (Chats.Uncompact). */
export async function uncompactChat(chatId) {
  try {
    return await call('Chats.Uncompact', chatId);
  } catch (err) {
    toastError('Could not undo the compaction', err);
    return null;
  }
}

/**
 * foldCompacted lays out a transcript's messages around the chat's
 * compaction: a disclosure, the loaded messages it covers (hidden while it
 * is closed), the summary block, then the rest. Without a compaction it
 * returns render's output for each message, as before.
 *
 * The list stays flat, every message where it was: moved into a wrapper
 * (a <details>), Preact would make its elements again, and Chromium did
 * not paint the new ones (content-visibility: auto) until scrolled. The
 * disclosure hides what follows it up to the summary by CSS
 * (messages.css).
 */
export function foldCompacted(messages, chat, render) {
  const cp = chat && chat.compact;
  if (!cp) return messages.map(render);
  const covered = messages.filter((m) => m.id <= cp.through);
  const rest = messages.filter((m) => m.id > cp.through);
  return [
    covered.length > 0 ? html`<${Fold} key="compact-fold" count=${covered.length} />` : null,
    ...covered.map(render),
    html`<${SummaryBlock} key="compact-summary" chatId=${chat.id} compact=${cp} />`,
    ...rest.map(render),
  ];
}

function Fold({ count }) {
  const [open, setOpen] = useState(false);
  return html`
    <div class=${'compact-fold' + (open ? ' is-open' : '')}>
      <button type="button" class="btn btn-ghost btn-sm compact-fold-toggle" aria-expanded=${open ? 'true' : 'false'}
        onClick=${() => setOpen(!open)}>
        ${count === 1 ? '1 earlier message' : `${formatNumber(count)} earlier messages`}
      </button>
    </div>`;
}

/** summarised says whether a reply is after the chat's summary (its "earlier turns were not sent" marker is then the summary's business). */
export function summarised(chat, msg) {
  return !!(chat && chat.compact && msg.id > chat.compact.through);
}

function SummaryBlock({ chatId, compact }) {
  const [busy, setBusy] = useState(false);
  const undo = async () => {
    setBusy(true);
    await uncompactChat(chatId);
    setBusy(false);
  };
  return html`
    <section class="compact-summary" aria-label="Summary of the earlier messages">
      <header class="compact-summary-head">
        <h2 class="compact-summary-title">Summary of the earlier messages</h2>
        <span class="compact-summary-when">${formatDate(compact.at)}</span>
        <button type="button" class="btn btn-ghost btn-sm compact-undo" disabled=${busy} onClick=${undo}
          title="Send the earlier messages to the model again instead of this summary">Undo</button>
      </header>
      <p class="compact-summary-note">Only this summary is sent to the model in place of the messages above it.</p>
      <${Rendered} className="compact-summary-body markdown" markup=${compact.html} />
    </section>`;
}

/** tokens shows a count, with "~" when it is an estimate. */
function tokens(n, estimated) {
  return (estimated ? '~' : '') + formatNumber(n);
}

/**
 * ContextMeter is the composer's line: the next request's tokens, a bar
 * and a percentage when the model's window is known, and after this page
 * compacted the chat what it took before. Compact asks for a summary.
 */
export function ContextMeter({ chat, busy = false }) {
  const [before, setBefore] = useState(null); // {chatId, at, used}
  const [working, setWorking] = useState(false);
  useEffect(() => {
    const onCompacted = (ev) => {
      const { chatId, view } = ev.detail || {};
      if (view && view.context && view.compact && typeof view.context.before === 'number') {
        setBefore({ chatId, at: view.compact.at, used: view.context.before, estimated: !!view.context.beforeEstimated });
      }
    };
    window.addEventListener(COMPACTED, onCompacted);
    return () => window.removeEventListener(COMPACTED, onCompacted);
  }, []);
  const ctx = chat && chat.context;
  if (!chat || !chat.id || !ctx) return null;
  const limit = ctx.limit > 0 ? ctx.limit : 0;
  const pct = limit ? Math.min(100, Math.round((ctx.used / limit) * 100)) : null;
  const was = before && before.chatId === chat.id && chat.compact && chat.compact.at === before.at ? before : null;
  const compact = async () => {
    setWorking(true);
    await compactChat(chat.id);
    setWorking(false);
  };
  const title = limit
    ? `The next request takes ${tokens(ctx.used, ctx.estimated)} of the model's ${formatNumber(limit)} tokens${ctx.estimated ? ' (estimated)' : ''}.`
    : `The next request takes ${tokens(ctx.used, ctx.estimated)} tokens${ctx.estimated ? ' (estimated)' : ''}; the model's context length is unknown.`;
  return html`
    <div class="context-meter" title=${title}>
      <span class="context-meter-text" id="context-meter-text">
        ${was !== null ? html`<span class="context-meter-before">${tokens(was.used, was.estimated)} → </span>` : null}${tokens(ctx.used, ctx.estimated)}${limit ? ` / ${formatContext(limit)}` : ''} tokens${pct !== null ? ` · ${pct === 0 && ctx.used > 0 ? '<1' : pct}%` : ''}
      </span>
      ${pct !== null ? html`
        <span class=${'context-meter-bar' + (pct >= 90 ? ' is-full' : pct >= 75 ? ' is-high' : '')} role="meter"
          aria-valuemin="0" aria-valuemax="100" aria-valuenow=${pct} aria-labelledby="context-meter-text">
          <span class="context-meter-fill" style=${{ width: pct + '%' }}></span>
        </span>` : null}
      <button type="button" class="btn btn-ghost btn-sm context-meter-compact" id="compact-button"
        disabled=${busy || working} onClick=${compact}
        title="Ask the model to summarise the earlier messages; the last two exchanges are kept as they are">
        ${working ? 'Compacting…' : 'Compact'}
      </button>
    </div>`;
}
