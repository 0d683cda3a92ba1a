package e2e

import (
	"encoding/json"
	"testing"
)

// framesUnit drives frames.js, as the served app loads it, with frame
// sequences no endpoint produces on demand, and reports what the states and
// the DOM their ReplyViews drew ended with.
const framesUnit = `(async () => {
  const { ReplyState, ReplyView, Follower } = await import(new URL('./chat/frames.js', document.querySelector('script[type=module]').src).href);
  const now = (fn) => fn();
  const out = {};
  const kinds = (c) => [...c.children].map((e) => e.className + (e.hidden ? ':hidden' : ''));

  // Coalesced: several parts opened, appended to and closed per frame.
  {
    const st = new ReplyState(1, { fresh: true });
    const box = document.createElement('div');
    new ReplyView(st, box, { schedule: now });
    const r = [];
    r.push(st.apply({ chatId: 9, messageId: 1, seq: 1, status: 'streaming', parts: [
      { i: 0, open: 'reasoning', text: 'Think ' },
      { i: 1, open: 'text', seal: ['<p>One</p>'], tail: '<p>Tw</p>', op: 'replace' },
    ] }));
    const body = box.querySelector('.msg-body');
    r.push(st.apply({ chatId: 9, messageId: 1, seq: 2, status: 'streaming', parts: [
      { i: 0, text: 'more.' },
      { i: 1, tail: '<p>Two</p>', op: 'replace', close: true },
      { i: 2, open: 'tool_call', name: 'weather', callId: 'c1', text: '{"city":"<b>Bree</b>"}', close: true },
      { i: 3, open: 'tool_result', name: 'weather', callId: 'c1', error: true, text: '<img src=x onerror="window.__pwned=1"> see https://example.org/a?b=1 and javascript:alert(1) or http://x/"><b>' },
      { i: 4, open: 'notice', text: '<script>window.__pwned=1</script>' },
      { i: 5, open: 'pause', text: 'Go on?' },
      { i: 6, open: 'text', tail: '<p>Three</p>', op: 'replace' },
    ], activity: 'Searching the web for “<b>Bree</b>”' }));
    const activity = box.querySelector('.reply-activity');
    const activityAt2 = activity ? activity.textContent + (activity.hidden ? ':hidden' : '') + (box.lastChild === activity ? ':last' : '') : '';
    r.push(st.apply({ chatId: 9, messageId: 1, seq: 3, status: 'final', content: 'One\n\nTwo', metrics: { completionTokens: 3 }, parts: [] }));
    r.push(st.apply({ chatId: 9, messageId: 1, seq: 4, status: 'final', parts: [] }));
    out.coalesced = {
      results: r, kinds: kinds(box), sameBody: box.querySelector('.msg-body') === body,
      text: [...box.querySelectorAll('.msg-body')].map((b) => b.innerHTML.replace(/<\/?div[^>]*>/g, '')),
      reasoning: box.querySelector('.reasoning-text').textContent,
      tool: box.querySelector('.tool-activity-summary').textContent + ' | ' + box.querySelector('.tool-call').textContent,
      result: box.querySelector('.tool-result-summary').textContent + ' | ' + box.querySelector('.tool-result-text').textContent,
      links: [...box.querySelectorAll('.tool-result-text a')].map((a) => a.getAttribute('href')),
      activityAt2, activityAtEnd: activity.hidden,
      notice: box.querySelector('.part-notice').textContent,
      elements: box.querySelectorAll('img, script, b, .reply-activity *').length,
      final: st.final, status: st.status, content: st.content, finalFull: st.finalFull,
    };
    // Shown in the transcript, for the screenshot.
    const art = document.createElement('article');
    art.className = 'msg msg-assistant';
    art.id = 'parts-sample';
    box.className = 'msg-content';
    art.appendChild(box);
    (document.querySelector('.chat-inner') || document.body).appendChild(art);
    box.querySelectorAll('details').forEach((d) => { d.open = true; });
  }

  // Out of order, then a resync through a Follower: a frame after a gap
  // waits, Chats.Live's snapshot replaces the parts (keeping each part's
  // element when its kind is the same), and the waiting frame applies.
  {
    const states = new Map();
    const calls = [];
    const snapshot = { chatId: 9, messageId: 2, seq: 3, status: 'streaming', parts: [
      { i: 0, open: 'reasoning', text: 'Thought it through.' },
      { i: 1, open: 'text', reset: true, full: '<p>Alpha</p><p>Beta</p>', tail: '<p>Gam</p>', op: 'replace' },
    ] };
    let release;
    const live = new Promise((res) => { release = res; });
    const fol = new Follower(9, {
      states,
      call: async (method, id) => { calls.push(method + ' ' + id); await live; return { messageId: 2, frame: snapshot }; },
      onUnknown: () => calls.push('unknown'),
    });
    const st = new ReplyState(2, { fresh: true });
    const box = document.createElement('div');
    new ReplyView(st, box, { schedule: now });
    fol.adopt(st);
    fol.frame({ chatId: 9, messageId: 2, seq: 1, status: 'streaming', parts: [
      { i: 0, open: 'reasoning', text: 'Thought ' },
      { i: 1, open: 'text', seal: ['<p>Alpha</p>'], tail: '<p>B</p>', op: 'replace' },
    ] });
    const reasoningEl = box.children[0];
    const seqBefore = st.seq;
    fol.frame({ chatId: 9, messageId: 2, seq: 4, status: 'streaming', parts: [{ i: 1, tail: '<p>Gamma</p>', op: 'replace' }] });
    const seqAtGap = st.seq;
    const textAtGap = box.querySelector('.msg-body').textContent;
    release();
    await new Promise((res) => setTimeout(res, 0));
    await new Promise((res) => setTimeout(res, 0));
    const dup = st.apply({ chatId: 9, messageId: 2, seq: 3, status: 'streaming', parts: [{ i: 0, text: 'again' }] });
    // An op on a part never opened is a gap too: nothing changes.
    const unopened = st.apply({ chatId: 9, messageId: 2, seq: 5, status: 'streaming', parts: [{ i: 7, text: 'x' }] });
    out.resync = {
      calls, seqBefore, seqAtGap, textAtGap, seq: st.seq, dup, unopened,
      kinds: kinds(box), keptReasoning: box.children[0] === reasoningEl,
      reasoning: st.reasoning, text: box.querySelector('.msg-body').textContent,
    };
  }

  // A stored reply with parts is drawn by the same views, its text whole.
  {
    const st = new ReplyState(3, { status: 'final', html: '<p>A</p><p>B</p>', parts: [
      { kind: 'text', html: '<p>A</p>' }, { kind: 'notice', text: '<i>n</i>' }, { kind: 'text', html: '<p>B</p>' },
    ] });
    const box = document.createElement('div');
    new ReplyView(st, box, { schedule: now });
    out.stored = { kinds: kinds(box), sealed: box.querySelectorAll('.msg-sealed').length, html: box.innerHTML, text: st.hasText(), joined: st.joined() };
  }

  // A reply stopped while its tool ran keeps the call with no result: its
  // block says the call did not finish (not "Used"); while streaming, the
  // call is simply running.
  {
    const parts = [
      { kind: 'text', html: '<p>Let me search.</p>' },
      { kind: 'tool_call', name: 'web_search', callId: 'c1', text: '{"query":"Bree"}' },
    ];
    const summary = (status) => {
      const st = new ReplyState(4, { status, html: '<p>Let me search.</p>', parts });
      const box = document.createElement('div');
      new ReplyView(st, box, { schedule: now });
      return box.querySelector('.tool-activity-summary').textContent;
    };
    const two = [...parts, { kind: 'tool_result', name: 'web_search', callId: 'c1', text: 'hits' },
      { kind: 'tool_call', name: 'fetch_url', callId: 'c2', text: '{}' }];
    const st = new ReplyState(5, { status: 'stopped', html: '', parts: two });
    const box = document.createElement('div');
    new ReplyView(st, box, { schedule: now });
    out.unfinished = { stopped: summary('stopped'), streaming: summary('streaming'), mixed: box.querySelector('.tool-activity-summary').textContent };
  }
  out.pwned = !!window.__pwned;
  return JSON.stringify(out);
})()`

