// events-worker.js — the browser's one event stream, shared by every tab
// of one user (a module SharedWorker started by transport.js). A browser
// allows six HTTP/1.1 connections per host: with a stream per tab, the
// sixth tab's calls waited for minutes behind the others' streams.
//
// The worker is named after the user the tabs signed in as
// ("lembas-events-1:<id>"), so tabs of two people in one browser profile
// never share one, and eventstream.js drops a stream that the server says
// is someone else's. The 1 is the version of the messages below: a worker
// started by an older page lives on while that page is open, and a newer
// page must not talk to it, so bump it when they change. Messages to tabs: {type: 'state', state},
// {type: 'event', env}, {type: 'signed-out'} (the stream's session ended;
// each tab asks who it is now). From tabs: {type: 'retry'} (try now while
// down, or start again after a sign-out) and {type: 'bye'} (the tab is
// going away).

import { openStream } from './eventstream.js';

const named = /^lembas-events-1:(\d+)$/.exec(String(self.name));
const user = named ? Number(named[1]) : 0;
const valid = Number.isInteger(user) && user > 0;
const ports = new Set();
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
