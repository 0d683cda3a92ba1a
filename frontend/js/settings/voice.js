// settings-voice.js — Settings → Voice: the speech-to-text and
// text-to-speech servers (OpenAI-shaped /v1/audio/*). Administrators set the
// instance's, which may be on this network; everyone picks their voice,
// whether new replies are read aloud, and (in the browser) their own
// servers, which the server reaches only through its SSRF guard — an
// address on its own network is refused when saved, and the refusal is
// shown as the server words it. Keys are only ever shown masked; an empty
// key field keeps the stored key.
//
// Audio.SetMine and Audio.SetSettings replace a whole scope, so every save
// sends the scope's other saved values along (keys left out: kept).

import { html, useState, useEffect } from '../../vendor/htm-preact/standalone.module.js';
import { call, isDesktop } from '../core/transport.js';
import { useMe } from '../core/store.js';
import { toast } from '../core/ui.js';
import { Field, FormError, isWebAddress, useFormError } from '../core/fields.js';
import { audioStatus, readAloud, stopReading } from '../chat/voice.js';

/** draftOf is the editable form of a scope's settings. */
function draftOf(s) {
  const v = s || {};
  return {
    sttUrl: v.sttUrl || '', sttModel: v.sttModel || '', sttKey: '', sttClear: false,
    ttsUrl: v.ttsUrl || '', ttsModel: v.ttsModel || '', ttsKey: '', ttsClear: false,
  };
}

/**
 * inputOf turns a draft into an Audio settings input, with the saved
 * scope's other values; returns {error} when an address is malformed.
 */
function inputOf(d, saved) {
  for (const [url, what] of [[d.sttUrl, 'speech-to-text'], [d.ttsUrl, 'text-to-speech']]) {
    if (url.trim() && !isWebAddress(url.trim())) {
      return { error: `The ${what} address must start with http:// or https://, like http://192.168.1.20:8000/v1.` };
    }
  }
  const input = {
    sttUrl: d.sttUrl.trim(), sttModel: d.sttModel.trim(),
    ttsUrl: d.ttsUrl.trim(), ttsModel: d.ttsModel.trim(),
    ttsVoice: (saved && saved.ttsVoice) || '',
    voices: (saved && saved.voices) || [],
  };
  if (d.sttClear) input.sttKey = '';
  else if (d.sttKey) input.sttKey = d.sttKey;
  if (d.ttsClear) input.ttsKey = '';
  else if (d.ttsKey) input.ttsKey = d.ttsKey;
  return { input };
}

/** savedInput is a scope's saved values as an input that changes nothing (keys kept). */
function savedInput(s) {
  const v = s || {};
  return {
    sttUrl: v.sttUrl || '', sttModel: v.sttModel || '', ttsUrl: v.ttsUrl || '', ttsModel: v.ttsModel || '',
    ttsVoice: v.ttsVoice || '', voices: v.voices || [],
  };
}

/**
 * EndpointFields edits one direction (kind 'stt' or 'tts') of a draft:
 * base URL, model and API key (masked placeholder, "leave blank to keep",
 * clear).
 */