// TestFramesInTheBrowser runs frames.js's ReplyState, ReplyView and
// Follower in Chromium, loaded from the served app, against frame sequences:
// coalesced operations on every kind of part, frames out of order and a
// resync, and a stored reply.
func TestFramesInTheBrowser(t *testing.T) {
	a := newChatApp(t)
	var got struct {
		Coalesced struct {
			Results                    []string
			Kinds                      []string
			SameBody                   bool
			Text                       []string
			Reasoning, Tool, Result    string
			Links                      []string
			ActivityAt2                string
			ActivityAtEnd              bool
			Notice                     string
			Elements                   int
			Final                      bool
			Status, Content, FinalFull string
		}
		Resync struct {
			Calls               []string
			SeqBefore, SeqAtGap int
			TextAtGap           string
			Seq                 int
			Dup, Unopened       string
			Kinds               []string
			KeptReasoning       bool
			Reasoning, Text     string
		}
		Stored struct {
			Kinds  []string
			Sealed int
			HTML   string
			Text   bool
			Joined string
		}
		Unfinished struct{ Stopped, Streaming, Mixed string }
		Pwned      bool
	}
	if err := json.Unmarshal([]byte(a.await(framesUnit)), &got); err != nil {
		t.Fatal(err)
	}
	c := got.Coalesced
	wantKinds := []string{"reasoning", "msg-body md", "tool-activity", "part-notice", "part-pause", "msg-body md", "reply-activity:hidden"}
	if !equal(c.Results, []string{"applied", "applied", "applied", "duplicate"}) || !equal(c.Kinds, wantKinds) || !c.SameBody {
		t.Errorf("coalesced: results %v, parts %v (want %v), body kept %v", c.Results, c.Kinds, wantKinds, c.SameBody)
	}
	if !equal(c.Text, []string{"<p>One</p><p>Two</p>", "<p>Three</p>"}) || c.Reasoning != "Think more." {
		t.Errorf("coalesced: text %q, reasoning %q", c.Text, c.Reasoning)
	}
	// A round's call and result are one activity block; the result's
	// http(s) URLs are its only links, and everything else is text.
	if want := `Used weather (1 failed) | weather<b>Bree</b>`; c.Tool != want {
		t.Errorf("coalesced: tool block %q, want %q", c.Tool, want)
	}
	if !equal(c.Links, []string{"https://example.org/a?b=1", "http://x/"}) {
		t.Errorf("coalesced: links %q", c.Links)
	}
	if c.ActivityAt2 != "Searching the web for “<b>Bree</b>”:last" || !c.ActivityAtEnd {
		t.Errorf("coalesced: activity line %q while streaming, hidden at the end %v", c.ActivityAt2, c.ActivityAtEnd)
	}
	if c.Result != `Failed: weather | <img src=x onerror="window.__pwned=1"> see https://example.org/a?b=1 and javascript:alert(1) or http://x/"><b>` ||
		c.Notice != "<script>window.__pwned=1</script>" || c.Elements != 0 {
		t.Errorf("coalesced: plain parts drawn as %q, %q, %q with %d elements from them; want their text, escaped", c.Tool, c.Result, c.Notice, c.Elements)
	}
	if !c.Final || c.Status != "final" || c.Content != "One\n\nTwo" || c.FinalFull != "<p>One</p><p>Two</p><p>Three</p>" {
		t.Errorf("coalesced: final %v %s, content %q, final HTML %q", c.Final, c.Status, c.Content, c.FinalFull)
	}
	r := got.Resync
	if !equal(r.Calls, []string{"Chats.Live 9"}) || r.SeqBefore != 1 || r.SeqAtGap != 1 || r.TextAtGap != "AlphaB" {
		t.Errorf("resync: calls %v; at the gap seq %d→%d, text %q", r.Calls, r.SeqBefore, r.SeqAtGap, r.TextAtGap)
	}
	if r.Seq != 4 || r.Dup != "duplicate" || r.Unopened != "gap" || !r.KeptReasoning || r.Reasoning != "Thought it through." || r.Text != "AlphaBetaGamma" {
		t.Errorf("resync: seq %d, duplicate %q, unopened part %q, reasoning element kept %v, reasoning %q, text %q", r.Seq, r.Dup, r.Unopened, r.KeptReasoning, r.Reasoning, r.Text)
	}
	if !equal(r.Kinds, []string{"reasoning", "msg-body md"}) {
		t.Errorf("resync: parts %v", r.Kinds)
	}
	if u := got.Unfinished; u.Stopped != "Called web_search (1 not finished)" || u.Streaming != "Used web_search" ||
		u.Mixed != "Used web_search, fetch_url (1 not finished)" {
		t.Errorf("a stopped call's block: %q when stopped, %q while streaming, %q beside a finished call", u.Stopped, u.Streaming, u.Mixed)
	}
	s := got.Stored
	if !equal(s.Kinds, []string{"msg-body md", "part-notice", "msg-body md"}) || s.Sealed != 0 || !s.Text || s.Joined != "<p>A</p><p>B</p>" {
		t.Errorf("stored: parts %v, %d sealed regions, HTML %s", s.Kinds, s.Sealed, s.HTML)
	}
	a.js(`document.getElementById('parts-sample').scrollIntoView()`)
	a.shot("parts")
	if got.Pwned {
		t.Error("a part's text ran as HTML")
	}
	a.pe.check(t)
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
