// web.js — Settings → Web (administrators): the search provider the
// web_search tool uses (DuckDuckGo, a SearXNG instance, or Firecrawl with
// its API key), how many results a search returns, the network ranges web
// requests may reach on this server's own network (every tool request goes
// through the server's SSRF guard, which refuses them otherwise), and a
// test search. The Firecrawl key is write-only: the server says only
// whether one is set. Results are untrusted: plain text, and links only
// for http and https.

import { html, useState, useEffect } from '../../vendor/htm-preact/standalone.module.js';
import { call } from '../core/transport.js';
import { toast } from '../core/ui.js';
import { Field, FormError, isWebAddress, useFormError } from '../core/fields.js';

const PROVIDERS = [
  { value: '', label: 'Off', help: 'Models are not offered web search.' },
  { value: 'duckduckgo', label: 'DuckDuckGo', help: 'No account needed. It may ask for a captcha when it sees many searches from one server; the test search below shows it.' },
  { value: 'searxng', label: 'SearXNG', help: 'Your own or a public instance, with the JSON format enabled in its settings.' },
  { value: 'firecrawl', label: 'Firecrawl', help: 'A paid search API; needs an API key.' },
];

/** draftOf is the editable form of the saved settings. */
function draftOf(s) {
  return {
    provider: s.provider || '', searxngUrl: s.searxngUrl || '', key: '', clearKey: false,
    allow: (s.allow || []).join('\n'), results: String(s.results || 5),
  };
}

/** patchOf is what changed between the saved settings and a draft, or {error}. */
function patchOf(d, saved) {
  const patch = {};
  if (d.provider !== (saved.provider || '')) patch.provider = d.provider;
  const url = d.searxngUrl.trim();
  if (url && !isWebAddress(url)) return { error: 'The SearXNG address must start with http:// or https://, like http://192.168.1.20:8888.' };
  if (url !== (saved.searxngUrl || '')) patch.searxngUrl = url;
  if (d.clearKey) patch.firecrawlKey = '';
  else if (d.key.trim()) patch.firecrawlKey = d.key.trim();
  const allow = d.allow.split(/[\s,]+/).map((s) => s.trim()).filter(Boolean);
  if (allow.join('\n') !== (saved.allow || []).join('\n')) patch.allow = allow;
  const n = Number(d.results);
  if (!Number.isInteger(n) || n < 1 || n > 20) return { error: 'The number of results is a whole number from 1 to 20.' };
  if (n !== saved.results) patch.results = n;
  return { patch };
}

/** safeLink is href when it is an http or https URL, else ''. */
function safeLink(href) {
  return isWebAddress(href) ? href : '';
}

function TestSearch({ provider }) {
  const [query, setQuery] = useState('');
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState(null);
  const { error, fail, clear } = useFormError();
  // Results of another provider would read as this one's.
  useEffect(() => {
    setResult(null);
    clear();
  }, [provider]);
  const run = async (e) => {
    e.preventDefault();
    if (!query.trim()) {
      fail('Enter something to search for.');
      return;
    }
    setBusy(true);
    clear();
    setResult(null);
    try {
      setResult(await call('Web.TestSearch', { query: query.trim() }));
    } catch (err) {
      fail(err.message);
    }
    setBusy(false);
  };
  const hits = (result && result.hits) || [];
  return html`
    <form class="card" id="web-test" aria-labelledby="web-test-title" onSubmit=${run} noValidate>
      <header class="card-header">
        <div>
          <h2 class="card-title" id="web-test-title">Test search</h2>
          <p class="card-subtitle">Runs one search with the saved settings, as a model's search would.</p>
        </div>
      </header>
      <div class="card-body form-grid">
        <${Field} id="web-test-query" label="Search for" value=${query} autocomplete="off" onValue=${setQuery}
          beside=${html`<button type="submit" class="btn" disabled=${busy || !provider}>${busy ? 'Searching…' : 'Test search'}</button>`}
          hint=${provider ? null : 'Choose a provider and save first.'} />
        <${FormError} error=${error} id="web-test-error" />
        <div aria-live="polite" id="web-test-result">
          ${result && result.error && html`<p class="error-note" role="alert" id="web-test-failed">${result.error}</p>`}
          ${result && !result.error && !hits.length && html`<p class="muted" id="web-test-none">No results.</p>`}
          ${hits.length > 0 && html`
            <ol class="web-hits" id="web-test-hits">
              ${hits.map((h, i) => html`
                <li class="web-hit" key=${i}>
                  ${safeLink(h.url)
                    ? html`<a class="web-hit-title" href=${safeLink(h.url)} target="_blank" rel="noopener noreferrer">${h.title || h.url}</a>`
                    : html`<span class="web-hit-title">${h.title}</span>`}
                  <span class="web-hit-url mono">${h.url}</span>
                  ${!!h.snippet && html`<span class="web-hit-snippet">${h.snippet}</span>`}
                </li>`)}
            </ol>`}
        </div>
      </div>
    </form>`;
}

