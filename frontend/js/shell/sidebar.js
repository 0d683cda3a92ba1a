// sidebar.js — New chat, search, pinned models, folders with their chats,
// the other chats, Trash, Settings, notifications and the theme.

import { html, useState, useEffect, useRef } from '../../vendor/htm-preact/standalone.module.js';
import { call } from '../core/transport.js';
import { useStore, useCan, refreshChats, refreshFolders, isStreaming } from '../core/store.js';
import { hrefs, navigate } from '../core/router.js';
import { Snippet } from '../core/html.js';
import { Icon, MenuButton, Avatar, ask, confirmAction, choose, toast, toastError } from '../core/ui.js';
import { NotifyBanner } from './notify.js';
import { formatWhen } from '../core/format.js';

const COLLAPSED_KEY = 'lembas.folders.collapsed';

function loadCollapsed() {
  try {
    const v = JSON.parse(localStorage.getItem(COLLAPSED_KEY) || '[]');
    return new Set(Array.isArray(v) ? v.filter((x) => typeof x === 'number') : []);
  } catch {
    return new Set();
  }
}

function saveCollapsed(set) {
  try {
    localStorage.setItem(COLLAPSED_KEY, JSON.stringify([...set]));
  } catch {
    // ignore
  }
}

// ---------- Chat actions (shared with the chat header) ----------

export async function renameChat(chat) {
  const title = await ask({ title: 'Rename chat', label: 'Title', value: chat.title || '', confirmLabel: 'Rename' });
  if (!title || title === chat.title) return;
  try {
    await call('Chats.Update', chat.id, { title });
    refreshChats();
  } catch (err) {
    toastError('Could not rename the chat', err);
  }
}

async function moveChat(chat, folders) {
  if (folders.length === 0) {
    toast('There are no folders yet. Create one with the + next to “Folders”.');
    return;
  }
  const options = [{ value: '', label: 'No folder' }, ...folders.map((f) => ({ value: String(f.id), label: f.name }))];
  const v = await choose({ title: 'Move to folder', label: 'Folder', options, value: chat.folderId ? String(chat.folderId) : '' });
  if (v === null || v === undefined) return;
  try {
    await call('Chats.Update', chat.id, v ? { folderId: Number(v) } : { clearFolder: true });
    refreshChats();
  } catch (err) {
    toastError('Could not move the chat', err);
  }
}

async function togglePin(chat) {
  try {
    await call('Chats.Update', chat.id, { pinned: !chat.pinned });
    refreshChats();
  } catch (err) {
    toastError(chat.pinned ? 'Could not unpin the chat' : 'Could not pin the chat', err);
  }
}

export async function trashChat(chat, openChatId) {
  try {
    await call('Chats.Trash', chat.id);
  } catch (err) {
    toastError('Could not delete the chat', err);
    return;
  }
  if (openChatId === chat.id) navigate(hrefs.newChat);
  refreshChats();
  toast('Chat deleted', {
    timeout: 8000,
    action: {
      label: 'Undo',
      run: async () => {
        try {
          await call('Chats.Restore', chat.id);
          refreshChats();
        } catch (err) {
          toastError('Could not restore the chat', err);
        }
      },
    },
  });
}

// ---------- Rows ----------

function ChatRow({ chat, active, folders, openChatId }) {
  const streaming = isStreaming(chat);
  const title = chat.title || 'Untitled chat';
  return html`
    <li class=${'chat-row' + (active ? ' is-active' : '') + (chat.unread ? ' is-unread' : '')}>
      <a class="chat-link" href=${hrefs.chat(chat.id)} aria-current=${active ? 'page' : undefined}
        title=${formatWhen(chat.updatedAt)}>
        ${chat.pinned ? html`<${Icon} name="pin" className="chat-pin" />` : null}
        <span class="chat-link-title">${title}</span>
        ${chat.pinned ? html`<span class="visually-hidden">, pinned</span>` : null}
        ${streaming ? html`<span class="row-streaming" aria-hidden="true"></span><span class="visually-hidden">, replying</span>` : null}
        ${chat.unread && !streaming ? html`<span class="row-unread" aria-hidden="true"></span><span class="visually-hidden">, unread</span>` : null}
      </a>
      <${MenuButton} label=${`Actions for “${title}”`} className="row-menu" items=${[
        { label: 'Rename', run: () => renameChat(chat) },
        { label: 'Move to folder…', run: () => moveChat(chat, folders) },
        { label: chat.pinned ? 'Unpin' : 'Pin', run: () => togglePin(chat) },
        { label: 'Delete', danger: true, run: () => trashChat(chat, openChatId) },
      ]} />
    </li>`;
}

