// events-worker.js — the browser's one event stream, shared by every tab
// of one user (a module SharedWorker started by transport.js). A browser
// allows six HTTP/1.1 connections per host: with a stream per tab, the
// sixth tab's calls waited for minutes behind the others' streams.
//
// The worker is named after the user the tabs signed in as
// ("lembas-events-2:<id>"), so tabs of two people in one browser profile
// never share one, and eventstream.js drops a stream that the server says
// is someone else's. The 2 is the version of the messages below: a worker
// started by an older page lives on while that page is open, and a newer
// page must not talk to it, so bump it when they change. Messages to tabs: {type: 'state', state},
// {type: 'event', env}, {type: 'signed-out'} (the stream's session ended;
// each tab asks who it is now), {type: 'ping', ports} (are you there; ports
// is how many tabs the worker holds), {type: 'dropped'} (the worker let go
// of this tab, which answered no pings). From tabs: {type: 'retry'} (try now
// while down, or start again after a sign-out), {type: 'bye'} (the tab is
// going away) and {type: 'pong'}.
//
// A tab that crashed or was killed never says bye, and a port cannot tell
// that its other end is gone: every PING_MS the worker pings its ports and
// drops one that has answered none of its last two pings (?ping=N on the
// worker's URL sets N ms instead, for tests).

import { openStream } from './eventstream.js';

const named = /^lembas-events-2:(\d+)$/.exec(String(self.name));
const user = named ? Number(named[1]) : 0;
const valid = Number.isInteger(user) && user > 0;
const PING_MS = Math.max(100, Number(new URL(self.location.href).searchParams.get('ping')) || 30000);
const ports = new Set();
// Pings each port has left unanswered.
const missed = new WeakMap();

setInterval(() => {
  for (const p of ports) {
    const n = missed.get(p) || 0;
    if (n >= 2) {
      // A frozen tab (in the back-forward cache, or frozen in the
      // background) gets this when it wakes, and joins again.
      ports.delete(p);
      try {
        p.postMessage({ type: 'dropped' });
      } catch {
        // gone
      }
      p.close();
    }
  }
  for (const p of ports) {
    missed.set(p, (missed.get(p) || 0) + 1);
    try {
      p.postMessage({ type: 'ping', ports: ports.size });
    } catch {
      ports.delete(p);
    }
  }
}, PING_MS);
let stream = null;
let state = 'connecting';

function post(msg) {
  for (const p of ports) {
    try {
      p.postMessage(msg);
    } catch {
      ports.delete(p);
    }
  }
}

function start() {
  state = 'connecting';
  stream = openStream('/api/events', user, {
    onEvent: (env) => post({ type: 'event', env }),
    onState: (s) => {
      state = s;
      post({ type: 'state', state: s });
    },
    // Every tab of this worker belongs to the user whose session ended;
    // the next tab to connect (signed in again) starts a new stream.
    onSignedOut: () => {
      stream = null;
      post({ type: 'signed-out' });
    },
  });
}

self.onconnect = (e) => {
  const port = e.ports[0];
  ports.add(port);
  port.onmessage = (m) => {
    const msg = m.data || {};
    missed.set(port, 0);
    if (msg.type === 'bye') {
      ports.delete(port);
      port.close();
    } else if (msg.type === 'retry') {
      // After a sign-out, a tab still signed in as this user (again, with a
      // new session) asks for a new stream.
      if (stream) stream.retry();
      else if (valid) start();
    }
  };
  port.start();
  if (!valid) {
    port.postMessage({ type: 'signed-out' });
    return;
  }
  if (!stream) start();
  port.postMessage({ type: 'state', state });
};