function EndpointFields({ idp, kind, legend, help, draft, saved, set, urlPlaceholder, modelPlaceholder, children }) {
  const f = (name) => kind + name; // sttUrl, ttsKey, …
  const stored = saved ? saved[f('Key')] : '';
  const id = (name) => `${idp}-${kind}-${name}`;
  return html`
    <fieldset class="fieldset" id=${`${idp}-${kind}`}>
      <legend class="field-label">${legend}</legend>
      ${help ? html`<p class="field-help">${help}</p>` : null}
      <${Field} id=${id('url')} label="Base URL" inputClass="mono" type="url" value=${draft[f('Url')]} autocomplete="off" spellcheck="false"
        placeholder=${urlPlaceholder} onValue=${(v) => set({ [f('Url')]: v })} />
      <${Field} id=${id('model')} label="Model" inputClass="mono field-narrow" value=${draft[f('Model')]} autocomplete="off" spellcheck="false"
        placeholder=${modelPlaceholder} onValue=${(v) => set({ [f('Model')]: v })} />
      <${Field} id=${id('key')} label="API key" inputClass="mono field-narrow" type="password" value=${draft[f('Key')]} autocomplete="new-password"
        spellcheck="false" placeholder=${stored || 'None'} disabled=${draft[f('Clear')]} onValue=${(v) => set({ [f('Key')]: v })}
        hint=${stored ? `A key is stored (${stored}). Leave this blank to keep it.` : 'Only if the server asks for one.'}
        after=${stored && html`
          <label class="check"><input type="checkbox" id=${id('clear')} checked=${draft[f('Clear')]}
            onChange=${(e) => set({ [f('Clear')]: e.currentTarget.checked, [f('Key')]: '' })} />
            <span>Clear key</span></label>`} />
      ${children}
    </fieldset>`;
}

/** voiceOptions are a voice select's options; '' is the default, labelled by defaultLabel. */
function voiceOptions(voices, value, defaultLabel) {
  const list = Array.isArray(voices) ? voices : [];
  return [
    { value: '', label: defaultLabel },
    ...(value && !list.includes(value) ? [{ value, label: value }] : []),
    ...list.map((v) => ({ value: v, label: v })),
  ];
}

function useVoices() {
  const [voices, setVoices] = useState(null);
  const load = () => call('Audio.Voices').then((v) => setVoices(Array.isArray(v) ? v : []), () => setVoices([]));
  return [voices, load];
}

// ---------- For everyone (administrators) ----------

function InstanceCard({ onSaved }) {
  const [saved, setSaved] = useState(null);
  const [draft, setDraft] = useState(draftOf(null));
  const [voice, setVoice] = useState('');
  const [names, setNames] = useState('');
  const [voices, loadVoices] = useVoices();
  const [busy, setBusy] = useState(false);
  const { error, fail, clear } = useFormError();

  const apply = (s) => {
    setSaved(s);
    setDraft(draftOf(s));
    setVoice(s.ttsVoice || '');
    setNames((s.voices || []).join(', '));
  };
  useEffect(() => {
    call('Audio.Settings').then(apply, (err) => fail(err.message));
    loadVoices();
  }, []);

  const set = (patch) => setDraft((d) => ({ ...d, ...patch }));
  const save = async (e) => {
    e.preventDefault();
    const b = inputOf(draft, saved);
    if (b.error) {
      fail(b.error);
      return;
    }
    b.input.ttsVoice = voice;
    b.input.voices = names.split(/[,\n]/).map((s) => s.trim()).filter(Boolean);
    setBusy(true);
    clear();
    try {
      apply(await call('Audio.SetSettings', b.input));
      toast('Voice servers saved.');
      loadVoices();
      onSaved();
    } catch (err) {
      fail(err.message);
    }
    setBusy(false);
  };

  if (!saved) {
    return error
      ? html`<p class="error-note" role="alert">${error.text}</p>`
      : html`<p class="loading-line" role="status">Listening for the voices of the Ainur…</p>`;
  }
  return html`
    <form class="card" id="voice-instance" aria-labelledby="voice-instance-title" onSubmit=${save} noValidate>
      <header class="card-header">
        <div>
          <h2 class="card-title" id="voice-instance-title">Voice servers for everyone</h2>
          <p class="card-subtitle">Any server with an OpenAI-shaped <span class="mono">/v1/audio</span> API. These may be on this network.</p>
        </div>
      </header>
      <div class="card-body form-grid">
        <${EndpointFields} idp="voice-instance" kind="stt" legend="Speech to text" draft=${draft} saved=${saved} set=${set}
          help="Dictation in the composer. Leave the address empty to turn it off."
          urlPlaceholder="http://192.168.1.20:8000/v1" modelPlaceholder="whisper-1" />
        <${EndpointFields} idp="voice-instance" kind="tts" legend="Text to speech" draft=${draft} saved=${saved} set=${set}
          help="Reading replies aloud. Leave the address empty to turn it off."
          urlPlaceholder="http://192.168.1.20:8880/v1" modelPlaceholder="tts-1">
          <${Field} id="voice-instance-voice" label="Default voice" as="select" inputClass="field-narrow" value=${voice}
            options=${voiceOptions(voices, voice, 'Not set (the server’s first voice)')} disabled=${voices === null} onValue=${setVoice}
            hint="Everyone gets this voice unless they choose another. The list comes from the server when it offers one; save a new address to see its voices." />
          <${Field} id="voice-instance-names" label="Voice names" inputClass="mono" value=${names} autocomplete="off" spellcheck="false"
            placeholder="af_bella, am_adam" onValue=${setNames}
            hint="Only needed when the server cannot list its voices; separate them with commas." />
        <//>
        <${FormError} error=${error} id="voice-instance-error" />
      </div>
      <div class="card-actions">
        <span class="spacer"></span>
        <button type="button" class="btn" disabled=${busy} onClick=${() => apply(saved)}>Undo changes</button>
        <button type="submit" class="btn btn-primary" disabled=${busy}>${busy ? 'Saving…' : 'Save'}</button>
      </div>
    </form>`;
}

