// sharing.js — Settings → Sharing in the desktop app: "Share on this
// network" serves this LLeMbas to the other devices at home (the household
// server, run by the app itself). The first time, the owner chooses the
// password they will sign in with from those devices. The tray's checkbox
// and this page follow the same `sharing` events.

import { html, useState, useEffect } from '../../vendor/htm-preact/standalone.module.js';
import { call, on } from '../core/transport.js';
import { loadMe } from '../core/store.js';
import { PasswordPair, pairProblem } from '../core/fields.js';

export function SharingSettings() {
  const [st, setSt] = useState(null);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const [pw, setPw] = useState('');
  const [pw2, setPw2] = useState('');
  useEffect(() => {
    call('Sharing.Status').then(setSt, setError);
    return on('sharing', (s) => s && typeof s === 'object' && setSt(s));
  }, []);

  const run = async (fn) => {
    setError(null);
    setBusy(true);
    try {
      await fn();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const start = (e) => {
    if (e) e.preventDefault();
    run(async () => {
      if (st && st.needsPassword) {
        const problem = pairProblem(pw, pw2, 'Choose a password first.');
        if (problem) throw new Error(problem);
        await call('Account.ChangePassword', '', pw);
        setPw('');
        setPw2('');
        loadMe();
      }
      setSt(await call('Sharing.Start'));
    });
  };
  const stop = () => run(async () => setSt(await call('Sharing.Stop')));

  if (!st) {
    return error ? html`<p class="error-note" role="alert">${error.message}</p>`
      : html`<p class="loading-line" role="status">Lighting the beacons…</p>`;
  }
  const addresses = Array.isArray(st.addresses) ? st.addresses : [];
  return html`
    <section class="card" aria-labelledby="sharing-title">
      <header class="card-header"><h2 id="sharing-title" class="card-title">Share on this network</h2></header>
      <div class="card-body settings-stack">
        <p class="field-help">Other devices at home (phones, laptops) can use this LLeMbas in a browser while the app
          runs. Everyone signs in; you sign in with your username and a password. Chats stay private to each account.</p>
        ${!st.available && html`<p id="sharing-unavailable">${st.reason || 'Sharing is not available here.'}</p>`}
        ${st.available && st.on && html`
          <p id="sharing-on" role="status">Shared. Open one of these addresses on another device:</p>
          <ul class="address-list" id="sharing-addresses">
            ${addresses.map((a) => html`<li key=${a}><code>${a}</code></li>`)}
          </ul>
          <p class="field-help">Over plain HTTP, passwords cross your network unencrypted. For more than a trusted home
            network, run the household server behind TLS instead (README: "Running it on a home server").</p>
          <div class="card-actions">
            <button type="button" class="btn" id="sharing-stop" onClick=${stop} disabled=${busy}>Stop sharing</button>
          </div>`}
        ${st.available && !st.on && st.needsPassword && html`
          <form id="sharing-password" class="settings-stack" onSubmit=${start} noValidate>
            <p>Choose the password you will sign in with from other devices.</p>
            <${PasswordPair} id="sharing-pw" confirmId="sharing-pw2" inputClass="field-narrow" value=${pw} confirm=${pw2}
              onValue=${setPw} onConfirm=${setPw2} />
            <div class="card-actions">
              <button type="submit" class="btn btn-primary" id="sharing-start" disabled=${busy}>Set password and share</button>
            </div>
          </form>`}
        ${st.available && !st.on && !st.needsPassword && html`
          <div class="card-actions">
            <button type="button" class="btn btn-primary" id="sharing-start" onClick=${() => start()} disabled=${busy}>Share on this network</button>
          </div>`}
        <div aria-live="assertive">${error && html`<p class="error-note" role="alert" id="sharing-error">${error.message}</p>`}</div>
      </div>
    </section>`;
}
