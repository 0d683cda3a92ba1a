// selftest.js — loaded only when App.Info says selfTest is on (the
// LEMBAS_SELFTEST variable, set by the desktop and browser tests). It drives
// the real transport from inside the page and reports each step back through
// Diag.Report, which the test reads from the process's output. It is the
// only way to prove, from outside, that a call went through the Wails bridge.

import { call, on, isDesktop } from './transport.js';

const report = (step, ok, detail) => call('Diag.Report', step, !!ok, String(detail ?? ''));

function eventRoundTrip() {
  return new Promise((resolve, reject) => {
    let timer;
    let retry;
    const off = on('selftest', (data) => {
      clearTimeout(timer);
      clearInterval(retry);
      off();
      resolve(data);
    });
    // The browser's EventSource may still be connecting: emit until heard.
    const emit = () => call('Diag.Emit', 'selftest', { n: 42 }).catch(() => {});
    emit();
    retry = setInterval(emit, 300);
    timer = setTimeout(() => {
      clearInterval(retry);
      off();
      reject(new Error('no event within 10 s'));
    }, 10000);
  });
}

async function waitForText(selector, text) {
  for (let i = 0; i < 100; i++) {
    const el = document.querySelector(selector);
    if (el && el.textContent.includes(text)) return el.textContent;
    await new Promise((r) => setTimeout(r, 50));
  }
  const main = document.querySelector('#main');
  return document.querySelector(selector)?.textContent ?? `(missing at ${location.hash}: ${(main ? main.innerText : '').replace(/\s+/g, ' ').slice(0, 200)})`;
}

function until(cond, ms = 20000) {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const tick = () => {
      let v;
      try { v = cond(); } catch { v = false; }
      if (v) return resolve(v);
      if (Date.now() - started > ms) return reject(new Error('timed out waiting'));
      setTimeout(tick, 50);
    };
    tick();
  });
}

// chatStep sends a message through the real composer and waits for the
// streamed reply, when the test has set up a model (otherwise it is skipped).
async function chatStep() {
  const models = await call('Models.Picker');
  if (!models.length) return;
  location.hash = '#/';
  const box = await until(() => document.querySelector('#composer-input'));
  const setValue = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value').set;
  setValue.call(box, 'Hello from the self-test');
  box.dispatchEvent(new Event('input', { bubbles: true }));
  // Let the composer re-render with the text before pressing Enter, as
  // typing would.
  await new Promise((r) => setTimeout(r, 100));
  box.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', code: 'Enter', keyCode: 13, bubbles: true, cancelable: true }));
  const done = () => {
    const m = [...document.querySelectorAll('.msg-assistant')].pop();
    return m && !m.classList.contains('is-streaming') && m.querySelector('.msg-body')?.innerText.trim() ? m : null;
  };
  const reply = await until(done).catch((e) => {
    const main = document.querySelector('#main');
    throw new Error(`${e.message} at ${location.hash}: ${(main ? main.innerText : '').replace(/\s+/g, ' ').slice(0, 300)}`);
  });
  await report('chat', location.hash.startsWith('#/chat/'), reply.querySelector('.msg-body').innerText.replace(/\s+/g, ' ').slice(0, 200));
}

export async function run(info) {
  try {
    await report('transport', isDesktop() === (info.mode === 'desktop'), `${isDesktop() ? 'bridge' : 'http'} for mode ${info.mode}`);
    location.hash = '#/settings/about';
    const shown = await waitForText('#info-datadir', info.dataDir);
    await report('rendered', shown.includes(info.dataDir), shown);
    await report('theme', true, document.documentElement.dataset.theme);

    const data = await eventRoundTrip();
    await report('event', data && data.n === 42, JSON.stringify(data));

    try {
      await call('Diag.NilDeref');
      await report('panic', false, 'a nil dereference returned no error');
    } catch (e) {
      await report('panic', e.kind === 'internal', `${e.kind}: ${e.message}`);
    }
    const again = await call('App.Info');
    await report('after-panic', again.dataDir === info.dataDir, 'the app still answers');

    // Files go through the same http.Handler in both modes.
    const css = await fetch('css/tokens.css');
    await report('asset', css.ok, css.status);
    const api = await fetch('/api/App.Info', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '[]' });
    const body = api.ok ? await api.json() : {};
    await report('handler-api', body.dataDir === info.dataDir, api.status);
    await chatStep();
    if (info.mode === 'desktop') {
      try {
        await call('App.Notify', { title: 'Self-test', body: 'A reply finished.' });
        await report('notify', true, 'sent');
      } catch (e) {
        await report('notify', false, `${e.kind}: ${e.message}`);
      }
    }
    await report('done', true, '');
  } catch (e) {
    await report('error', false, e && e.message).catch(() => {});
  }
}
