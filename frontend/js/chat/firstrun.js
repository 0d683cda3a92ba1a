// firstrun.js — the guided card shown while no connection exists: local
// servers found by Connections.Discover are offered as one click each.

import { html, useState, useEffect } from '../../vendor/htm-preact/standalone.module.js';
import { call } from '../core/transport.js';
import { refreshConnections, refreshModels } from '../core/store.js';
import { hrefs } from '../core/router.js';
import { toast } from '../core/ui.js';

function serverName(s) {
  const n = String(s.server || '').trim();
  if (!n) return 'a local server';
  return n;
}

function offerLabel(s) {
  const count = typeof s.modelCount === 'number'
    ? ` (${s.modelCount} ${s.modelCount === 1 ? 'model' : 'models'})` : '';
  return `Use ${serverName(s)} at ${s.baseUrl}${count}`;
}

export function FirstRun() {
  const [found, setFound] = useState(null); // null while looking
  const [error, setError] = useState('');
  const [busy, setBusy] = useState('');

  useEffect(() => {
    let live = true;
    call('Connections.Discover').then(
      (list) => { if (live) setFound(Array.isArray(list) ? list : []); },
      (err) => { if (live) { setFound([]); setError(err.message); } },
    );
    return () => { live = false; };
  }, []);

  const use = async (s) => {
    setBusy(s.baseUrl);
    setError('');
    try {
      const c = await call('Connections.Create', { name: serverName(s), baseUrl: s.baseUrl, enabled: true });
      if (c && c.lastError) toast(`Connected, but listing its models failed: ${c.lastError}`, { error: true, timeout: 9000 });
      else toast(`Added ${c && c.name ? c.name : 'the connection'}.`);
      await Promise.all([refreshConnections(), refreshModels()]);
    } catch (err) {
      setError(err.message);
    }
    setBusy('');
  };

  return html`
    <section class="card firstrun" aria-labelledby="firstrun-title">
      <header class="card-header">
        <div>
          <h2 id="firstrun-title" class="card-title">Connect a model server</h2>
          <p class="card-subtitle">LLeMbas talks to any server with an OpenAI-compatible API: Ollama, llama.cpp, vLLM, LM Studio, or a hosted one.</p>
        </div>
      </header>
      <div class="card-body firstrun-body">
        ${found === null ? html`<p class="loading-line" role="status">Looking for lights in the windows nearby…</p>` : null}
        ${found && found.length > 0 && html`
          <p class="muted">Found on this machine:</p>
          <ul class="firstrun-list">
            ${found.map((s) => html`
              <li key=${s.baseUrl}>
                <button type="button" class="btn btn-primary firstrun-use" disabled=${!!busy} onClick=${() => use(s)}>
                  ${busy === s.baseUrl ? 'Adding…' : offerLabel(s)}
                </button>
              </li>`)}
          </ul>`}
        ${found && found.length === 0 && !error && html`
          <p class="muted">No local server answered on the usual ports. Start one, or add a connection by hand.</p>`}
        ${error && html`<p class="error-note" role="alert">${error}</p>`}
      </div>
      <div class="card-actions">
        <a class="btn" href=${hrefs.settings('connections', 'new')}>Add a connection manually</a>
      </div>
    </section>`;
}
