package e2e

import (
	"encoding/json"
	"strings"
	"testing"
)

// askUnit drives frames.js's ask and agent/cards.js's AskCard, as the
// served app loads them, with frames no endpoint produces on demand.
const askUnit = `(async () => {
  const base = document.querySelector('script[type=module]').src;
  const { ReplyState } = await import(new URL('./chat/frames.js', base).href);
  const { AskCard, planOf } = await import(new URL('./agent/cards.js', base).href);
  const { html, render } = await import(new URL('../vendor/htm-preact/standalone.module.js', base).href);
  const out = {};
  const hostile = '<img src=x onerror="window.__pwned=1">Which <b>branch</b>?';
  const ask = { id: 'a1', kind: 'approve', deadline: Date.now() + 5 * 60000, items: [
    { key: 'k1', callId: 'c1', tool: 'shell_run', kind: 'approve', text: 'shell_run' },
    { key: 'k2', callId: 'c2', tool: 'ask_user', kind: 'question', text: hostile, options: ['main', '<i>dev</i>'] },
  ] };
  const st = new ReplyState(1, { fresh: true });
  const seen = [];
  st.apply({ chatId: 9, messageId: 1, seq: 1, status: 'streaming', parts: [
    { i: 0, open: 'tool_call', name: 'shell_run', callId: 'c1', text: '{"command":"rm -rf <b>x</b>","cwd":"/srv/my project"}', close: true },
  ], ask });
  seen.push(st.ask ? st.ask.id : null);
  st.apply({ chatId: 9, messageId: 1, seq: 2, status: 'streaming', parts: [] });
  seen.push(st.ask ? st.ask.id : null); // no ask field: unchanged
  const box = document.createElement('div');
  document.body.appendChild(box);
  render(html` + "`" + `<${AskCard} ask=${st.ask} messageId=${1} parts=${st.parts} />` + "`" + `, box);
  out.main = box.querySelector('.ask-call-main').textContent;
  out.cwd = box.querySelector('.ask-call-cwd').textContent;
  out.question = box.querySelector('.ask-question-text').textContent;
  out.options = [...box.querySelectorAll('.ask-option')].map((b) => b.textContent);
  out.buttons = [...box.querySelectorAll('.ask-actions button')].map((b) => b.textContent);
  out.elements = box.querySelectorAll('img, b, i, script').length;
  out.pwned = !!window.__pwned;
  render(null, box);
  box.remove();
  st.apply({ chatId: 9, messageId: 1, seq: 3, status: 'streaming', parts: [], ask: null });
  seen.push(st.ask ? st.ask.id : null);
  st.apply({ chatId: 9, messageId: 1, seq: 4, status: 'streaming', parts: [], ask: { ...ask, id: 'a2' } });
  seen.push(st.ask ? st.ask.id : null);
  st.snapshot({ seq: 5, status: 'streaming', parts: [{ i: 0, open: 'tool_call', name: 'shell_run', callId: 'c1', text: '{}' }] });
  seen.push(st.ask ? st.ask.id : null); // a snapshot without ask: no card
  st.apply({ chatId: 9, messageId: 1, seq: 6, status: 'streaming', parts: [], ask: { ...ask, id: 'a3' } });
  st.apply({ chatId: 9, messageId: 1, seq: 7, status: 'stopped', parts: [] });
  seen.push(st.ask ? st.ask.id : null); // over: no card
  out.seen = seen;
  const plan = planOf([{ kind: 'text' }, { kind: 'tool_call', name: 'plan_submit', callId: 'p', text: '{"plan":"1. <b>Read</b>"}' }]);
  out.plan = plan ? plan.text : '';
  return JSON.stringify(out);
})()`

// TestAskCardsInTheBrowser: a reply's ask follows its frames (set, kept
// by a frame without one, cleared by null, by a snapshot without one and
// by the end of the reply), and the card shows each call's command and
// directory and each question and option as text.
func TestAskCardsInTheBrowser(t *testing.T) {
	a := newChatApp(t)
	var got struct {
		Main, Cwd, Question string
		Options, Buttons    []string
		Elements            int
		Pwned               bool
		Seen                []*string
		Plan                string
	}
	if err := json.Unmarshal([]byte(a.await(askUnit)), &got); err != nil {
		t.Fatal(err)
	}
	if got.Main != "rm -rf <b>x</b>" || got.Cwd != "in /srv/my project" {
		t.Errorf("the call shows %q, %q", got.Main, got.Cwd)
	}
	if got.Question != `<img src=x onerror="window.__pwned=1">Which <b>branch</b>?` || len(got.Options) != 2 || got.Options[1] != "<i>dev</i>" {
		t.Errorf("the question shows %q, options %q", got.Question, got.Options)
	}
	if got.Elements != 0 || got.Pwned {
		t.Errorf("hostile text became HTML: %d elements, pwned %v", got.Elements, got.Pwned)
	}
	if len(got.Buttons) != 2 || got.Buttons[0] != "Don't run" || got.Buttons[1] != "Run" {
		t.Errorf("the card's buttons are %q", got.Buttons)
	}
	var seen []string
	for _, s := range got.Seen {
		if s == nil {
			seen = append(seen, "null")
		} else {
			seen = append(seen, *s)
		}
	}
	want := []string{"a1", "a1", "null", "a2", "null", "null"}
	if !equal(seen, want) {
		t.Errorf("ask went %q, want %q", seen, want)
	}
	if got.Plan != "1. <b>Read</b>" {
		t.Errorf("the plan reads %q", got.Plan)
	}
	a.pe.check(t)
}

