// sw.js — the service worker of the browser app (served at /sw.js, scope
// "/"; registered by js/login.js only in a secure context and never in the
// desktop app). It keeps the app shell — pages, styles, modules, images —
// for when the server cannot be reached, and nothing else:
//
//   - /api/ is never touched: calls, the event stream, avatars, sign-in and
//     everything per-user go straight to the network, as if there were no
//     worker. So is any non-GET request and anything asking for
//     text/event-stream.
//   - Navigations go to the network first (navigation preload); offline,
//     they get offline.html.
//   - Files under the frontend's version (/v/<version>/…, how index.html
//     names its scripts and styles) never change: a new version has new
//     URLs, so an upgrade never mixes two versions of the frontend. They are
//     answered from the cache, fetched only the first time; entries of other
//     versions are dropped then.
//   - Other shell files go to the network first (the server asks browsers
//     to revalidate them every time); the cached copy is only for when it
//     is unreachable.
//
// Bump VERSION when the list changes; old caches are deleted on activate.

const VERSION = 'v14';
const CACHE = `lembas-shell-${VERSION}`;
const OFFLINE = '/offline.html';

const SHELL = [
  '/',
  OFFLINE,
  '/css/tokens.css',
  '/css/base.css',
  '/css/controls.css',
  '/css/cards.css',
  '/css/lost.css',
  '/css/layout.css',
  '/css/overlays.css',
  '/css/sidebar.css',
  '/css/chat.css',
  '/css/messages.css',
  '/css/markdown.css',
  '/css/composer.css',
  '/css/picker.css',
  '/css/pages.css',
  '/css/settings.css',
  '/css/auth.css',
  '/css/account.css',
  '/css/admin.css',
  '/css/library.css',
  '/css/agent.css',
  '/css/terminal.css',
  '/css/quick.css',
  '/css/highlight.css',
  '/vendor/htm-preact/standalone.module.js',
  '/vendor/katex/katex.min.css',
  '/js/main.js',
  '/js/theme.js',
  '/js/account/account.js',
  '/js/account/login.js',
  '/js/account/sharing.js',
  '/js/agent/cards.js',
  '/js/agent/connections.js',
  '/js/agent/newchat.js',
  '/js/agent/settings.js',
  '/js/admin/access.js',
  '/js/admin/groups.js',
  '/js/admin/instance.js',
  '/js/admin/prompts.js',
  '/js/admin/users.js',
  '/js/admin/web.js',
  '/js/chat/attachments.js',
  '/js/chat/chat.js',
  '/js/chat/commands.js',
  '/js/chat/compact.js',
  '/js/chat/export.js',
  '/js/chat/composer.js',
  '/js/chat/controller.js',
  '/js/chat/firstrun.js',
  '/js/chat/frames.js',
  '/js/chat/math.js',
  '/js/chat/mentions.js',
  '/js/chat/messages.js',
  '/js/chat/modelpicker.js',
  '/js/chat/omitted.js',
  '/js/chat/parts.js',
  '/js/chat/suggestions.js',
  '/js/chat/trash.js',
  '/js/chat/voice.js',
  '/js/core/clipboard.js',
  '/js/core/events-worker.js',
  '/js/core/eventstream.js',
  '/js/core/fields.js',
  '/js/core/format.js',
  '/js/core/html.js',
  '/js/core/router.js',
  '/js/core/store.js',
  '/js/core/transport.js',
  '/js/core/ui.js',
  '/js/core/vnodes.js',
  '/js/library/common.js',
  '/js/library/inchat.js',
  '/js/library/knowledge.js',
  '/js/library/library.js',
  '/js/library/memories.js',
  '/js/library/notes.js',
  '/js/library/share.js',
  '/js/library/skills.js',
  '/js/settings/connections.js',
  '/js/settings/models.js',
  '/js/settings/settings.js',
  '/js/settings/voice.js',
  '/js/terminal/panel.js',
  '/js/shell/notify.js',
  '/js/shell/quick.js',
  '/js/shell/shortcuts.js',
  '/js/shell/sidebar.js',
  '/js/tools/custom.js',
  '/js/tools/mcp.js',
  '/js/tools/settings.js',
  '/img/favicon.svg',
  '/img/mark.svg',
  '/icons/icon-256.png',
  '/icons/icon-512.png',
  '/manifest.webmanifest',
];

self.addEventListener('install', (event) => {
  // One missing file must not stop the worker from installing: add them
  // one by one. Only offline.html is required.
  event.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    await Promise.all(SHELL.map((url) => cache.add(new Request(url, { cache: 'no-cache' })).catch(() => {})));
    if (!(await cache.match(OFFLINE))) await cache.add(OFFLINE);
    await self.skipWaiting();
  })());
});

self.addEventListener('activate', (event) => {
  event.waitUntil((async () => {
    // A navigation's request leaves while the worker is still starting,
    // rather than once it runs (a reload waited for both, one after the other).
    if (self.registration.navigationPreload) await self.registration.navigationPreload.enable().catch(() => {});
    const names = await caches.keys();
    await Promise.all(names.filter((n) => n.startsWith('lembas-shell-') && n !== CACHE).map((n) => caches.delete(n)));
    await self.clients.claim();
  })());
});

// ours reports whether the worker may answer this request at all.
function ours(request, url) {
  if (request.method !== 'GET') return false;
  if (url.origin !== self.location.origin) return false;
  if (url.pathname === '/api' || url.pathname.startsWith('/api/')) return false;
  if ((request.headers.get('Accept') || '').includes('text/event-stream')) return false;
  if (url.pathname === '/sw.js') return false;
  return true;
}

self.addEventListener('fetch', (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (!ours(request, url)) return; // the browser handles it as if we were not here

  if (request.mode === 'navigate') {
    event.respondWith((async () => {
      try {
        return (await event.preloadResponse) || await fetch(request);
      } catch {
        const cache = await caches.open(CACHE);
        return (await cache.match(OFFLINE)) || Response.error();
      }
    })());
    return;
  }

  if (url.pathname.startsWith('/v/')) {
    event.respondWith(versioned(request, url));
    return;
  }

  event.respondWith((async () => {
    const cache = await caches.open(CACHE);
    try {
      const response = await fetch(request);
      if (response.ok && response.type === 'basic' && !url.search) {
        cache.put(request, response.clone()).catch(() => {});
      }
      return response;
    } catch (err) {
      const cached = await cache.match(request, { ignoreSearch: true });
      if (cached) return cached;
      throw err;
    }
  })());
});

// versioned answers a file under a version from the cache, else from the
// network, keeping it when the server says it is the current version's
// (immutable); an old version's URL gets the current file, not for keeps.
let kept = ''; // the version whose files were last put in the cache
async function versioned(request, url) {
  const cache = await caches.open(CACHE);
  const cached = await cache.match(request);
  if (cached) return cached;
  const response = await fetch(request);
  if (response.ok && response.type === 'basic' && !url.search && (response.headers.get('Cache-Control') || '').includes('immutable')) {
    const version = url.pathname.split('/')[2];
    cache.put(request, response.clone()).then(() => {
      if (kept === version) return undefined;
      kept = version;
      return dropOtherVersions(cache, version);
    }).catch(() => {});
  }
  return response;
}

async function dropOtherVersions(cache, version) {
  for (const key of await cache.keys()) {
    const p = new URL(key.url).pathname;
    if (p.startsWith('/v/') && !p.startsWith(`/v/${version}/`)) await cache.delete(key);
  }
}
