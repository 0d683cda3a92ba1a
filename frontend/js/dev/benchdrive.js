// benchdrive.js — loaded only when build/bench.sh starts the desktop app
// with LEMBAS_BENCH_REPLIES=N (Desktop.State says so). It streams N replies
// through the real composer, ten to a chat, and marks the start and the end
// with Desktop.Mark; the bench script reads those log lines and measures the
// processes' memory at each.

import { call } from '../core/transport.js';
import { navigate, hrefs } from '../core/router.js';

const PER_CHAT = 10;
const SETTLE_MS = 3000;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(cond, ms = 60000) {
  const started = Date.now();
  for (;;) {
    const v = cond();
    if (v) return v;
    if (Date.now() - started > ms) throw new Error('timed out at ' + location.hash);
    await sleep(20);
  }
}

async function send(text) {
  const box = await until(() => {
    const el = document.querySelector('#composer-input');
    return el && !el.disabled ? el : null;
  });
  const before = document.querySelectorAll('.msg-assistant').length;
  const setValue = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value').set;
  setValue.call(box, text);
  box.dispatchEvent(new Event('input', { bubbles: true }));
  await sleep(30);
  box.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', code: 'Enter', keyCode: 13, bubbles: true, cancelable: true }));
  await until(() => {
    const all = document.querySelectorAll('.msg-assistant');
    const m = all[all.length - 1];
    return all.length > before && m && !m.classList.contains('is-streaming') && !document.querySelector('#composer-button.is-stop');
  });
}

export async function run(n) {
  await until(() => document.querySelector('#composer-input'));
  await sleep(SETTLE_MS);
  await call('Desktop.Mark', 'start', 0);
  // The script measures now; give it the time to.
  await sleep(SETTLE_MS);
  for (let i = 0; i < n; i++) {
    if (i % PER_CHAT === 0) {
      navigate(hrefs.newChat);
      await sleep(100);
    }
    await send(`Bench message ${i + 1}`);
  }
  await sleep(SETTLE_MS);
  await call('Desktop.Mark', 'end', n);
}
