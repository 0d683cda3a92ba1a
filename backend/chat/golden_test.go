package chat_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/llembas/lembas/backend/chat"
	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

var update = flag.Bool("update", false, "rewrite testdata/requests.golden from what is sent now")

// The requests replies send, byte for byte, over chats that use every part
// of request building: no system prompt, the instance's, the model's and
// the chat's (each winning over the ones after it), parameters from the
// model and the chat, documents and images (to a model that cannot see
// them, then to one that can), a continue, a regenerate, an edit, and a
// long history cut to fit. testdata/requests.golden holds them as they
// were when request building became a chain of contributors; go test
// -run TestRequestsAreUnchanged -update rewrites it after a change meant to
// alter requests.
func TestRequestsAreUnchanged(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	admin := store.Actor{User: e.user, Admin: true}
	var got bytes.Buffer
	// record runs step (one or more replies) and appends the request of
	// every reply it started, as sent.
	record := func(name string, step func() ids.ChatID) {
		t.Helper()
		before := len(e.llm.Requests())
		id := step()
		e.wait(id)
		n := 0
		for _, r := range e.llm.Requests()[before:] {
			if r.JSON["stream"] != true {
				continue // an automatic title's
			}
			n++
			fmt.Fprintf(&got, "== %s #%d\n%s\n", name, n, r.Body)
		}
		if n == 0 {
			t.Fatalf("%s: no reply was requested", name)
		}
	}
	send := func(chatID ids.ChatID, in chat.SendInput) ids.ChatID {
		t.Helper()
		in.ChatID = chatID
		if in.ModelID == 0 {
			in.ModelID = e.model
		}
		turn, err := e.c.Chat.Send(ctx, e.user, in)
		if err != nil {
			t.Fatal(err)
		}
		return turn.Chat.ID
	}
	setModel := func(s store.ModelSettings) {
		t.Helper()
		s.Enabled = true
		if _, err := e.c.DB.UpdateModel(ctx, admin, e.model, s); err != nil {
			t.Fatal(err)
		}
	}

	// No system prompt anywhere; a second turn carries the first exchange.
	var plain ids.ChatID
	record("no prompt", func() ids.ChatID { plain = send(0, chat.SendInput{Content: "Hello"}); return plain })
	record("no prompt, second turn", func() ids.ChatID { return send(plain, chat.SendInput{Content: "And again"}) })

	// The instance's prompt, then the model's over it (with the model's
	// parameters), then the chat's over both (with its own parameters).
	if err := e.c.DB.SetSetting(ctx, "system_prompt", "Instance prompt."); err != nil {
		t.Fatal(err)
	}
	record("instance prompt", func() ids.ChatID { return send(0, chat.SendInput{Content: "Who speaks?"}) })
	temp, maxTok, effort, chatTemp, topP := 0.5, int64(300), "high", 0.9, 0.8
	setModel(store.ModelSettings{SystemPrompt: "Model prompt.", Params: store.Params{Temperature: &temp, MaxTokens: &maxTok}})
	record("model prompt", func() ids.ChatID { return send(0, chat.SendInput{Content: "Who speaks now?"}) })
	var own ids.ChatID
	record("chat prompt", func() ids.ChatID {
		own = send(0, chat.SendInput{Content: "And now?", SystemPrompt: "Chat prompt.",
			Params: &store.Params{Temperature: &chatTemp, TopP: &topP, ReasoningEffort: &effort}})
		return own
	})
	record("chat prompt, regenerate", func() ids.ChatID {
		if _, err := e.c.Chat.Regenerate(ctx, e.user, own); err != nil {
			t.Fatal(err)
		}
		return own
	})
	setModel(store.ModelSettings{})
	if err := e.c.DB.SetSetting(ctx, "system_prompt", ""); err != nil {
		t.Fatal(err)
	}

	// Files: a document and an image to a model that cannot see images,
	// then the same turn edited for one that can.
	doc := e.uploadFile("notes.txt", "The ring is in the drawer.")
	img := e.uploadImage("map.png")
	var files ids.ChatID
	var turn ids.MessageID
	record("files, no vision", func() ids.ChatID {
		t, err := e.c.Chat.Send(ctx, e.user, chat.SendInput{ModelID: e.model, Content: "Where is it?",
			Attachments: []ids.AttachmentID{doc, img}})
		if err != nil {
			e.t.Fatal(err)
		}
		files, turn = t.Chat.ID, t.User.ID
		return files
	})
	setModel(store.ModelSettings{Capabilities: store.Capabilities{Vision: true}})
	record("files, vision, edited", func() ids.ChatID {
		if _, err := e.c.Chat.Edit(ctx, e.user, turn, "Where is it, then?", nil); err != nil {
			t.Fatal(err)
		}
		return files
	})
	record("files, vision, next turn", func() ids.ChatID { return send(files, chat.SendInput{Content: "Thanks"}) })
	setModel(store.ModelSettings{})

	// A reply cut by the length limit, continued.
	var cut ids.ChatID
	e.llm.Enqueue(fakellm.NewStream().Reasoning("Pondering.").Content("cut").Finish("length").Reply())
	record("cut", func() ids.ChatID { cut = send(0, chat.SendInput{Content: "Long please"}); return cut })
	record("continue", func() ids.ChatID {
		if _, err := e.c.Chat.Continue(ctx, e.user, cut); err != nil {
			t.Fatal(err)
		}
		return cut
	})

	// A long history cut to fit the context.
	long := e.longChat(40, 600)
	e.setContext(4096)
	// Its automatic compaction fails: the newest turns that fit are sent.
	e.llm.Enqueue(fakellm.Status(400, `{"error":{"message":"no summary"}}`))
	record("long history", func() ids.ChatID { return send(long, chat.SendInput{Content: "The newest question"}) })
	// Its automatic compaction succeeds: the summary and the last exchanges.
	e.llm.Enqueue(fakellm.Stream("The summary of turns 0 to 37."))
	record("long history compacted", func() ids.ChatID { return send(long, chat.SendInput{Content: "One more question"}) })

	path := filepath.Join("testdata", "requests.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to record it)", err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		gl, wl := bytes.Split(got.Bytes(), []byte("\n")), bytes.Split(want, []byte("\n"))
		for i := range max(len(gl), len(wl)) {
			var g, w []byte
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if !bytes.Equal(g, w) {
				t.Fatalf("requests differ from %s at line %d:\n got: %.400s\nwant: %.400s", path, i+1, g, w)
			}
		}
	}
}

// uploadImage stores a small PNG as one of the user's unsent uploads,
// through the files service (which re-encodes it).
func (e *env) uploadImage(name string) ids.AttachmentID {
	e.t.Helper()
	m := image.NewRGBA(image.Rect(0, 0, 4, 3))
	for i := range m.Pix {
		m.Pix[i] = byte(i * 7)
	}
	m.Set(0, 0, color.RGBA{255, 0, 0, 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, m); err != nil {
		e.t.Fatal(err)
	}
	a, err := e.c.Files.Upload(context.Background(), e.user, name, &buf)
	if err != nil {
		e.t.Fatal(err)
	}
	return a.ID
}
