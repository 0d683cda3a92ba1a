package e2e

import (
	"encoding/json"
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
