// connections.js — Settings → SSH connections (agent.use): the hosts an
// agent chat works on, each the reader's own. A list beside one
// connection's form: name, host, port, user and how LLeMbas signs in (a
// key it makes, whose public half is shown to copy into authorized_keys;
// a private key pasted once; or a password). Secrets are write-only: the
// server says only whether one is set (hasSecret), and nothing typed is
// ever shown back. Below the form: the host key (checked before any
// credential is offered; a new key is accepted by a button, a changed one
// is a warning with no accept button) and a test connection.
//
// Names, hosts and the server's messages are untrusted text: drawn as
// text, never as HTML.

import { html, useState, useEffect, useRef } from '../../vendor/htm-preact/standalone.module.js';
import { call } from '../core/transport.js';
import { hrefs, navigate } from '../core/router.js';
import { CloseButton, Icon, confirmAction, toast } from '../core/ui.js';
import { Field, FormError, PasswordField, useFormError } from '../core/fields.js';
import { copyText } from '../core/clipboard.js';

// SIGN_IN are the ways a connection signs in, as the form offers them.
const SIGN_IN = [
  { value: 'generated', label: 'A key LLeMbas makes' },
  { value: 'pasted', label: 'A private key I paste' },
  { value: 'password', label: 'A password' },
];

/**
 * hostKeyFile is where a host keeps the public half of a host key of the
 * scanned key's type (its authorized_keys line), for comparing there.
 */
export function hostKeyFile(key) {
  const type = String(key || '').split(' ')[0];
  const name = type === 'ssh-ed25519' ? 'ed25519' : type.startsWith('ecdsa-') ? 'ecdsa' : type === 'ssh-rsa' ? 'rsa' : '*';
  return `/etc/ssh/ssh_host_${name}_key.pub`;
}

/** hostLine is "user@host:port" for the list. */
export function hostLine(p) {
  return `${p.username}@${p.host}${p.port && p.port !== 22 ? ':' + p.port : ''}`;
}

function PublicKey({ profile }) {
  const copy = async () => {
    const ok = await copyText(profile.publicKey);
    toast(ok ? 'Public key copied.' : 'Could not copy: the clipboard is not available here.', { error: !ok, timeout: ok ? 2500 : 6000 });
  };
  return html`
    <div class="field agent-pubkey">
      <span class="field-label" id="ssh-pubkey-label">Public key</span>
      <pre class="agent-pubkey-text mono" id="ssh-pubkey" aria-labelledby="ssh-pubkey-label">${profile.publicKey}</pre>
      <div class="inline-row">
        <button type="button" class="btn btn-sm" id="ssh-pubkey-copy" onClick=${copy}><${Icon} name="copy" /><span>Copy</span></button>
        <p class="field-help">Add this line to ~/.ssh/authorized_keys on the host.</p>
      </div>
    </div>`;
}

