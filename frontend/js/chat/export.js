// export.js — a chat saved as a file (Markdown or JSON), following the
// chosen path (the server's export: GET /api/chats/{id}/export). The
// chat's header menu and the /export command both come here.
//
// In a browser the file is a download: the route sends it as an
// attachment named from the title. The desktop window asks the app
// instead (Desktop.SaveExport): WebKitGTK has nowhere to ask where a
// download goes, so the app shows the system's save dialog and writes
// the file itself (docs/NOTES.md, "Desktop").

import { isDesktop, call } from '../core/transport.js';
import { toast, toastError } from '../core/ui.js';

export const EXPORT_FORMATS = ['markdown', 'json'];

/** exportURL is the download route of one chat in format. */
export function exportURL(chatId, format) {
  return `/api/chats/${encodeURIComponent(chatId)}/export?format=${encodeURIComponent(format)}`;
}

/** exportChat saves the chat as a file; format is 'markdown' or 'json'. */
export async function exportChat(chatId, format = 'markdown') {
  if (!chatId) throw new Error('Send a message first: a new chat has nothing to export.');
  if (!EXPORT_FORMATS.includes(format)) throw new Error(`Unknown format “${format}”: use markdown or json.`);
  if (isDesktop()) {
    try {
      const r = await call('Desktop.SaveExport', chatId, format);
      if (r && r.saved) toast(`Saved ${r.name}`, { timeout: 4000 });
    } catch (err) {
      toastError('Could not export the chat', err);
    }
    return;
  }
  const a = document.createElement('a');
  a.href = exportURL(chatId, format);
  a.download = '';
  a.rel = 'noopener';
  a.hidden = true;
  document.body.appendChild(a);
  a.click();
  a.remove();
}
