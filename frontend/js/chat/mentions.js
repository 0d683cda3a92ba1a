// mentions.js — `@` references in the composer. Typing `@` (at the start
// or after a space) offers the agent chat's project files (Agent.ProjectFiles:
// the server's cached listing only, so the menu never waits on the host;
// "No listing yet" until a walk has finished) and the person's library
// documents. Choosing one keeps `@name` in the sentence and attaches the
// contents as a chip (Agent.AttachFile, Library.AttachDocument), whose
// title says where it came from. Names are shown as text only.
//
// The trigger is the composer's menu registry entry for `@`
// (composer.js registerTrigger): items(query, ctx), choose(item, ctx).

import { call } from '../core/transport.js';
import { toast } from '../core/ui.js';

/** MAX_ITEMS bounds the menu. */
export const MAX_ITEMS = 12;

// The library's documents, read at most every half minute (a base's list
// changes rarely; the menu asks on every key).
const DOCS_FRESH_MS = 30000;
let docsCache = { key: '', at: 0, list: null };

function libraryDocs(ctx) {
  const bases = (ctx.library && ctx.library.bases) || [];
  if (bases.length === 0) return Promise.resolve([]);
  const key = bases.map((b) => b.id).join(',');
  if (docsCache.list && docsCache.key === key && Date.now() - docsCache.at < DOCS_FRESH_MS) return docsCache.list;
  const list = Promise.all(bases.map((b) => call('Library.Documents', b.id)
    .then((docs) => (docs || []).map((d) => ({ kind: 'doc', id: d.id, name: d.name, sub: b.name })))
    .catch(() => []))).then((lists) => lists.flat());
  docsCache = { key, at: Date.now(), list };
  return list;
}

/** tokenName is how a chosen item stays in the sentence: @name, spaces as _. */
export function tokenName(name) {
  return '@' + String(name).replace(/\s+/g, '_');
}

// note is a menu line that only says something ("No listing yet").
const note = (label) => ({ key: 'note:' + label, text: '', label, hint: '', note: true });

/**
 * trigger is the `@` entry of the composer's menu (registerTrigger): the
 * agent chat's project files first, then the library's documents. ctx is
 * chat.js's context: {chatId, agent, library, canUpload}.
 */
export const trigger = {
  label: 'References',
  pick: true,

  async items(query, ctx = {}) {
    // A reference attaches its contents: without the upload permission
    // the menu says so at once instead of offering what Send refuses.
    if (ctx.canUpload === false) return [note('Attaching files is not allowed for your account')];
    const q = query.toLowerCase();
    const out = [];
    const notes = [];
    if (ctx.agent && ctx.chatId) {
      try {
        const r = await call('Agent.ProjectFiles', ctx.chatId, query);
        if (!r.ready) notes.push(note('No listing yet'));
        for (const p of r.files || []) {
          const slash = p.lastIndexOf('/');
          const name = p.slice(slash + 1);
          out.push({ key: 'f:' + p, kind: 'file', path: p, name, text: tokenName(name), label: name, hint: slash > 0 ? p.slice(0, slash) : '' });
        }
      } catch (err) {
        notes.push(note(err.message));
      }
    }
    for (const d of await libraryDocs(ctx)) {
      if (q && !d.name.toLowerCase().includes(q)) continue;
      out.push({ key: 'd:' + d.id, kind: 'doc', id: d.id, name: d.name, text: tokenName(d.name), label: d.name, hint: d.sub });
    }
    return notes.concat(out).slice(0, MAX_ITEMS);
  },

  /** choose keeps @name in the sentence and attaches the contents. */
  async choose(item, ctx) {
    if (item.note) {
      ctx.focus();
      return;
    }
    ctx.replace(item.text + ' ');
    try {
      const v = item.kind === 'file'
        ? await call('Agent.AttachFile', ctx.app.chatId, item.path)
        : await call('Library.AttachDocument', item.id);
      ctx.attach(v);
    } catch (err) {
      toast(err.message, { error: true });
    }
  },

  /** highlight marks @words in the mirror. */
  highlight: (word) => word.length > 1,
};

/** sourceTitle is a chip's title: its name and where it came from. */
export function sourceTitle(item) {
  const name = item.name || 'file';
  if (item.sourcePath && item.sourceLabel && item.sourcePath !== name) return `${name} — ${item.sourcePath} from ${item.sourceLabel}`;
  if (item.sourceLabel || item.sourcePath) return `${name} — from ${item.sourceLabel || item.sourcePath}`;
  return name;
}