function FolderBlock({ folder, chats, collapsed, onToggle, route, folders, openChatId }) {
  const rename = async () => {
    const name = await ask({ title: 'Rename folder', label: 'Name', value: folder.name, confirmLabel: 'Rename' });
    if (!name || name === folder.name) return;
    try {
      await call('Folders.Rename', folder.id, name);
      refreshFolders();
    } catch (err) {
      toastError('Could not rename the folder', err);
    }
  };
  const remove = async () => {
    const ok = await confirmAction({
      title: `Delete the folder “${folder.name}”?`,
      body: 'Its chats are not deleted: they move out of the folder.',
      confirmLabel: 'Delete folder',
      danger: true,
    });
    if (!ok) return;
    try {
      await call('Folders.Delete', folder.id);
      refreshFolders();
      refreshChats();
    } catch (err) {
      toastError('Could not delete the folder', err);
    }
  };
  const listId = `folder-${folder.id}-chats`;
  return html`
    <li class="folder">
      <div class="folder-head">
        <button type="button" class="folder-toggle" aria-expanded=${collapsed ? 'false' : 'true'} aria-controls=${listId}
          onClick=${onToggle}>
          <${Icon} name=${collapsed ? 'chevronRight' : 'chevronDown'} className="folder-chevron" />
          <span class="folder-name">${folder.name}</span>
          <span class="folder-count">${chats.length}</span>
        </button>
        <${MenuButton} label=${`Actions for the folder “${folder.name}”`} className="row-menu" items=${[
          { label: 'Rename', run: rename },
          { label: 'Delete', danger: true, run: remove },
        ]} />
      </div>
      <ul class="chat-list folder-chats" id=${listId} hidden=${collapsed}>
        ${chats.length === 0 ? html`<li class="folder-empty">No chats in this folder.</li>` : null}
        ${chats.map((c) => html`<${ChatRow} key=${c.id} chat=${c} active=${route.name === 'chat' && route.id === c.id}
          folders=${folders} openChatId=${openChatId} />`)}
      </ul>
    </li>`;
}

// ---------- Search ----------

function roleLabel(hit) {
  if (!hit.messageId) return 'Title';
  return hit.role === 'user' ? 'You' : 'Reply';
}

function SearchResults({ query, hits, searching, error, onPick }) {
  if (error) return html`<p class="error-note" role="alert">${error.message}</p>`;
  if (hits === null || (searching && hits.length === 0)) return html`<p class="loading-line" role="status">Searching…</p>`;
  if (hits.length === 0) return html`<p class="sidebar-note" role="status">No chats match “${query}”.</p>`;
  return html`
    <ul class="search-hits" aria-label="Search results">
      ${hits.map((h) => html`
        <li key=${h.chatId + ':' + h.messageId}>
          <a class="search-hit" href=${hrefs.chat(h.chatId)} onClick=${(e) => { e.preventDefault(); onPick(h); }}>
            <span class="hit-title">${h.chatTitle || 'Untitled chat'}</span>
            <span class="hit-meta">${roleLabel(h)}${h.createdAt ? ' · ' + formatWhen(h.createdAt) : ''}</span>
            <${Snippet} className="hit-snippet" markup=${h.snippet || ''} />
          </a>
        </li>`)}
    </ul>`;
}

// ---------- Sidebar ----------