// choicesUnit draws an approve card of two calls and a pause part, with
// Chats.Answer caught on its way to the server.
const choicesUnit = `(async () => {
  const base = document.querySelector('script[type=module]').src;
  const { AskCard } = await import(new URL('./agent/cards.js', base).href);
  const { viewFor, newPart } = await import(new URL('./chat/parts.js', base).href);
  const { html, render } = await import(new URL('../vendor/htm-preact/standalone.module.js', base).href);
  const out = {};
  const sent = [];
  const fetch0 = window.fetch;
  window.fetch = (url, opts) => {
    if (String(url).endsWith('/api/Chats.Answer')) {
      sent.push(JSON.parse(opts.body));
      return Promise.resolve(new Response(JSON.stringify({ result: null }), { headers: { 'Content-Type': 'application/json' } }));
    }
    return fetch0(url, opts);
  };
  const tick = () => new Promise((r) => setTimeout(r, 50));
  // until waits for what a click draws (Preact renders later, and later
  // still on a busy machine: a fixed wait read a card not drawn yet).
  const until = async (f) => { for (let i = 0; i < 200 && !f(); i++) await tick(); };
  const ask = { id: 'b1', kind: 'approve', deadline: Date.now() + 5 * 60000, items: [
    { key: 'k1', callId: 'c1', tool: 'shell_run', kind: 'approve', text: 'shell_run: ls' },
    { key: 'k2', callId: 'c2', tool: 'shell_run', kind: 'approve', text: 'shell_run: rm -rf build' },
  ] };
  const parts = [
    { kind: 'tool_call', name: 'shell_run', callId: 'c1', text: '{"command":"ls"}' },
    { kind: 'tool_call', name: 'shell_run', callId: 'c2', text: '{"command":"rm -rf build"}' },
  ];
  const box = document.createElement('div');
  document.body.appendChild(box);
  render(html` + "`" + `<${AskCard} ask=${ask} messageId=${42} parts=${parts} />` + "`" + `, box);
  const q = (s) => box.querySelector(s);
  const qa = (s) => [...box.querySelectorAll(s)];
  await until(() => qa('.ask-call').length === 2 && qa('.ask-actions button').length > 0);
  out.rowChoices = qa('.ask-call').map((li) => [...li.querySelectorAll('.ask-call-choice button')].map((b) => b.textContent));
  out.before = qa('.ask-actions button').map((b) => b.textContent);
  qa('.ask-call-run')[0].click();
  await until(() => qa('.ask-actions button').length === 3);
  out.oneChosen = qa('.ask-actions button').map((b) => b.textContent + (b.disabled ? ' (disabled)' : ''));
  qa('.ask-call-skip')[1].click();
  await until(() => !!q('.ask-note input'));
  const note = q('.ask-note input');
  note.value = 'not the build dir';
  note.dispatchEvent(new Event('input', { bubbles: true }));
  await until(() => !!q('.ask-note label') && !q('.ask-send-choices')?.disabled);
  out.noteLabel = q('.ask-note label').textContent;
  q('.ask-send-choices').click();
  for (let i = 0; i < 100 && sent.length === 0; i++) await tick();
  out.sent = sent[0] || null;
  render(null, box);
  render(html` + "`" + `<${AskCard} ask=${{ ...ask, id: 'b2' }} messageId=${42} parts=${parts} />` + "`" + `, box);
  await until(() => !!q('.ask-approve'));
  q('.ask-approve').focus();
  q('.ask-approve').click();
  for (let i = 0; i < 100 && sent.length < 2; i++) await tick();
  out.all = sent[1] || null;
  for (let i = 0; i < 100 && document.activeElement?.id !== 'composer-input'; i++) await tick();
  out.focusAfter = document.activeElement?.id || document.activeElement?.tagName || '';
  render(null, box);

  // A pause part: one line while its card is live, its outcome after.
  const part = newPart('pause', { text: 'Asked to approve 2 calls:\n- shell_run: ls\n- shell_run: rm -rf build' });
  const v = viewFor(part, document);
  box.appendChild(v.el);
  v.sync(false);
  out.pauseLive = v.el.querySelector('summary').textContent;
  out.pauseLiveShown = v.el.innerText;
  part.take({ text: '\nApproved 1, declined 1' });
  v.sync(false);
  out.pauseDone = v.el.querySelector('summary').textContent;
  const wait = viewFor(newPart('pause', { text: 'Waiting for you.' }), document);
  wait.sync(false);
  out.pauseWait = wait.el.querySelector('summary').textContent;
  box.remove();
  window.fetch = fetch0;
  return JSON.stringify(out);
})()`

