package e2e

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// TestUploadAsBytes: the desktop app uploads a multipart body it builds as
// bytes (a Blob-backed FormData crashes WebKitGTK's asset-server request
// path). Here the same body goes to the server from Chromium, with a name
// that needs RFC 5987 encoding, which must arrive whole. (Chromium's own
// FormData sends a quote as %22, which the server keeps as it is.)
func TestUploadAsBytes(t *testing.T) {
	a := newChatApp(t)
	got, err := chromedp.Run(a.ctx, chromedp.Evaluate[string](`(async () => {
		const { multipartBytes } = await import('/js/chat/attachments.js');
		const name = 'Ünïcode "quoted" (name)*.txt';
		const file = new File(['the one ring\n'], 'ignored.txt', { type: 'text/plain' });
		const m = await multipartBytes(file, name);
		const res = await fetch('/api/files', { method: 'POST', body: m.body, headers: { 'Content-Type': m.type } });
		const v = await res.json();
		return [res.status, v.kind, v.size, v.name === name ? 'same name' : 'name ' + v.name].join(' ');
	})()`, chromedp.EvalAwaitPromise))
	if err != nil || got != "200 text 13 same name" {
		t.Errorf("upload as bytes: %q %v", got, err)
	}
	a.pe.check(t)
}
