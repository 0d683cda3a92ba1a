// events-worker.js — the browser's one event stream, shared by every tab
// of one user (a module SharedWorker started by transport.js). A browser
// allows six HTTP/1.1 connections per host: with a stream per tab, the
// sixth tab's calls waited for minutes behind the others' streams.
//
// The worker is named after the user the tabs signed in as
// ("lembas-events:<id>"), so tabs of two people in one browser profile
// never share one, and eventstream.js drops a stream that the server says
// is someone else's. Messages to tabs: {type: 'state', state},
// {type: 'event', env}, {type: 'signed-out'}. From tabs: {type: 'retry'}
// (try now while down) and {type: 'bye'} (the tab is going away).

import { openStream } from './eventstream.js';

const user = Number(String(self.name).replace(/^lembas-events:/, ''));
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
    } else if (msg.type === 'retry' && stream) {
      stream.retry();
    }
  };
  port.start();
  if (!Number.isInteger(user) || user <= 0) {
    port.postMessage({ type: 'signed-out' });
    return;
  }
  if (!stream) start();
  port.postMessage({ type: 'state', state });
};