// TestAskCardChoicesPerCall: a card of several calls lets each be run or
// not (Chats.Answer gets each item's own answer, and the note only with
// the one not run), "Run all" approves every call, and the pause part
// above the card is one line that does not repeat the commands, then
// says how it was answered.
func TestAskCardChoicesPerCall(t *testing.T) {
	a := newChatApp(t)
	var got struct {
		RowChoices     [][]string
		Before         []string
		OneChosen      []string
		NoteLabel      string
		Sent           []json.RawMessage
		All            []json.RawMessage
		PauseLive      string
		PauseLiveShown string
		PauseDone      string
		FocusAfter     string
		PauseWait      string
	}
	if err := json.Unmarshal([]byte(a.await(choicesUnit)), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.RowChoices) != 2 || !equal(got.RowChoices[0], []string{"Don't run", "Run"}) || !equal(got.RowChoices[1], []string{"Don't run", "Run"}) {
		t.Errorf("each call's choice: %q", got.RowChoices)
	}
	if !equal(got.Before, []string{"Don't run any", "Run all"}) {
		t.Errorf("the card's buttons before a choice: %q", got.Before)
	}
	if !equal(got.OneChosen, []string{"Don't run any", "Send choices (1 of 2) (disabled)", "Run all"}) {
		t.Errorf("the card's buttons after one choice: %q", got.OneChosen)
	}
	if got.NoteLabel != "A note with the calls not run (optional)" {
		t.Errorf("the note's label: %q", got.NoteLabel)
	}
	type answer struct {
		ID    string
		Items map[string]struct {
			Approve bool
			Text    string
		}
	}
	read := func(name string, raw []json.RawMessage) answer {
		var ans answer
		if len(raw) != 2 || json.Unmarshal(raw[1], &ans) != nil || string(raw[0]) != "42" {
			t.Fatalf("%s: Chats.Answer got %s", name, raw)
		}
		return ans
	}
	ans := read("choices", got.Sent)
	if k1, k2 := ans.Items["k1"], ans.Items["k2"]; ans.ID != "b1" || !k1.Approve || k1.Text != "" || k2.Approve || k2.Text != "not the build dir" {
		t.Errorf("the choices sent: %+v", ans)
	}
	all := read("run all", got.All)
	if k1, k2 := all.Items["k1"], all.Items["k2"]; all.ID != "b2" || !k1.Approve || !k2.Approve {
		t.Errorf("Run all sent: %+v", all)
	}
	if got.PauseLive != "Asked to approve 2 calls · waiting for your answer" || strings.Contains(got.PauseLiveShown, "rm -rf") {
		t.Errorf("the live pause reads %q (shown: %q)", got.PauseLive, got.PauseLiveShown)
	}
	if got.PauseWait != "Waiting for you" {
		t.Errorf("a pause with nothing to list reads %q", got.PauseWait)
	}
	if got.FocusAfter != "composer-input" {
		t.Errorf("after answering from the keyboard the focus is on %q, want the message box", got.FocusAfter)
	}
	if got.PauseDone != "Asked to approve 2 calls · Approved 1, declined 1" {
		t.Errorf("the answered pause reads %q", got.PauseDone)
	}
	a.pe.check(t)
}

// TestHostKeyFileByType: the host key check names the host's file of the
// scanned key's type (an RSA host was told to read its ed25519 file).
func TestHostKeyFileByType(t *testing.T) {
	a := newChatApp(t)
	got := a.await(`import(` + appModule("./agent/connections.js") + `).then((m) => JSON.stringify([
		m.hostKeyFile('ssh-ed25519 AAAAC3Nza'), m.hostKeyFile('ssh-rsa AAAAB3Nza'),
		m.hostKeyFile('ecdsa-sha2-nistp256 AAAAE2Vj'), m.hostKeyFile('sk-ssh-ed25519@openssh.com AAAA')]))`)
	want := `["/etc/ssh/ssh_host_ed25519_key.pub","/etc/ssh/ssh_host_rsa_key.pub","/etc/ssh/ssh_host_ecdsa_key.pub","/etc/ssh/ssh_host_*_key.pub"]`
	if got != want {
		t.Errorf("host key files %s, want %s", got, want)
	}
	a.pe.check(t)
}
