// selftest.js — loaded only when App.Info says selfTest is on (the
// LEMBAS_SELFTEST variable, set by the desktop and browser tests). It drives
// the real transport from inside the page and reports each step back through
// Diag.Report, which the test reads from the process's output. It is the
// only way to prove, from outside, that a call went through the Wails bridge.

import { call, on, isDesktop } from '../core/transport.js';

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
      reject(new Error('no event within 30 s'));
    }, 30000);
  });
}

// The limits here are generous: the desktop tests run beside others on a
// loaded machine, where a first render can take seconds.
async function waitForText(selector, text) {
  for (let i = 0; i < 600; i++) {
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

// A 1×1 PNG, for when the canvas cannot make one.
const TINY_PNG = [137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13, 73, 72, 68, 82, 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 31, 21, 196, 137,
  0, 0, 0, 13, 73, 68, 65, 84, 120, 156, 99, 248, 207, 192, 240, 31, 0, 5, 0, 1, 255, 137, 153, 61, 29, 0, 0, 0, 0, 73, 69, 78, 68, 174, 66, 96, 130];

// pngFile draws a small picture and returns it as a PNG File.
async function pngFile() {
  const c = document.createElement('canvas');
  c.width = 64;
  c.height = 48;
  const g = c.getContext('2d');
  let blob = null;
  if (g) {
    g.fillStyle = '#ffffff';
    g.fillRect(0, 0, 64, 48);
    g.fillStyle = '#2f5d2f';
    g.fillRect(8, 8, 32, 24);
    blob = await new Promise((resolve) => c.toBlob(resolve, 'image/png'));
  }
  if (!blob) blob = new Blob([new Uint8Array(TINY_PNG)], { type: 'image/png' });
  return new File([blob], 'selftest.png', { type: 'image/png' });
}

// attachStep attaches a PNG through the composer's own file input (so it
// is uploaded by attachments.js with POST /api/files — in the desktop app
// through the Wails asset server, which is our http.Handler), sends it,
// and checks the chip in the sent message and GET /api/files/{id}.
async function attachStep() {
  const models = await call('Models.Picker');
  if (!models.length) return;
  location.hash = '#/';
  await until(() => location.hash === '#/' && document.querySelector('#composer-file') && !document.querySelector('.msg-user'));
  const input = document.querySelector('#composer-file');
  const dt = new DataTransfer();
  dt.items.add(await pngFile());
  input.files = dt.files;
  input.dispatchEvent(new Event('change', { bubbles: true }));
  const chip = await until(() => document.querySelector('.composer .attach-chip.is-ready, .composer .attach-chip.is-error'));
  const chipText = [...chip.querySelectorAll('.attach-name, .attach-detail')].map((e) => e.textContent).join(' ');
  await report('attach-upload', chip.classList.contains('is-ready'), chipText);
  if (!chip.classList.contains('is-ready')) return;

  const box = document.querySelector('#composer-input');
  const setValue = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value').set;
  setValue.call(box, 'What is in this picture?');
  box.dispatchEvent(new Event('input', { bubbles: true }));
  await new Promise((r) => setTimeout(r, 100));
  box.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', code: 'Enter', keyCode: 13, bubbles: true, cancelable: true }));
  const sent = await until(() => {
    const m = [...document.querySelectorAll('.msg-user')].pop();
    return m && m.querySelector('.attach-chip a.attach-link') ? m : null;
  });
  const link = sent.querySelector('.attach-chip a.attach-link');
  const thumb = await until(() => {
    const i = sent.querySelector('img.attach-thumb');
    return i && i.complete && i.naturalWidth > 0 ? i : null;
  }).catch(() => null);
  // textContent: WebKit's innerText is empty for content it has not laid
  // out yet (messages use content-visibility).
  const name = sent.querySelector('.attach-name')?.textContent ?? '';
  await report('attach-sent', name === 'selftest.png' && !!thumb,
    `chip ${name} thumb ${thumb ? thumb.naturalWidth + 'x' + thumb.naturalHeight : 'not shown'} at ${location.hash}`);

  const url = new URL(link.getAttribute('href'), location.href);
  const res = await fetch(url.pathname, { credentials: 'same-origin' });
  const type = res.headers.get('Content-Type') || '';
  const bytes = new Uint8Array(res.ok ? await res.arrayBuffer() : []);
  const png = bytes.length > 8 && bytes[0] === 137 && bytes[1] === 80 && bytes[2] === 78 && bytes[3] === 71;
  const bitmap = png ? await createImageBitmap(new Blob([bytes], { type })).catch(() => null) : null;
  await report('attach-get', res.ok && type === 'image/png' && !!bitmap,
    `${res.status} ${type} ${bitmap ? bitmap.width + 'x' + bitmap.height : 'not an image'} from ${url.pathname}`);
  await until(() => {
    const m = [...document.querySelectorAll('.msg-assistant')].pop();
    return m && !m.classList.contains('is-streaming');
  }).catch(() => {});
}

// exportStep exports the chat the desktop export test seeded (titled
// EXPORT_TITLE; no other test has one, so it is skipped there) from its
// header menu. First a plain download link to the export route, to show
// what WebKitGTK does with one (the test looks for a file), then the
// menu's Export as Markdown, whose save dialog the test answers with
// Return; the toast says the file was saved.
const EXPORT_TITLE = 'Exported by the self-test';
async function exportStep() {
  const chats = await call('Chats.List');
  const chat = chats.find((c) => c.title === EXPORT_TITLE);
  if (!chat) return;
  location.hash = `#/chat/${chat.id}`;
  await until(() => document.querySelector('.msg-assistant'));
  const a = document.createElement('a');
  a.href = `/api/chats/${chat.id}/export?format=json`;
  a.download = '';
  document.body.appendChild(a);
  a.click();
  a.remove();
  await report('export-link', true, location.href);
  const btn = await until(() => document.querySelector('.chat-header button[aria-label="Chat actions"]'));
  btn.click();
  const item = await until(() => [...document.querySelectorAll('[role="menuitem"]')].find((b) => b.textContent === 'Export as Markdown'));
  item.click();
  await report('export-asked', true, '');
  const saved = await until(() => [...document.querySelectorAll('.toast')].find((t) => t.textContent.includes('Saved ') || t.classList.contains('is-error')), 180000);
  await report('export-saved', !saved.classList.contains('is-error'), saved.textContent);
}

// documentStep saves a library document from its link in the knowledge
// base the desktop document test seeded (named DOCUMENT_BASE; skipped
// elsewhere): the link's click asks the app (Desktop.SaveDocument), whose
// save dialog the test answers with Return; the toast says the file was
// saved.
const DOCUMENT_BASE = 'Documents for the self-test';
async function documentStep() {
  const bases = await call('Library.Bases');
  const base = bases.find((b) => b.name === DOCUMENT_BASE);
  if (!base) return;
  location.hash = `#/library/knowledge/${base.id}`;
  const link = await until(() => document.querySelector('a.kb-doc-name'));
  link.click();
  await report('document-asked', true, link.textContent);
  const saved = await until(() => [...document.querySelectorAll('.toast')].find((t) => t.textContent.includes('Saved ') || t.classList.contains('is-error')), 180000);
  await report('document-saved', !saved.classList.contains('is-error'), saved.textContent);
}

// mirrorStep checks the composer's mirror in this engine (WebKitGTK in
// the desktop app, whose scrollbar-gutter support the Chromium test does
// not speak for): over a long message with @ tokens that makes the box
// scroll, the mirror's text area is as wide and as tall as the
// textarea's (so its lines wrap where the textarea's do) and scrolled as
// far. The box is emptied again for the steps after.
async function mirrorStep() {
  const models = await call('Models.Picker');
  if (!models.length) return;
  location.hash = '#/';
  const box = await until(() => location.hash === '#/' && !document.querySelector('.msg-user') && document.querySelector('#composer-input'));
  const setValue = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value').set;
  let text = '';
  for (let i = 0; i < 30; i++) text += `line ${i} has some words that wrap around @file${i}.go and a rather long tail of words past the edge @x${i}\n`;
  setValue.call(box, text);
  box.dispatchEvent(new Event('input', { bubbles: true }));
  const mirror = await until(() => {
    const m = document.querySelector('.composer__mirror');
    return m && m.querySelectorAll('.composer__token').length >= 60 ? m : null;
  }).catch(() => null);
  let detail = `no mirror with the tokens (${document.querySelectorAll('.composer__mirror .composer__token').length} marked, ${box.isConnected ? 'box on the page' : 'box gone'})`;
  let ok = false;
  if (mirror) {
    box.scrollTop = box.scrollHeight / 2;
    box.dispatchEvent(new Event('scroll'));
    await until(() => mirror.scrollTop === box.scrollTop, 5000).catch(() => {});
    ok = box.scrollHeight > box.clientHeight && box.clientWidth === mirror.clientWidth
      && box.scrollHeight === mirror.scrollHeight && box.scrollTop === mirror.scrollTop;
    detail = `width ${box.clientWidth}/${mirror.clientWidth} height ${box.scrollHeight}/${mirror.scrollHeight} `
      + `scrolled ${box.scrollTop}/${mirror.scrollTop} gutter ${CSS.supports('scrollbar-gutter', 'stable')}`;
  }
  await report('mirror', ok, detail);
  setValue.call(box, '');
  box.dispatchEvent(new Event('input', { bubbles: true }));
  await until(() => !document.querySelector('.composer__mirror .composer__token'), 5000).catch(() => {});
}

// stayStep tries to take the window somewhere else, as a stray drop or a
// link that slipped through would: the app's navigation guard must refuse,
// so the page (and this script) is still here to report it.
async function stayStep() {
  const before = location.href;
  location.assign('https://llembas.invalid/');
  await new Promise((r) => setTimeout(r, 500));
  await report('stay', location.href === before, location.href);
}

// dropWatch serves the desktop drop test, which drags files onto the window
// from outside with X's drag-and-drop protocol: it says where the composer
// is (CSS pixels from the top left of the page, and the pixel ratio), then
// reports each file that lands in the composer once its upload is done.
async function dropWatch() {
  const form = document.querySelector('form.composer');
  if (!form) return; // no model was set up, so the steps above stayed in Settings
  const r = form.getBoundingClientRect();
  await report('composer-at', true, [r.left, r.top, r.width, r.height].map(Math.round).join(' ') + ` ${window.devicePixelRatio}`);
  const b = document.querySelector('#composer-input').getBoundingClientRect();
  await report('box-at', true, [b.left, b.top, b.width, b.height].map(Math.round).join(' '));
  const seen = new Set();
  let typed = '';
  for (;;) {
    // A dropped file must never land in the box as its file:// URI.
    const box = document.querySelector('#composer-input');
    if (box && box.value !== typed) {
      typed = box.value;
      await report('box', typed === '', typed);
    }
    for (const chip of document.querySelectorAll('.composer .attach-chip.is-ready, .composer .attach-chip.is-error')) {
      const name = chip.querySelector('.attach-name')?.textContent ?? '';
      if (seen.has(name)) continue;
      seen.add(name);
      const detail = chip.querySelector('.attach-detail')?.textContent ?? '';
      await report('dropped', chip.classList.contains('is-ready'), `${name} ${detail}`.trim());
    }
    await new Promise((res) => setTimeout(res, 100));
  }
}

// terminalStep opens the terminal panel of an agent chat, when the test
// has made one (the desktop terminal test, with a real sshd), and follows
// the real desktop transport (Terminal.* calls, `terminal` events in
// base64). The test types with real keys (XTEST) once the page says the
// terminal has the focus (term-at); the page types one line itself, not
// ASCII (UTF-8 through base64 both ways), which the test's Return runs.
// The panel stays open at the end for the test's screenshot.
async function terminalStep() {
  const chats = await call('Chats.List');
  const chat = chats.find((c) => c.kind === 'agent');
  if (!chat) return;
  const refused = [];
  document.addEventListener('securitypolicyviolation', (e) => refused.push(`${e.violatedDirective} ${e.blockedURI || ''}`.trim()));
  location.hash = `#/chat/${chat.id}`;
  const toggle = await until(() => document.querySelector('.term-toggle'), 60000);
  toggle.click();
  const term = await import('../terminal/term.js');
  const host = () => document.querySelector('.term-panel .term-host');
  const text = () => (host() ? term.bufferText(host()) : '');
  const tail = () => text().replace(/\s+/g, ' ').slice(-200);
  const state = () => document.querySelector('.term-panel .term-state')?.textContent ?? '(no panel)';
  const opened = await until(() => document.querySelector('.term-state.is-open'), 60000).catch(() => null);
  await report('term-open', !!opened, opened ? 'open' : state());
  if (!opened) return;

  // xterm styled itself under the CSP (styles.js): its rows have their
  // height, from rules in an adopted sheet.
  const row = document.querySelector('.term-panel .xterm-rows > div');
  await report('term-styled', document.adoptedStyleSheets.length > 0 && row && row.getBoundingClientRect().height > 0,
    `${document.adoptedStyleSheets.length} adopted sheets, row ${row ? Math.round(row.getBoundingClientRect().height) : 'missing'}px`);

  // The keys go to xterm's own text box, as a click on the terminal does.
  document.querySelector('.term-panel .xterm-helper-textarea')?.focus();
  term.input(host(), 'echo p-\u00fcn\u00ef\u20ac');
  const b = host().getBoundingClientRect();
  await report('term-at', document.activeElement?.classList.contains('xterm-helper-textarea'),
    [b.left, b.top, b.width, b.height].map(Math.round).join(' '));

  // The test typed: echo p-ünï€ (Return), seq 41 43, and a printf of
  // "red" in a 24-bit colour followed by é€ from octal escapes.
  // (The echo's output line is matched by its end: the test types its
  // next line ahead while echo runs, and the tty echoes those keys before
  // echo's output, as in any terminal.)
  const echoed = () => text().split('\n').some((l) => !l.includes('echo') && l.endsWith('p-\u00fcn\u00ef\u20ac'));
  const out = await until(() => /\n42\s*\n43/.test(text()) && echoed() && /\nred \u00e9\u20ac\n/.test(text()), 60000).catch(() => false);
  await report('term-output', out, out ? tail() : JSON.stringify(text().trimEnd().slice(-300)));
  if (!out) return;
  const red = [...document.querySelectorAll('.term-panel .xterm-rows span')].find((e) => e.textContent === 'red');
  await report('term-colour', red && getComputedStyle(red).color === 'rgb(200, 30, 40)', red ? getComputedStyle(red).color : 'no span holds "red"');

  // Much output at once (the test types seq 150000): paced events, or a
  // viewer dropped as slow that comes back with the scrollback.
  const bulk = await until(() => /\n150000\n[^\n]*\$\s*$/.test(text()), 120000).catch(() => false);
  // What arrived is whole and in order: the numbers before 150000, as
  // far back as xterm keeps them, each one more than the one before.
  const lines = text().split('\n');
  let n = 0;
  for (let i = lines.lastIndexOf('150000'); i > 0 && /^\d+$/.test(lines[i - 1]) && Number(lines[i - 1]) === Number(lines[i]) - 1; i--) n++;
  await report('term-bulk', bulk && n >= 1000, `${n} lines in order before 150000: ${tail()}`);

  // The window fell behind on the terminal topic: the bus dropped its
  // backlog and sent a resync in its place. Output was lost, so the
  // terminal must attach again and show the scrollback.
  let left = false; // the panel went back to connecting
  const mo = new MutationObserver(() => {
    if (document.querySelector('.term-state.is-connecting')) left = true;
  });
  mo.observe(document.querySelector('.term-panel'), { subtree: true, childList: true, attributes: true, characterData: true });
  await call('Diag.Emit', 'resync', { reason: 'overflow', topic: 'terminal' });
  const back = await until(() => left && document.querySelector('.term-state.is-open') && /\n150000\n/.test(text()), 60000).catch(() => false);
  mo.disconnect();
  await report('term-resync', back, back ? 'attached again' : `${state()}: ${tail()}`);

  document.querySelector('.term-toggle').click();
  await until(() => !document.querySelector('.term-panel'));
  document.querySelector('.term-toggle').click();
  const again = await until(() => document.querySelector('.term-state.is-open') && /\n150000\n/.test(text()), 60000).catch(() => false);
  await report('term-reopen', again, again ? 'the same shell' : `${state()}: ${tail()}`);
  await report('term-csp', refused.length === 0, refused.length ? 'refused: ' + refused.join(', ') : 'nothing refused');
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

    // A native route (not a facade method) that panics: in the desktop app
    // Wails' asset server has no recover, so only ours keeps the app up.
    const crashed = await fetch('/api/selftest/panic');
    const crashBody = await crashed.json().catch(() => ({}));
    await report('route-panic', crashed.status === 500 && crashBody.error?.kind === 'internal', `${crashed.status} ${crashBody.error?.kind}`);
    const still = await fetch('/api/App.Info', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '[]' });
    await report('after-route-panic', still.ok, still.status);

    // Files go through the same http.Handler in both modes.
    const css = await fetch('css/tokens.css');
    await report('asset', css.ok, css.status);
    // Every stylesheet the page links (one per area, css/*.css) arrived.
    const links = [...document.querySelectorAll('link[rel=stylesheet]')];
    const loaded = (l) => { try { return l.sheet.cssRules.length > 0; } catch { return false; } }; // a failed load throws
    const unstyled = links.filter((l) => !loaded(l)).map((l) => l.getAttribute('href'));
    await report('styles', links.length > 0 && unstyled.length === 0, unstyled.length > 0 ? 'missing ' + unstyled.join(' ') : `${links.length} stylesheets`);
    const api = await fetch('/api/App.Info', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '[]' });
    const body = api.ok ? await api.json() : {};
    await report('handler-api', body.dataDir === info.dataDir, api.status);
    await chatStep();
    await attachStep();
    if (info.mode === 'desktop') await mirrorStep();
    if (info.mode === 'desktop') {
      try {
        await call('App.Notify', { title: 'Self-test', body: 'A reply finished.' });
        await report('notify', true, 'sent');
      } catch (e) {
        await report('notify', false, `${e.kind}: ${e.message}`);
      }
    }
    if (isDesktop()) await exportStep();
    if (isDesktop()) await documentStep();
    if (info.mode === 'desktop') await stayStep();
    if (isDesktop()) await terminalStep();
    await report('done', true, '');
    if (isDesktop()) await dropWatch();
  } catch (e) {
    await report('error', false, e && e.message).catch(() => {});
  }
}
