// trash.js — chats moved to the trash: restore one, or empty the trash.

import { html, useState, useEffect, useCallback } from '../../vendor/htm-preact/standalone.module.js';
import { call, on } from '../core/transport.js';
import { refreshChats } from '../core/store.js';
import { confirmAction, toast, toastError, Icon } from '../core/ui.js';
import { formatWhen } from '../core/format.js';

export function TrashView() {
  const [list, setList] = useState(null);
  const [error, setError] = useState(null);

  const load = useCallback(() => {
    call('Chats.ListTrash').then(
      (l) => { setList(Array.isArray(l) ? l : []); setError(null); },
      (err) => setError(err),
    );
  }, []);

  useEffect(() => {
    document.title = 'Trash · LLeMbas';
    load();
    return on('chat', (ev) => {
      if (ev && ['trashed', 'restored', 'deleted'].includes(ev.change)) load();
    });
  }, []);

  const restore = async (c) => {
    try {
      await call('Chats.Restore', c.id);
      setList((l) => (l || []).filter((x) => x.id !== c.id));
      refreshChats();
      toast(`Restored “${c.title || 'Untitled chat'}”.`);
    } catch (err) {
      toastError('Could not restore the chat', err);
    }
  };

  const empty = async () => {
    const ok = await confirmAction({
      title: 'Empty the trash?',
      body: `${list.length === 1 ? 'The chat' : `All ${list.length} chats`} in the trash will be deleted for good. This cannot be undone.`,
      confirmLabel: 'Empty trash',
      danger: true,
    });
    if (!ok) return;
    try {
      await call('Chats.EmptyTrash');
      setList([]);
      toast('The trash is empty.');
    } catch (err) {
      toastError('Could not empty the trash', err);
    }
  };

  return html`
    <div class="page">
      <div class="page-head">
        <h1 class="page-title" tabindex="-1">Trash</h1>
        ${list && list.length > 0 && html`
          <button type="button" class="btn btn-danger" onClick=${empty}><${Icon} name="trash" /><span>Empty trash</span></button>`}
      </div>
      ${error && html`<p class="error-note" role="alert">${error.message}</p>`}
      ${list === null && !error ? html`<p class="loading-line" role="status">Sweeping the floor…</p>` : null}
      ${list && list.length === 0 && html`
        <div class="empty-state">
          <p class="empty-state-title">The trash is empty.</p>
          <p>Nothing here but dust and an old pipe-weed tin. Deleted chats wait here until you empty the trash.</p>
        </div>`}
      ${list && list.length > 0 && html`
        <ul class="trash-list">
          ${list.map((c) => html`
            <li class="trash-row" key=${c.id}>
              <div class="trash-text">
                <span class="trash-title">${c.title || 'Untitled chat'}</span>
                <span class="trash-when">Last changed ${formatWhen(c.updatedAt)}</span>
              </div>
              <button type="button" class="btn btn-sm" onClick=${() => restore(c)}
                aria-label=${`Restore “${c.title || 'Untitled chat'}”`}>Restore</button>
            </li>`)}
        </ul>`}
    </div>`;
}