// ---------- The caller's own ----------

function MyVoiceCard({ mine, status, voices, onSave }) {
  const [busy, setBusy] = useState('');
  const [error, setError] = useState('');
  const save = async (what, patch, done) => {
    setBusy(what);
    setError('');
    try {
      await onSave({ ...savedInput(mine), autoRead: !!mine.autoRead, ...patch });
      toast(done);
    } catch (err) {
      setError(err.message);
    }
    setBusy('');
  };
  const def = status && !mine.ttsVoice && status.voice ? `The default voice (${status.voice})` : 'The default voice';
  const tts = !!(status && status.tts);
  return html`
    <section class="card" id="voice-mine" aria-labelledby="voice-mine-title">
      <header class="card-header">
        <div>
          <h2 class="card-title" id="voice-mine-title">Your voice</h2>
          <p class="card-subtitle">How replies are read to you.</p>
        </div>
      </header>
      <div class="card-body form-grid">
        ${!tts && html`
          <div class="empty-state" id="voice-none">
            <p class="empty-state-title">The halls are silent.</p>
            <p>No text-to-speech server is set up, so replies cannot be read aloud yet.</p>
          </div>`}
        <${Field} id="voice-mine-voice" label="Voice" as="select" inputClass="field-narrow" value=${mine.ttsVoice || ''}
          options=${voiceOptions(voices, mine.ttsVoice || '', def)} disabled=${voices === null || !!busy}
          onValue=${(v) => save('voice', { ttsVoice: v }, v ? `Voice set to ${v}.` : 'Using the default voice.')}
          beside=${tts && html`
            <button type="button" class="btn" id="voice-sample" disabled=${!!busy}
              onClick=${() => { stopReading(); readAloud('Hello! This is how replies will sound.', 'voice-sample'); }}>Hear it</button>`}
          hint="Saved as soon as you choose." />
        <label class="switch-row">
          <span class="switch">
            <input type="checkbox" id="voice-auto-read" checked=${!!mine.autoRead} disabled=${!!busy}
              onChange=${(e) => { const on = e.currentTarget.checked; save('auto', { autoRead: on }, on ? 'New replies will be read aloud.' : 'New replies will not be read aloud.'); }} />
            <span class="visually-hidden">Read new replies aloud automatically</span>
            <span class="switch-track" aria-hidden="true"></span>
          </span>
          <span>Read new replies aloud automatically, when they finish in the open chat (never when you reopen a chat).</span>
        </label>
        <div aria-live="assertive">${error && html`<p class="error-note" role="alert" id="voice-mine-error">${error}</p>`}</div>
      </div>
    </section>`;
}

