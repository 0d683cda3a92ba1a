// notify.js — browser notifications for replies that finish while the page
// is hidden. Permission is only ever asked from a button the reader
// presses (NotifyBanner), never automatically.

import { html, useState } from '../../vendor/htm-preact/standalone.module.js';
import { Icon } from '../core/ui.js';
import { call, isDesktop } from '../core/transport.js';
import { loadPrefs } from '../core/store.js';

const DISMISS_KEY = 'lembas.notify.dismissed';

function supported() {
  return typeof window !== 'undefined' && 'Notification' in window;
}

function dismissed() {
  try {
    return localStorage.getItem(DISMISS_KEY) === '1';
  } catch {
    return false;
  }
}

/**
 * notifyReply shows a notification for a finished reply when permission
 * was granted and the page is hidden. onOpen runs when it is clicked.
 */
export function notifyReply({ chatId, title, status }, onOpen) {
  const body = status === 'error' ? 'The reply failed.' : status === 'stopped' ? 'The reply was stopped.' : 'The reply is ready.';
  // The desktop app notifies natively (D-Bus): the webview has no
  // Notification permission to ask for, and another chat being open is
  // reason enough to tell the reader.
  if (isDesktop()) {
    // Settings → Desktop can turn these off (Prefs.notifyReplies).
    loadPrefs()
      .then((p) => (p && p.notifyReplies === false ? null : call('App.Notify', { title: title || 'LLeMbas', body })))
      .catch((err) => console.warn('lembas: notification failed:', err.message));
    return;
  }
  if (!supported() || Notification.permission !== 'granted' || !document.hidden) return;
  try {
    const n = new Notification(title || 'LLeMbas', { body, tag: `lembas-chat-${chatId}`, icon: 'img/favicon.svg' });
    n.onclick = () => {
      window.focus();
      n.close();
      if (onOpen) onOpen(chatId);
    };
  } catch (err) {
    console.warn('lembas: notification failed:', err && err.message);
  }
}

export function NotifyBanner() {
  const [state, setState] = useState(() => (isDesktop() ? 'native' : supported() ? Notification.permission : 'unsupported'));
  const [hide, setHide] = useState(dismissed);
  if (state !== 'default' || hide) return null;
  const ask = async () => {
    try {
      const p = await Notification.requestPermission();
      setState(p);
    } catch {
      setState('denied');
    }
  };
  const close = () => {
    try {
      localStorage.setItem(DISMISS_KEY, '1');
    } catch {
      // ignore
    }
    setHide(true);
  };
  return html`
    <div class="notify-banner">
      <button type="button" class="btn btn-ghost btn-sm notify-on" onClick=${ask}
        title="Get a browser notification when a reply finishes while this window is in the background">
        <${Icon} name="bell" /><span>Notify me when replies finish</span>
      </button>
      <button type="button" class="btn btn-ghost btn-icon btn-sm" aria-label="Not now" title="Not now" onClick=${close}>
        <${Icon} name="close" />
      </button>
    </div>`;
}
