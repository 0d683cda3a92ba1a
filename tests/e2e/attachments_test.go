package e2e

import (
	"bytes"
	"context"
	"encoding/binary"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/tests/harness"
)

// silentWAV is a tenth of a second of silence, so the browser has real
// audio to play.
func silentWAV() string {
	const rate, samples = 8000, 800
	var b bytes.Buffer
	w := func(v any) { binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	w(uint32(36 + samples*2))
	b.WriteString("WAVEfmt ")
	w(uint32(16))
	w(uint16(1))
	w(uint16(1))
	w(uint32(rate))
	w(uint32(rate * 2))
	w(uint16(2))
	w(uint16(16))
	b.WriteString("data")
	w(uint32(samples * 2))
	b.Write(make([]byte, samples*2))
	return b.String()
}

func fixturePath(name string) string {
	p, _ := filepath.Abs(filepath.Join("..", "..", "backend", "attach", "testdata", name))
	return p
}

func TestAttachmentsInChromium(t *testing.T) {
	a := newChatApp(t)
	voice := fakellm.New(t)
	voice.SetRoute("POST", "/v1/audio/speech", fakellm.Reply{Header: http.Header{"Content-Type": {"audio/wav"}}, Body: silentWAV()})
	harness.API(t, a.base, "Audio.SetSettings", nil, map[string]any{"ttsUrl": voice.URL(), "ttsVoice": "nova"})
	// Reload, so the page learns that read-aloud is set up.
	a.do(chromedp.Navigate(a.base + "/"))
	a.waitJS(`!!document.querySelector('#composer-input') && !!document.querySelector('#composer-attach')`)

	t.Run("limits are shown before upload", func(t *testing.T) {
		a.waitJS(`(document.querySelector('#composer-attach').title || '').includes('MB each')`)
	})

	t.Run("picker, paste and drop make chips; remove deletes", func(t *testing.T) {
		a.do(chromedp.SetUploadFiles(chromedp.CSS(`#composer-file`), []string{fixturePath("opaque.png"), fixturePath("text.pdf")}))
		a.waitJS(`document.querySelectorAll('.composer .attach-chip.is-ready').length === 2`)
		// A pasted screenshot, and a text file dropped on the conversation
		// rather than the box: a drop anywhere in the window is for the
		// message being written, and the box lights up while files are
		// over the window.
		a.js(`(() => {
			const dt = new DataTransfer();
			dt.items.add(new File(['pasted words'], 'image.png', { type: 'image/png' }));
			document.querySelector('#composer-input').dispatchEvent(new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }));
			window.dropTest = new DataTransfer();
			window.dropTest.items.add(new File(['dropped notes\n'], 'notes.txt', { type: 'text/plain' }));
			document.querySelector('#main').dispatchEvent(new DragEvent('dragover', { dataTransfer: window.dropTest, bubbles: true, cancelable: true }));
			return true;
		})()`)
		a.waitJS(`!!document.querySelector('.composer.is-dragging')`)
		a.js(`document.querySelector('#main').dispatchEvent(new DragEvent('drop', { dataTransfer: window.dropTest, bubbles: true, cancelable: true }))`)
		a.waitJS(`!document.querySelector('.composer.is-dragging')`)
		// A link dropped on the page is taken (the browser would follow it
		// away from the app); onto the message box it drops in as text.
		taken := a.js(`(() => {
			const link = () => { const d = new DataTransfer(); d.setData('text/uri-list', 'https://example.org/'); return d; };
			const drop = (el) => { const e = new DragEvent('drop', { dataTransfer: link(), bubbles: true, cancelable: true }); el.dispatchEvent(e); return e.defaultPrevented; };
			return [drop(document.querySelector('#main')), drop(document.querySelector('#composer-input'))].join(',');
		})()`)
		if taken != "true,false" {
			t.Errorf("link drops taken (page, message box): %v, want true,false", taken)
		}
		a.waitJS(`document.querySelectorAll('.composer .attach-chip.is-ready').length === 4 && document.querySelectorAll('.composer .attach-chip.is-error').length === 0`)
		// The "image" pasted was really text: the server typed it by its
		// bytes, and the chip says so. It is removed, with the dropped file.
		a.js(`[...document.querySelectorAll('.composer .attach-chip')].filter((c) => !/opaque|text\.pdf/.test(c.innerText)).forEach((c) => c.querySelector('.attach-remove').click())`)
		a.waitJS(`document.querySelectorAll('.composer .attach-chip').length === 2`)
	})

	t.Run("send shows both chips in the sent message", func(t *testing.T) {
		a.llm.Enqueue(fakellm.Stream("A white page ", "with a black box, and a report."))
		a.send("What are these?")
		a.waitJS(`(() => { const m = [...document.querySelectorAll('.msg-user')].pop(); return !!m && m.querySelectorAll('.attach-chip').length === 2; })()`)
		a.waitJS(`(() => { const i = [...document.querySelectorAll('.msg-user img.attach-thumb')].pop(); return !!i && i.complete && i.naturalWidth > 0; })()`)
		a.waitJS(`(() => { const m = [...document.querySelectorAll('.msg-user')].pop(); return m.innerText.includes('opaque.png') && m.innerText.includes('text.pdf'); })()`)
		a.waitReplyIdle()
		if n := a.js(`document.querySelectorAll('.composer .attach-chip').length`); n != float64(0) {
			t.Errorf("composer still has %v chips after sending", n)
		}
		// The model is not marked vision: no image parts, the PDF as a block.
		var body string
		for _, r := range a.llm.Requests() {
			if r.Path == "/v1/chat/completions" && r.JSON["stream"] == true && strings.Contains(string(r.Body), "What are these?") {
				body = string(r.Body)
			}
		}
		if body == "" || strings.Contains(body, "image_url") || !strings.Contains(body, `\u003cdocument name=\"text.pdf\"\u003e`) && !strings.Contains(body, `<document name=\"text.pdf\">`) {
			t.Errorf("the request to a non-vision model: %.600s", body)
		}
		a.shot("attachments")
	})

	t.Run("read a reply aloud calls the speech endpoint", func(t *testing.T) {
		a.waitJS(`!![...document.querySelectorAll('.msg-assistant .msg-read')].pop()`)
		a.js(`[...document.querySelectorAll('.msg-assistant .msg-read')].pop().click()`)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		for {
			var got string
			for _, r := range voice.Requests() {
				if r.Path == "/v1/audio/speech" {
					got, _ = r.JSON["input"].(string)
				}
			}
			if strings.Contains(got, "black box") {
				break
			}
			select {
			case <-ctx.Done():
				t.Fatalf("no speech request with the reply's text (got %q)", got)
			case <-time.After(50 * time.Millisecond):
			}
		}
	})

	t.Run("editing a sent turn changes its files", func(t *testing.T) {
		const lastUser = `[...document.querySelectorAll('.msg-user')].pop()`
		a.clickXPath(`(//article[contains(@class,'msg-user')])[last()]//button[contains(., 'Edit')]`)
		a.waitJS(lastUser + `.querySelectorAll('.msg-edit .attach-chip').length === 2`)
		// The PDF goes, a text file comes.
		a.js(`[...` + lastUser + `.querySelectorAll('.msg-edit .attach-chip')].find((c) => c.innerText.includes('text.pdf')).querySelector('.attach-remove').click()`)
		id := a.str(lastUser + `.id.replace('msg-', '')`)
		a.do(chromedp.SetUploadFiles(chromedp.CSS(`#edit-file-`+id), []string{fixturePath("latin1.txt")}))
		a.waitJS(lastUser + `.querySelectorAll('.msg-edit .attach-chip.is-ready').length === 2`)
		// A file dropped while editing goes to the edit, not the composer;
		// it is removed again before saving.
		a.js(`(() => {
			const dt = new DataTransfer();
			dt.items.add(new File(['second breakfast\n'], 'dropped-in-edit.txt', { type: 'text/plain' }));
			document.querySelector('#main').dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
			return true;
		})()`)
		a.waitJS(`[...` + lastUser + `.querySelectorAll('.msg-edit .attach-chip.is-ready')].some((c) => c.innerText.includes('dropped-in-edit.txt'))`)
		if n := a.js(`document.querySelectorAll('.composer .attach-chip').length`); n != float64(0) {
			t.Errorf("the drop went to the composer too: %v chips there", n)
		}
		a.js(`[...` + lastUser + `.querySelectorAll('.msg-edit .attach-chip')].find((c) => c.innerText.includes('dropped-in-edit.txt')).querySelector('.attach-remove').click()`)
		a.waitJS(lastUser + `.querySelectorAll('.msg-edit .attach-chip').length === 2`)
		a.llm.Enqueue(fakellm.Stream("A menu ", "this time."))
		a.clickXPath(`(//article[contains(@class,'msg-user')])[last()]//form[contains(@class,'msg-edit')]//button[@type='submit']`)
		a.waitJS(`(() => { const m = ` + lastUser + `; return !m.querySelector('.msg-edit') && m.innerText.includes('opaque.png') && m.innerText.includes('latin1.txt') && !m.innerText.includes('text.pdf'); })()`)
		a.waitReplyIdle()
		var body string
		for _, r := range a.llm.Requests() {
			if r.Path == "/v1/chat/completions" && r.JSON["stream"] == true && strings.Contains(string(r.Body), "What are these?") {
				body = string(r.Body)
			}
		}
		if !strings.Contains(body, `latin1.txt`) || strings.Contains(body, `text.pdf`) {
			t.Errorf("the request after the edit: %.600s", body)
		}
		a.shot("edited-files")
	})
	a.pe.check(t)
}
