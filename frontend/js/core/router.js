// router.js — hash routes, so a reload (or the desktop window, which has a
// single document) returns to the same screen:
//   #/                        new chat
//   #/chat/ID                 a chat
//   #/trash                   trashed chats
//   #/settings                the first settings tab the reader may see
//   #/settings/TAB            a tab of SETTINGS_TABS; some take one more
//                             part (…/connections/new, …/users/ID, …/users/new)
//   #/library/TAB[/SUB]       the library: a tab of LIBRARY_TABS, SUB one
//                             item of it (an id, or new)
//
// SETTINGS_TABS is the one list of the settings routes: the router accepts
// them and settings.js draws its tab bar from them (each tab's view is
// settings.js's). A new tab is one entry here and one view there.

import { useState, useEffect, useRef } from '../../vendor/htm-preact/standalone.module.js';

/**
 * SETTINGS_TABS are the settings routes in their tab bar's order: admin
 * tabs only for administrators, desktop tabs only in the desktop app,
 * perm tabs only for holders of that permission (administrators hold all).
 */
export const SETTINGS_TABS = [
  { id: 'connections', label: 'Connections', admin: true },
  { id: 'models', label: 'Models', admin: true },
  { id: 'users', label: 'Users', admin: true },
  { id: 'groups', label: 'Groups', admin: true },
  { id: 'permissions', label: 'Permissions', admin: true },
  { id: 'instance', label: 'Instance', admin: true },
  { id: 'tools', label: 'Tools', admin: true },
  { id: 'custom-tools', label: 'Custom tools', admin: true },
  { id: 'web', label: 'Web', admin: true },
  { id: 'mcp', label: 'MCP servers', admin: true },
  { id: 'prompts', label: 'Prompts', admin: true },
  { id: 'suggestions', label: 'Suggestions', admin: true },
  { id: 'agent', label: 'Agent', admin: true },
  { id: 'ssh', label: 'SSH connections', perm: 'agent.use' },
  { id: 'account', label: 'Account' },
  { id: 'voice', label: 'Voice' },
  { id: 'keyboard', label: 'Keyboard' },
  { id: 'desktop', label: 'Desktop', desktop: true },
  { id: 'sharing', label: 'Sharing', desktop: true },
  { id: 'about', label: 'About' },
];

/**
 * LIBRARY_TABS are the library's routes in its tab bar's order
 * (library/library.js draws each).
 */
export const LIBRARY_TABS = [
  { id: 'knowledge', label: 'Knowledge' },
  { id: 'notes', label: 'Notes' },
  { id: 'memories', label: 'Memories' },
  { id: 'skills', label: 'Skills' },
];

/** settingsTabs returns the tabs a reader sees (perms: their permissions). */
export function settingsTabs({ admin, desktop, perms = [] }) {
  return SETTINGS_TABS.filter((t) => (!t.admin || admin) && (!t.desktop || desktop) &&
    (!t.perm || admin || (Array.isArray(perms) && perms.includes(t.perm))));
}

/** parse turns a location hash into a route object. */
export function parse(hash) {
  const path = String(hash || '').replace(/^#/, '').replace(/^\/+/, '');
  const parts = path.split('/').filter(Boolean);
  if (parts[0] === 'chat' && /^\d+$/.test(parts[1] || '')) return { name: 'chat', id: Number(parts[1]) };
  if (parts[0] === 'trash') return { name: 'trash' };
  if (parts[0] === 'settings') {
    const tab = SETTINGS_TABS.some((t) => t.id === parts[1]) ? parts[1] : '';
    return { name: 'settings', tab, sub: parts[2] || '' };
  }
  if (parts[0] === 'library') {
    const tab = LIBRARY_TABS.some((t) => t.id === parts[1]) ? parts[1] : LIBRARY_TABS[0].id;
    return { name: 'library', tab, sub: parts[1] === tab ? parts[2] || '' : '' };
  }
  return { name: 'new' };
}

export const hrefs = {
  newChat: '#/',
  chat: (id) => `#/chat/${id}`,
  trash: '#/trash',
  settings: (tab = '', sub = '') => (tab ? `#/settings/${tab}${sub ? '/' + sub : ''}` : '#/settings'),
  library: (tab = LIBRARY_TABS[0].id, sub = '') => `#/library/${tab}${sub ? '/' + sub : ''}`,
};

// One-shot intents carried alongside a navigation (not in the URL): which
// message to reveal after a search, which model a new chat starts with.
const intents = new Map();

/** navigate goes to a hash route; intent is read once by the next screen. */
export function navigate(href, intent) {
  if (intent) for (const [k, v] of Object.entries(intent)) intents.set(k, v);
  if (location.hash === href || (href === '#/' && (location.hash === '' || location.hash === '#'))) {
    window.dispatchEvent(new HashChangeEvent('hashchange'));
    return;
  }
  location.hash = href;
}

/** replaceRoute changes the hash without a history entry. */
export function replaceRoute(href) {
  history.replaceState(history.state, '', href);
  window.dispatchEvent(new HashChangeEvent('hashchange'));
}

/** takeIntent returns and forgets one intent. */
export function takeIntent(key) {
  const v = intents.get(key);
  intents.delete(key);
  return v;
}

/** useRoute re-renders on every hash change. */
export function useRoute() {
  const initialHash = useRef(location.hash);
  const [route, setRoute] = useState(() => ({ ...parse(location.hash), n: 0 }));
  useEffect(() => {
    const update = () => setRoute((r) => ({ ...parse(location.hash), n: r.n + 1 }));
    window.addEventListener('hashchange', update);
    // A route change between the first render and this subscription (a
    // replaceRoute right after start-up) fired no event we could hear.
    if (location.hash !== initialHash.current) update();
    return () => window.removeEventListener('hashchange', update);
  }, []);
  return route;
}