function MyServersCard({ mine, onSave }) {
  const [draft, setDraft] = useState(draftOf(mine));
  const [busy, setBusy] = useState(false);
  const { error, fail, clear } = useFormError();
  const set = (patch) => setDraft((d) => ({ ...d, ...patch }));
  const save = async (e) => {
    e.preventDefault();
    const b = inputOf(draft, mine);
    if (b.error) return fail(b.error);
    setBusy(true);
    clear();
    try {
      const m = await onSave({ ...b.input, autoRead: !!mine.autoRead });
      setDraft(draftOf(m));
      toast(b.input.sttUrl || b.input.ttsUrl ? 'Your voice servers are saved.' : 'Using the voice servers set for everyone.');
    } catch (err) {
      fail(err.message);
    }
    setBusy(false);
  };
  return html`
    <form class="card" id="voice-servers" aria-labelledby="voice-servers-title" onSubmit=${save} noValidate>
      <header class="card-header">
        <div>
          <h2 class="card-title" id="voice-servers-title">Your own voice servers</h2>
          <p class="card-subtitle">Optional. Leave an address empty to use the one set for everyone.</p>
        </div>
      </header>
      <div class="card-body form-grid">
        <p class="field-help" id="voice-servers-help">Only servers on the internet can be used here. An address on this server’s own network (this machine or the LAN) is refused: ask an administrator to set it up for everyone instead.</p>
        <${EndpointFields} idp="voice-servers" kind="stt" legend="Speech to text" draft=${draft} saved=${mine} set=${set}
          urlPlaceholder="https://api.openai.com/v1" modelPlaceholder="whisper-1" />
        <${EndpointFields} idp="voice-servers" kind="tts" legend="Text to speech" draft=${draft} saved=${mine} set=${set}
          urlPlaceholder="https://api.openai.com/v1" modelPlaceholder="tts-1" />
        <${FormError} error=${error} id="voice-servers-error" />
      </div>
      <div class="card-actions">
        <span class="spacer"></span>
        <button type="button" class="btn" disabled=${busy} onClick=${() => { setDraft(draftOf(mine)); clear(); }}>Undo changes</button>
        <button type="submit" class="btn btn-primary" disabled=${busy}>${busy ? 'Saving…' : 'Save'}</button>
      </div>
    </form>`;
}

export function VoiceSettings() {
  const { admin, ready } = useMe();
  const [mine, setMine] = useState(null);
  const [status, setStatus] = useState(null);
  const [voices, loadVoices] = useVoices();
  const [error, setError] = useState('');

  const refresh = () => {
    audioStatus(true).then(setStatus);
    loadVoices();
  };
  useEffect(() => {
    call('Audio.Mine').then(setMine, (err) => setError(err.message));
    refresh();
  }, []);

  const saveMine = async (input) => {
    const m = await call('Audio.SetMine', input);
    setMine(m);
    refresh();
    return m;
  };

  return html`
    <section class="settings-section" aria-labelledby="voice-title">
      <div class="section-head">
        <div>
          <h2 id="voice-title" class="section-title">Voice</h2>
          <p class="muted">Dictating into the composer and reading replies aloud.</p>
        </div>
      </div>
      <div class="settings-stack">
        ${ready && admin && html`<${InstanceCard} onSaved=${refresh} />`}
        ${error && html`<p class="error-note" role="alert">${error}</p>`}
        ${!mine && !error ? html`<p class="loading-line" role="status">Tuning the harps…</p>` : null}
        ${mine && html`<${MyVoiceCard} mine=${mine} status=${status} voices=${voices} onSave=${saveMine} />`}
        ${mine && !isDesktop() && html`<${MyServersCard} mine=${mine} onSave=${saveMine} />`}
      </div>
    </section>`;
}