export function WebSettings() {
  const [saved, setSaved] = useState(null);
  const [draft, setDraft] = useState(null);
  const [busy, setBusy] = useState(false);
  const { error, fail, clear } = useFormError();
  const apply = (s) => {
    setSaved(s);
    setDraft(draftOf(s));
  };
  useEffect(() => {
    call('Web.Settings').then(apply, (err) => fail(err.message));
  }, []);
  const set = (patch) => setDraft((d) => ({ ...d, ...patch }));
  const save = async (e) => {
    e.preventDefault();
    const b = patchOf(draft, saved);
    if (b.error) {
      fail(b.error);
      return;
    }
    setBusy(true);
    clear();
    try {
      apply(await call('Web.SetSettings', b.patch));
      toast('Web settings saved.');
    } catch (err) {
      fail(err.message);
    }
    setBusy(false);
  };

  if (!saved) {
    return error
      ? html`<p class="error-note" role="alert">${error.text}</p>`
      : html`<p class="loading-line" role="status">Loading the web settings…</p>`;
  }
  return html`
    <section class="settings-section" aria-labelledby="web-title">
      <div class="section-head">
        <div>
          <h2 id="web-title" class="section-title">Web</h2>
          <p class="muted">Web search and page reading for models flagged with tools.</p>
        </div>
      </div>
      <form class="card" id="web-settings" aria-labelledby="web-settings-title" onSubmit=${save} noValidate>
        <header class="card-header"><h3 class="card-title" id="web-settings-title">Search</h3></header>
        <div class="card-body form-grid">
          <fieldset class="fieldset">
            <legend class="field-label">Search provider</legend>
            <div class="radio-list">
              ${PROVIDERS.map((p) => html`
                <label class="radio-row" key=${p.value}>
                  <input type="radio" name="web-provider" value=${p.value} id=${'web-provider-' + (p.value || 'off')}
                    checked=${draft.provider === p.value} onChange=${() => set({ provider: p.value })} />
                  <span class="radio-text"><span class="radio-label">${p.label}</span><span class="field-help">${p.help}</span></span>
                </label>`)}
            </div>
          </fieldset>
          ${draft.provider === 'searxng' && html`
            <${Field} id="web-searxng-url" label="SearXNG address" inputClass="mono" type="url" value=${draft.searxngUrl} autocomplete="off"
              spellcheck="false" placeholder="https://searx.example.org" onValue=${(v) => set({ searxngUrl: v })}
              hint="The instance's base URL. An instance on this server's own network needs its address range under Allowed network ranges below, saved first or together." />`}
          ${draft.provider === 'firecrawl' && html`
            <${Field} id="web-firecrawl-key" label="Firecrawl API key" inputClass="mono field-narrow" type="password" value=${draft.key}
              autocomplete="new-password" spellcheck="false" placeholder=${saved.firecrawlKeySet ? 'Set' : 'None'} disabled=${draft.clearKey}
              onValue=${(v) => set({ key: v })}
              hint=${saved.firecrawlKeySet ? 'A key is set. Leave this blank to keep it.' : 'Stored encrypted; it is never shown again.'}
              after=${!!saved.firecrawlKeySet && html`
                <label class="check"><input type="checkbox" id="web-firecrawl-clear" checked=${draft.clearKey}
                  onChange=${(e) => set({ clearKey: e.currentTarget.checked, key: '' })} />
                  <span>Clear key</span></label>`} />`}
          <${Field} id="web-results" label="Results per search" inputClass="field-narrow" type="number" min="1" max="20" step="1"
            inputmode="numeric" value=${draft.results} onValue=${(v) => set({ results: v })}
            hint="At most this many results go to the model for each search (1 to 20)." />
          <${Field} id="web-allow" label="Allowed network ranges" as="textarea" inputClass="mono" rows="3" value=${draft.allow}
            spellcheck="false" placeholder="192.168.1.20/32" onValue=${(v) => set({ allow: v })}
            hint="No tool — web search, page reading, custom tools, MCP servers — reaches this server's own network (loopback, private and link-local addresses) unless the range is listed here, one per line, such as 192.168.1.0/24 or a single address. A SearXNG at home needs its range. Ranges wider than /8 and the cloud metadata address are refused." />
          <${FormError} error=${error} id="web-settings-error" />
        </div>
        <div class="card-actions">
          <span class="spacer"></span>
          <button type="button" class="btn" disabled=${busy} onClick=${() => { clear(); apply(saved); }}>Undo changes</button>
          <button type="submit" class="btn btn-primary" disabled=${busy}>${busy ? 'Saving…' : 'Save'}</button>
        </div>
      </form>
      <${TestSearch} provider=${saved.provider} />
    </section>`;
}
