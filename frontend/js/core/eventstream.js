// eventstream.js — one connection to the server's event stream
// (GET /api/events), kept up with backoff. It runs in the shared worker
// (events-worker.js), which relays one stream to every tab of the same
// user, and in a tab itself where the browser has no SharedWorker. It
// touches no DOM, so that it can run in both.
//
// States: 'connecting' (never open yet), 'open', 'lost' (the stream failed
// and is being retried). Events missed while it was down are not replayed:
// after a reconnect it emits a `resync` event, and the app reloads what it
// shows.

/** The delays between attempts: 1 s doubling to 30 s, each ±20 %. */
export function backoff(attempt) {
  const base = Math.min(30000, 1000 * 2 ** Math.min(attempt, 5));
  return Math.round(base * (0.8 + Math.random() * 0.4));
}

/**
 * openStream connects to /api/events for user (the id the page signed in
 * as) and calls onEvent(envelope) for each event, onState(state) when the
 * state changes, and onSignedOut() once when the stream turns out to be
 * signed out or someone else's; it then stops. Returns {retry, close}:
 * retry tries at once while the stream is down.
 */
export function openStream(url, user, { onEvent, onState, onSignedOut }) {
  let es = null;
  let state = '';
  let everOpened = false;
  let attempts = 0;
  let timer = 0;
  let stopped = false;

  const setState = (s) => {
    if (s === state) return;
    state = s;
    onState(s);
  };

  const stop = () => {
    stopped = true;
    clearTimeout(timer);
    if (es) es.close();
    es = null;
  };

  const signedOut = () => {
    if (stopped) return;
    stop();
    onSignedOut();
  };

  const later = () => {
    clearTimeout(timer);
    timer = setTimeout(connect, backoff(attempts++));
  };

  // A refused stream (not a dropped one) may mean the session is gone:
  // ask, and stop if it is. Unreachable or a server error: try again.
  const whyRefused = async () => {
    try {
      const res = await fetch('/api/auth/state', { credentials: 'same-origin', headers: { Accept: 'application/json' } });
      if (res.ok) {
        const st = await res.json();
        if (!st || !st.signedIn || !st.user || st.user.id !== user) {
          signedOut();
          return;
        }
      }
    } catch {
      // unreachable: retry below
    }
    if (!stopped) later();
  };

  function connect() {
    if (stopped) return;
    clearTimeout(timer);
    if (es) es.close();
    const source = new EventSource(url);
    es = source;
    let verified = false;
    // Nothing is relayed before the stream says whose it is: a browser that
    // signed in as someone else since reconnects with their cookie.
    source.addEventListener('hello', (e) => {
      if (es !== source) return;
      let who = null;
      try {
        who = JSON.parse(e.data).user;
      } catch {
        // handled below
      }
      if (who !== user) {
        signedOut();
        return;
      }
      verified = true;
      attempts = 0;
      setState('open');
      if (everOpened) onEvent({ topic: 'resync', data: { reason: 'reconnected' } });
      everOpened = true;
    });
    source.onmessage = (e) => {
      if (es !== source || !verified) return;
      let env;
      try {
        env = JSON.parse(e.data);
      } catch {
        console.warn('lembas: ignoring an event that is not JSON');
        return;
      }
      onEvent(env);
    };
    // The server ends the stream of a session revoked (or a user disabled)
    // since it began with this event.
    source.addEventListener('signed-out', () => {
      if (es === source) signedOut();
    });
    // The browser's own reconnection waits a fixed 3 s forever and gives up
    // on a refusal; ours backs off and asks why it was refused.
    source.onerror = () => {
      if (es !== source) return;
      const refused = source.readyState === EventSource.CLOSED;
      source.close();
      es = null;
      setState('lost');
      if (refused) whyRefused();
      else later();
    };
  }

  setState('connecting');
  connect();
  return {
    retry() {
      if (!stopped && !es) connect();
    },
    close: stop,
  };
}
