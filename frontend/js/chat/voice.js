// voice.js — dictation into the composer and reading replies aloud, against
// the server's /api/audio/* routes (which talk to the configured
// OpenAI-shaped /v1/audio/* endpoints). Recorded audio is posted as it is
// and never stored. Where the window has no microphone (the Linux desktop
// app: WebKitGTK in Wails v2 grants none, so navigator.mediaDevices is
// missing or getUserMedia is refused), the dictate button says so.

import { html, useState, useEffect, useRef } from '../../vendor/htm-preact/standalone.module.js';
import { call, ApiError } from '../core/transport.js';
import { toast } from '../core/ui.js';

let statusPromise = null;

/** audioStatus resolves to {stt, tts, voice, autoRead, maxAudioBytes, maxChars}. */
export function audioStatus(fresh) {
  if (!statusPromise || fresh) {
    statusPromise = call('Audio.Status').catch(() => {
      statusPromise = null;
      return { stt: false, tts: false, autoRead: false, maxAudioBytes: 25 << 20, maxChars: 4096 };
    });
  }
  return statusPromise;
}

function useStatus() {
  const [st, setSt] = useState(null);
  useEffect(() => {
    let live = true;
    audioStatus().then((s) => { if (live) setSt(s); });
    return () => { live = false; };
  }, []);
  return st;
}

async function apiError(res) {
  let body = null;
  try {
    body = await res.json();
  } catch {
    // not JSON
  }
  const e = body && body.error;
  return new ApiError((e && e.kind) || 'unavailable', (e && e.message) || `The server answered ${res.status}.`);
}

/** microphoneProblem says why this window cannot record, or ''. */
export function microphoneProblem() {
  if (!window.isSecureContext && location.protocol === 'http:' && !/^(localhost|127\.|\[::1\])/.test(location.host)) {
    return 'Dictation needs a secure (HTTPS) connection to reach the microphone.';
  }
  if (!navigator.mediaDevices || typeof navigator.mediaDevices.getUserMedia !== 'function' || typeof window.MediaRecorder !== 'function') {
    return 'This window has no microphone access (the Linux desktop app cannot record); dictate in a browser instead.';
  }
  return '';
}

const MIC = 'M12 3a3 3 0 0 1 3 3v6a3 3 0 0 1-6 0V6a3 3 0 0 1 3-3zM5 11a7 7 0 0 0 14 0M12 18v3';
const SPEAKER = 'M4 9h4l5-4v14l-5-4H4zM16 9a4 4 0 0 1 0 6M18.5 6.5a8 8 0 0 1 0 11';
const STOP = 'M7 7h10v10H7z';

function Glyph({ d }) {
  return html`<svg class="icon" viewBox="0 0 24 24" aria-hidden="true" focusable="false"><path d=${d} /></svg>`;
}

/**
 * DictateButton records until clicked again, then puts the transcription
 * into the composer through onText. Hidden when dictation is not set up.
 */
export function DictateButton({ onText }) {
  const st = useStatus();
  const [state, setState] = useState('idle'); // idle | recording | working
  const rec = useRef(null);
  const problem = st && st.stt ? microphoneProblem() : '';

  useEffect(() => () => {
    if (rec.current) {
      rec.current.onstop = null;
      try { rec.current.stop(); } catch { /* already stopped */ }
      rec.current.stream.getTracks().forEach((t) => t.stop());
    }
  }, []);

  if (!st || !st.stt) return null;

  const send = async (blob) => {
    setState('working');
    try {
      if (blob.size > st.maxAudioBytes) throw new ApiError('invalid', 'The recording is too long; dictate in shorter pieces.');
      const form = new FormData();
      form.append('language', (navigator.language || '').split('-')[0]);
      form.append('file', blob, 'dictation.' + ((blob.type.split('/')[1] || 'webm').split(';')[0]));
      let res;
      try {
        res = await fetch('/api/audio/transcribe', { method: 'POST', body: form, credentials: 'same-origin' });
      } catch {
        throw new ApiError('unavailable', 'Could not reach the server.');
      }
      if (!res.ok) throw await apiError(res);
      const { text } = await res.json();
      if (text) onText(text);
      else toast('Nothing was heard in the recording.');
    } catch (err) {
      toast('Dictation failed: ' + (err.message || err), { error: true });
    } finally {
      setState('idle');
    }
  };

  const start = async () => {
    if (problem) {
      toast(problem, { error: true });
      return;
    }
    let stream;
    try {
      stream = await navigator.mediaDevices.getUserMedia({ audio: true });
    } catch (err) {
      const why = err && err.name === 'NotAllowedError'
        ? 'Microphone access was refused. Allow it for this site to dictate.'
        : err && err.name === 'NotFoundError' ? 'No microphone was found.' : 'The microphone cannot be used here.';
      toast(why, { error: true });
      return;
    }
    const chunks = [];
    const r = new MediaRecorder(stream);
    r.ondataavailable = (e) => { if (e.data && e.data.size) chunks.push(e.data); };
    r.onstop = () => {
      stream.getTracks().forEach((t) => t.stop());
      rec.current = null;
      send(new Blob(chunks, { type: r.mimeType || 'audio/webm' }));
    };
    r.stream = stream;
    rec.current = r;
    r.start();
    setState('recording');
  };

  const click = () => {
    if (state === 'recording' && rec.current) rec.current.stop();
    else if (state === 'idle') start();
  };
  const label = problem ? 'Dictation unavailable: ' + problem
    : state === 'recording' ? 'Stop dictating' : state === 'working' ? 'Transcribing…' : 'Dictate';
  return html`
    <button type="button" id="composer-dictate"
      class=${'btn btn-ghost composer-dictate' + (state === 'recording' ? ' is-recording' : '') + (problem ? ' is-unavailable' : '')}
      aria-label=${label} title=${label} aria-pressed=${state === 'recording' ? 'true' : 'false'}
      disabled=${state === 'working'} onClick=${click}>
      <${Glyph} d=${state === 'recording' ? STOP : MIC} />
      ${problem ? html`<span class="visually-hidden">${problem}</span>` : null}
    </button>`;
}