function ProfileForm({ profile, onSaved, onDeleted, onClose }) {
  const creating = !profile;
  const [name, setName] = useState(profile ? profile.name : '');
  const [host, setHost] = useState(profile ? profile.host : '');
  const [port, setPort] = useState(String(profile ? profile.port || 22 : 22));
  const [username, setUsername] = useState(profile ? profile.username : '');
  // A key connection's key was made here (generated) or pasted: reopened,
  // it shows the way it was made.
  const pastedKey = !!profile && profile.auth === 'key' && profile.generated === false;
  const [signIn, setSignIn] = useState(profile && profile.auth === 'password' ? 'password' : pastedKey ? 'pasted' : 'generated');
  const [privateKey, setPrivateKey] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState('');
  const { error, fail, clear } = useFormError();
  const first = useRef(null);
  const heading = useRef(null);
  useEffect(() => {
    const el = creating ? first.current : heading.current;
    if (el) el.focus({ preventScroll: true });
  }, [profile && profile.id]);

  const save = async (e) => {
    e.preventDefault();
    clear();
    if (!name.trim()) return fail('Give the connection a name.');
    if (!host.trim()) return fail('Enter the host: a name or an address.');
    const n = Number(port);
    if (!Number.isInteger(n) || n < 1 || n > 65535) return fail('The port is a whole number from 1 to 65535.');
    if (!username.trim()) return fail('Enter the user to sign in as.');
    const input = { name: name.trim(), host: host.trim(), port: n, username: username.trim() };
    const wasPassword = profile && profile.auth === 'password';
    if (signIn === 'password') {
      input.auth = 'password';
      if (password) input.password = password;
      else if (creating || !wasPassword) return fail('Enter the password.');
    } else {
      input.auth = 'key';
      if (signIn === 'pasted') {
        if (privateKey.trim()) input.privateKey = privateKey.trim() + '\n';
        else if (creating || wasPassword) return fail('Paste the private key (the whole file, BEGIN to END).');
      } else if (wasPassword || pastedKey) {
        input.newKey = true;
      }
    }
    setBusy('save');
    try {
      const saved = creating ? await call('Agent.CreateProfile', input) : await call('Agent.UpdateProfile', profile.id, input);
      setPrivateKey('');
      setPassword('');
      toast(creating ? `Added “${saved.name}”.` : 'Connection saved.');
      onSaved(saved);
    } catch (err) {
      fail(err.message);
    }
    setBusy('');
  };

  const newKey = async () => {
    const ok = await confirmAction({
      title: 'Make a new key?',
      body: 'The current key stops working here at once; add the new public key to the host before the next agent chat.',
      confirmLabel: 'Make a new key',
    });
    if (!ok) return;
    setBusy('key');
    try {
      onSaved(await call('Agent.UpdateProfile', profile.id, { newKey: true }));
      toast('A new key was made. Copy its public key to the host.');
    } catch (err) {
      fail(err.message);
    }
    setBusy('');
  };

  const remove = async () => {
    const ok = await confirmAction({
      title: `Delete the connection “${profile.name}”?`,
      body: 'Agent chats that use it can no longer run anything, and its terminal sessions end. Their transcripts stay.',
      confirmLabel: 'Delete connection',
      danger: true,
    });
    if (!ok) return;
    setBusy('delete');
    try {
      await call('Agent.DeleteProfile', profile.id);
      toast(`Deleted “${profile.name}”.`);
      onDeleted();
    } catch (err) {
      fail(err.message);
      setBusy('');
    }
  };

  const idp = profile ? `ssh-${profile.id}` : 'ssh-new';
  const secretSet = profile && profile.hasSecret;
  return html`
    <form class="card model-detail" id="ssh-form" aria-labelledby=${idp + '-title'} onSubmit=${save} noValidate>
      <header class="card-header">
        <h2 class="card-title" id=${idp + '-title'} tabindex="-1" ref=${heading}>${creating ? 'New SSH connection' : profile.name}</h2>
        <${CloseButton} label="Close the connection" onClose=${onClose} />
      </header>
      <div class="card-body form-grid">
        <${Field} id="ssh-name" inputRef=${first} label="Name" value=${name} autocomplete="off" placeholder="Build box" onValue=${setName} />
        <div class="agent-host-row">
          <${Field} id="ssh-host" label="Host" value=${host} autocomplete="off" placeholder="build.lan or 192.168.1.20" className="grow"
            spellcheck="false" autocapitalize="off" onValue=${setHost} />
          <${Field} id="ssh-port" label="Port" value=${port} type="number" min="1" max="65535" inputClass="field-narrow" onValue=${setPort} />
        </div>
        <${Field} id="ssh-user" label="User" value=${username} autocomplete="off" spellcheck="false" autocapitalize="off" onValue=${setUsername}
          hint="Replies run commands as this user: give it no more rights than you would give the model." />
        <fieldset class="fieldset">
          <legend class="field-label">Sign in with</legend>
          <div class="radio-list">
            ${SIGN_IN.map((o) => html`
              <label class="check" key=${o.value}><input type="radio" name="ssh-signin" id=${'ssh-signin-' + o.value} value=${o.value}
                checked=${signIn === o.value} onChange=${() => setSignIn(o.value)} /><span>${o.label}</span></label>`)}
          </div>
        </fieldset>
        ${signIn === 'generated' && creating && html`<p class="field-help">An ed25519 key is made when you add the connection; its public key is shown here to copy.</p>`}
        ${signIn === 'generated' && !creating && profile.auth === 'key' && !pastedKey && !!profile.publicKey && html`<${PublicKey} profile=${profile} />`}
        ${signIn === 'generated' && !creating && (profile.auth === 'password' || pastedKey) && html`<p class="field-help">A new key is made when you save; its public key is shown here to copy.</p>`}
        ${signIn === 'pasted' && !!pastedKey && !!profile.publicKey && html`<${PublicKey} profile=${profile} />`}
        ${signIn === 'pasted' && html`
          <${Field} id="ssh-private-key" as="textarea" rows="5" label="Private key" value=${privateKey} onValue=${setPrivateKey}
            inputClass="mono" spellcheck="false" autocapitalize="off" autocomplete="off"
            placeholder=${secretSet && profile.auth === 'key' ? 'A key is set; paste one to replace it' : '-----BEGIN OPENSSH PRIVATE KEY-----'}
            hint="Stored encrypted; never shown again. A key with a passphrase cannot be used." />`}
        ${signIn === 'password' && html`
          <${PasswordField} id="ssh-password" label="Password" value=${password} onValue=${setPassword} autocomplete="new-password"
            placeholder=${secretSet && profile.auth === 'password' ? 'A password is set; type to replace it' : ''}
            hint="Stored encrypted; never shown again." />`}
        <${FormError} error=${error} id="ssh-error" />
      </div>
      <div class="card-actions wrap">
        ${!creating && html`<button type="button" class="btn btn-danger-ghost" id="ssh-delete" disabled=${!!busy} onClick=${remove}>Delete</button>`}
        ${!creating && profile.auth === 'key' && !pastedKey && signIn === 'generated' && html`
          <button type="button" class="btn" id="ssh-new-key" disabled=${!!busy} onClick=${newKey}>Make a new key</button>`}
        <span class="spacer"></span>
        <button type="button" class="btn" onClick=${onClose}>Cancel</button>
        <button type="submit" class="btn btn-primary" id="ssh-save" disabled=${!!busy}>${busy === 'save' ? 'Saving…' : creating ? 'Add connection' : 'Save'}</button>
      </div>
    </form>`;
}