export function Sidebar({ route, brand, footer }) {
  const store = useStore();
  const library = useCan('library.use');
  const [query, setQuery] = useState('');
  const [hits, setHits] = useState(null);
  const [searching, setSearching] = useState(false);
  const [searchError, setSearchError] = useState(null);
  const [collapsed, setCollapsed] = useState(loadCollapsed);
  const seq = useRef(0);
  const timer = useRef(0);

  useEffect(() => () => clearTimeout(timer.current), []);

  const runSearch = (q) => {
    clearTimeout(timer.current);
    const n = ++seq.current;
    if (!q.trim()) {
      setHits(null);
      setSearching(false);
      setSearchError(null);
      return;
    }
    setSearching(true);
    timer.current = setTimeout(async () => {
      try {
        const r = await call('Chats.Search', q.trim());
        if (n !== seq.current) return;
        setHits(Array.isArray(r) ? r : []);
        setSearchError(null);
      } catch (err) {
        if (n !== seq.current) return;
        setSearchError(err);
      }
      setSearching(false);
    }, 250);
  };

  const pick = (h) => {
    const target = h.messageId || 0;
    if (route.name === 'chat' && route.id === h.chatId) {
      if (target) window.dispatchEvent(new CustomEvent('lembas:reveal', { detail: target }));
      return;
    }
    navigate(hrefs.chat(h.chatId), target ? { focusMessage: target } : undefined);
  };

  const toggle = (id) => {
    const next = new Set(collapsed);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setCollapsed(next);
    saveCollapsed(next);
  };

  const newFolder = async () => {
    const name = await ask({ title: 'New folder', label: 'Name', confirmLabel: 'Create folder' });
    if (!name) return;
    try {
      await call('Folders.Create', name);
      refreshFolders();
    } catch (err) {
      toastError('Could not create the folder', err);
    }
  };

  const folders = store.folders;
  const folderIds = new Set(folders.map((f) => f.id));
  const loose = store.chats.filter((c) => !c.folderId || !folderIds.has(c.folderId));
  const pinnedModels = store.models.filter((m) => m.pinned);
  const searchingNow = query.trim() !== '';

  return html`
    <nav id="sidebar" class="sidebar" aria-label="Chats and settings">
      ${brand}
      <div class="sidebar-top">
        <a class="btn btn-primary sidebar-new" href=${hrefs.newChat}
          onClick=${(e) => { e.preventDefault(); navigate(hrefs.newChat); }}>
          <${Icon} name="plus" /><span>New chat</span>
        </a>
        <div class="search-box" role="search">
          <${Icon} name="search" className="search-icon" />
          <label class="visually-hidden" for="chat-search">Search chats</label>
          <input id="chat-search" class="input search-input" type="search" placeholder="Search chats" value=${query}
            autocomplete="off"
            onInput=${(e) => { setQuery(e.currentTarget.value); runSearch(e.currentTarget.value); }}
            onKeyDown=${(e) => { if (e.key === 'Escape' && query) { e.preventDefault(); e.stopPropagation(); setQuery(''); runSearch(''); } }} />
        </div>
      </div>

      <div class="sidebar-scroll">
        ${searchingNow ? html`
          <section class="sidebar-section" aria-label="Search results">
            <${SearchResults} query=${query.trim()} hits=${hits} searching=${searching} error=${searchError} onPick=${pick} />
          </section>` : html`
          ${pinnedModels.length > 0 && html`
            <section class="sidebar-section" aria-labelledby="pinned-heading">
              <h2 id="pinned-heading" class="sidebar-heading">Pinned models</h2>
              <ul class="model-shortcuts">
                ${pinnedModels.map((m) => html`
                  <li key=${m.id}>
                    <button type="button" class="model-shortcut" title=${`New chat with ${m.name}`}
                      onClick=${() => navigate(hrefs.newChat, { modelId: m.id })}>
                      <${Avatar} model=${m} size="sm" />
                      <span class="model-shortcut-name">${m.name}</span>
                      <span class="visually-hidden">: new chat</span>
                    </button>
                  </li>`)}
              </ul>
            </section>`}

          <section class="sidebar-section" aria-labelledby="folders-heading">
            <div class="sidebar-heading-row">
              <h2 id="folders-heading" class="sidebar-heading">Folders</h2>
              <button type="button" class="btn btn-ghost btn-icon btn-sm" aria-label="New folder" title="New folder" onClick=${newFolder}>
                <${Icon} name="plus" />
              </button>
            </div>
            ${folders.length > 0 ? html`
              <ul class="folder-list">
                ${folders.map((f) => html`<${FolderBlock} key=${f.id} folder=${f} chats=${store.chats.filter((c) => c.folderId === f.id)}
                  collapsed=${collapsed.has(f.id)} onToggle=${() => toggle(f.id)} route=${route} folders=${folders}
                  openChatId=${store.openChatId} />`)}
              </ul>` : html`<p class="sidebar-note">No folders yet.</p>`}
          </section>

          <section class="sidebar-section" aria-labelledby="chats-heading">
            <h2 id="chats-heading" class="sidebar-heading">Chats</h2>
            ${store.chatsError && !store.chatsLoaded ? html`<p class="error-note" role="alert">${store.chatsError.message}</p>` : null}
            ${!store.chatsLoaded && !store.chatsError ? html`<p class="loading-line" role="status">Counting the chats…</p>` : null}
            ${store.chatsLoaded && store.chats.length === 0 ? html`
              <div class="empty-state">
                <p class="empty-state-title">No chats yet.</p>
                <p>The road goes ever on and on — but it has not started here. Your chats will be listed here.</p>
              </div>` : null}
            ${store.chatsLoaded && store.chats.length > 0 && loose.length === 0 ? html`<p class="sidebar-note">Every chat is in a folder.</p>` : null}
            ${loose.length > 0 && html`
              <ul class="chat-list">
                ${loose.map((c) => html`<${ChatRow} key=${c.id} chat=${c} active=${route.name === 'chat' && route.id === c.id}
                  folders=${folders} openChatId=${store.openChatId} />`)}
              </ul>`}
          </section>`}
      </div>

      <div class="sidebar-footer">
        <${NotifyBanner} />
        ${!!library && html`
          <div class="sidebar-links">
            <a class=${'btn btn-ghost sidebar-link' + (route.name === 'library' ? ' is-active' : '')} href=${hrefs.library()}
              id="sidebar-library" aria-current=${route.name === 'library' ? 'page' : undefined}>
              <${Icon} name="book" /><span>Library</span>
            </a>
          </div>`}
        <div class="sidebar-links">
          <a class=${'btn btn-ghost sidebar-link' + (route.name === 'trash' ? ' is-active' : '')} href=${hrefs.trash}
            aria-current=${route.name === 'trash' ? 'page' : undefined}>
            <${Icon} name="trash" /><span>Trash</span>
          </a>
          <a class=${'btn btn-ghost sidebar-link' + (route.name === 'settings' ? ' is-active' : '')} href=${hrefs.settings()}
            aria-current=${route.name === 'settings' ? 'page' : undefined}>
            <${Icon} name="settings" /><span>Settings</span>
          </a>
        </div>
        ${footer}
      </div>
    </nav>`;
}