// ---------- Reading aloud ----------

/** speakable turns a reply's Markdown into plain sentences to read. */
export function speakable(md) {
  return String(md || '')
    .replace(/```[\s\S]*?(```|$)/g, ' (code) ')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/!\[[^\]]*\]\([^)]*\)/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\$\$[\s\S]*?\$\$/g, ' (formula) ')
    .replace(/^\s{0,3}(#{1,6}|>|[-*+]|\d+[.)])\s+/gm, '')
    .replace(/[*_~]{1,3}([^*_~]+)[*_~]{1,3}/g, '$1')
    .replace(/\|/g, ' ')
    .replace(/[ \t]+/g, ' ')
    .trim();
}

/** chunks splits text into pieces of at most max characters, at paragraph or sentence ends. */
export function chunks(text, max) {
  const out = [];
  let rest = text;
  while (rest.length > max) {
    let cut = rest.lastIndexOf('\n\n', max);
    if (cut < max / 2) cut = rest.lastIndexOf('. ', max) + 1;
    if (cut < max / 2) cut = rest.lastIndexOf(' ', max);
    if (cut <= 0) cut = max;
    out.push(rest.slice(0, cut).trim());
    rest = rest.slice(cut).trim();
  }
  if (rest) out.push(rest);
  return out.filter(Boolean);
}

// One player for the whole app: starting to read one reply stops another.
const player = { audio: null, url: '', token: 0, owner: null, listeners: new Set() };

function notify() {
  player.listeners.forEach((fn) => fn());
}

export function stopReading() {
  player.token++;
  if (player.audio) {
    player.audio.pause();
    player.audio = null;
  }
  if (player.url) URL.revokeObjectURL(player.url);
  player.url = '';
  player.owner = null;
  notify();
}

async function fetchSpeech(text) {
  let res;
  try {
    res = await fetch('/api/audio/speech', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ text }),
      credentials: 'same-origin',
    });
  } catch {
    throw new ApiError('unavailable', 'Could not reach the server.');
  }
  if (!res.ok) throw await apiError(res);
  return res.blob();
}

/** readAloud reads text aloud, piece by piece; owner marks which button plays. */
export async function readAloud(text, owner) {
  stopReading();
  const st = await audioStatus();
  const pieces = chunks(speakable(text), Math.max(200, (st.maxChars || 4096) - 96));
  if (!pieces.length) return;
  const token = ++player.token;
  player.owner = owner;
  notify();
  try {
    let next = fetchSpeech(pieces[0]);
    for (let i = 0; i < pieces.length; i++) {
      const blob = await next;
      if (token !== player.token) return;
      next = i + 1 < pieces.length ? fetchSpeech(pieces[i + 1]) : null;
      if (next) next.catch(() => {}); // reported when awaited
      player.url = URL.createObjectURL(blob);
      player.audio = new Audio(player.url);
      await new Promise((resolve, reject) => {
        player.audio.onended = resolve;
        player.audio.onerror = () => reject(new ApiError('unavailable', 'The audio could not be played.'));
        player.audio.play().catch(reject);
      });
      URL.revokeObjectURL(player.url);
      player.url = '';
      if (token !== player.token) return;
    }
  } catch (err) {
    if (token === player.token) toast('Reading aloud failed: ' + (err.message || err), { error: true });
  } finally {
    if (token === player.token) {
      player.audio = null;
      player.owner = null;
      notify();
    }
  }
}

/** ReadAloudButton reads one reply (text: a string, or a function returning it); a second click stops it. */
export function ReadAloudButton({ text, id }) {
  const st = useStatus();
  const [, bump] = useState(0);
  useEffect(() => {
    const fn = () => bump((n) => n + 1);
    player.listeners.add(fn);
    return () => player.listeners.delete(fn);
  }, []);
  if (!st || !st.tts || !text) return null;
  const playing = player.owner === id;
  const read = () => readAloud(typeof text === 'function' ? text() : text, id);
  return html`
    <button type="button" class=${'btn btn-ghost btn-sm msg-read' + (playing ? ' is-playing' : '')}
      aria-pressed=${playing ? 'true' : 'false'} onClick=${() => (playing ? stopReading() : read())}>
      <${Glyph} d=${playing ? STOP : SPEAKER} /><span>${playing ? 'Stop reading' : 'Read aloud'}</span>
    </button>`;
}