// HostKey: the pinned key, "Check host key" and what it found. A changed
// key is a warning with Forget only: accepting it must be a decision made
// after forgetting the old one, never the button under the cursor.
function HostKey({ profile, onChanged }) {
  const [scan, setScan] = useState(null);
  const [busy, setBusy] = useState('');
  const { error, fail, clear } = useFormError();
  useEffect(() => { setScan(null); clear(); }, [profile.id, profile.host, profile.port]);

  const check = async () => {
    clear();
    setScan(null);
    setBusy('scan');
    try {
      setScan(await call('Agent.ScanHostKey', profile.id));
    } catch (err) {
      fail(err.message);
    }
    setBusy('');
  };
  const accept = async () => {
    clear();
    setBusy('accept');
    try {
      onChanged(await call('Agent.AcceptHostKey', profile.id, scan.fingerprint));
      setScan({ ...scan, status: 'same', pinned: scan.fingerprint });
      toast('Host key accepted.');
    } catch (err) {
      fail(err.message);
    }
    setBusy('');
  };
  const forget = async () => {
    const ok = await confirmAction({
      title: 'Forget the accepted host key?',
      body: 'LLeMbas connects to this host again only after you check its key and accept it. Its terminal sessions end.',
      confirmLabel: 'Forget key',
    });
    if (!ok) return;
    clear();
    setBusy('forget');
    try {
      onChanged(await call('Agent.ForgetHostKey', profile.id));
      setScan(null);
      toast('Host key forgotten.');
    } catch (err) {
      fail(err.message);
    }
    setBusy('');
  };

  const pinned = profile.hostKey;
  return html`
    <section class="card" id="ssh-hostkey" aria-labelledby="ssh-hostkey-title">
      <header class="card-header">
        <h3 class="card-title" id="ssh-hostkey-title">Host key</h3>
      </header>
      <div class="card-body">
        <p class="field-help">The key proves the host is the one you mean. LLeMbas never signs in to a host whose key you have not accepted.</p>
        ${pinned
          ? html`<p>Accepted: <code class="agent-fingerprint" id="ssh-pinned">${pinned.fingerprint}</code></p>`
          : html`<p class="muted" id="ssh-pinned-none">No key accepted yet.</p>`}
        ${!!scan && scan.status === 'new' && html`
          <div class="agent-scan" id="ssh-scan" data-status="new">
            <p>The host offers <code class="agent-fingerprint">${scan.fingerprint}</code></p>
            <p class="field-help">Compare it with the host's own: <code>ssh-keygen -lf ${hostKeyFile(scan.key)}</code> run there.</p>
            <button type="button" class="btn btn-primary btn-sm" id="ssh-accept" disabled=${!!busy} onClick=${accept}>Accept this key</button>
          </div>`}
        ${!!scan && scan.status === 'same' && html`
          <p class="success-note" id="ssh-scan" data-status="same" role="status">Matches the accepted key: <code class="agent-fingerprint">${scan.fingerprint}</code></p>`}
        ${!!scan && scan.status === 'changed' && html`
          <div class="warning-note agent-scan-changed" id="ssh-scan" data-status="changed" role="alert">
            <p><strong>The host's key has changed.</strong> It now offers <code class="agent-fingerprint">${scan.fingerprint}</code>, not the accepted <code class="agent-fingerprint">${scan.pinned}</code>.</p>
            <p>Someone may be between you and the host. If you know it was reinstalled or its keys replaced, forget the old key and check again.</p>
          </div>`}
        <${FormError} error=${error} id="ssh-hostkey-error" />
      </div>
      <div class="card-actions wrap">
        ${!!pinned && html`<button type="button" class="btn" id="ssh-forget" disabled=${!!busy} onClick=${forget}>Forget</button>`}
        <span class="spacer"></span>
        <button type="button" class="btn" id="ssh-check" disabled=${!!busy} onClick=${check}>${busy === 'scan' ? 'Checking…' : 'Check host key'}</button>
      </div>
    </section>`;
}

function TestConnection({ profile }) {
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState(null);
  useEffect(() => setResult(null), [profile.id]);
  const run = async () => {
    setBusy(true);
    setResult(null);
    try {
      setResult(await call('Agent.Test', profile.id));
    } catch (err) {
      setResult({ ok: false, message: err.message });
    }
    setBusy(false);
  };
  return html`
    <section class="card" id="ssh-test" aria-labelledby="ssh-test-title">
      <header class="card-header">
        <h3 class="card-title" id="ssh-test-title">Test connection</h3>
        <button type="button" class="btn btn-sm" id="ssh-test-run" disabled=${busy} onClick=${run}>${busy ? 'Connecting…' : 'Test connection'}</button>
      </header>
      <div class="card-body" aria-live="polite">
        ${!result && html`<p class="field-help">Signs in and runs <code>uname -srm</code>.</p>`}
        ${result && html`<p class=${result.ok ? 'success-note' : 'error-note'} id="ssh-test-result" data-ok=${result.ok ? 'true' : 'false'}>${result.message}</p>`}
      </div>
    </section>`;
}

export function SSHSettings({ sub }) {
  const [profiles, setProfiles] = useState(null);
  const [error, setError] = useState(null);
  const [formKey, setFormKey] = useState(0);
  const selectedId = /^\d+$/.test(sub || '') ? Number(sub) : 0;
  const creating = sub === 'new';

  const load = async () => {
    try {
      const list = await call('Agent.Profiles');
      setProfiles(Array.isArray(list) ? list : []);
      setError(null);
    } catch (err) {
      setError(err);
    }
  };
  useEffect(() => { load(); }, []);

  const replace = (p) => setProfiles((list) => (list || []).map((x) => (x.id === p.id ? p : x)));
  const selected = profiles && selectedId ? profiles.find((p) => p.id === selectedId) : null;
  const close = () => navigate(hrefs.settings('ssh'));
  const hasDetail = creating || !!selected;

  return html`
    <section class="settings-section" aria-labelledby="ssh-title">
      <div class="section-head">
        <div>
          <h2 id="ssh-title" class="section-title">SSH connections</h2>
          <p class="muted">The hosts agent chats work on. Each connection is yours alone; replies run commands there as its user.</p>
        </div>
        <a class="btn btn-primary" href=${hrefs.settings('ssh', 'new')} id="ssh-create"><${Icon} name="plus" /><span>Add connection</span></a>
      </div>
      ${error && html`<p class="error-note" role="alert">${error.message}</p>`}
      ${!profiles && !error ? html`<p class="loading-line" role="status">Loading…</p>` : null}
      ${profiles !== null && html`
        <div class=${'models-layout' + (hasDetail ? ' has-detail' : '')}>
          <div class="models-list-pane">
            ${profiles.length === 0 && html`
              <div class="empty-state">
                <p class="empty-state-title">No SSH connections yet.</p>
                <p>Add one to start agent chats on that host.</p>
              </div>`}
            ${profiles.length > 0 && html`
              <ul class="model-list" aria-label="SSH connections" id="ssh-list">
                ${profiles.map((p) => html`
                  <li class=${'model-row' + (p.id === selectedId ? ' is-selected' : '')} key=${p.id}>
                    <a class="model-row-main" href=${hrefs.settings('ssh', String(p.id))} aria-current=${p.id === selectedId ? 'true' : undefined}>
                      <span class="model-row-text">
                        <span class="model-row-name">${p.name}</span>
                        <span class="model-row-sub">${hostLine(p)}${p.hostKey ? '' : ' · host key not accepted'}</span>
                      </span>
                    </a>
                  </li>`)}
              </ul>`}
          </div>
          ${hasDetail && html`
            <div class="models-detail-pane">
              <${ProfileForm} key=${(selected ? selected.id : 'new') + ':' + formKey} profile=${selected}
                onClose=${close}
                onSaved=${async (p) => { await load(); setFormKey((k) => k + 1); navigate(hrefs.settings('ssh', String(p.id))); }}
                onDeleted=${async () => { await load(); close(); }} />
              ${selected && html`<${HostKey} profile=${selected} onChanged=${replace} />`}
              ${selected && html`<${TestConnection} profile=${selected} />`}
            </div>`}
        </div>`}
    </section>`;
}
