package core

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// bigFile uploads a small image as c and puts size bytes on disk in its
// place, as if a large file had been uploaded: the download routes stream
// whatever the file holds. It returns the file's URL and its bytes.
func bigFile(t *testing.T, w *web, c *http.Client, size int) (string, []byte) {
	t.Helper()
	code, v, body := w.upload(c, "opaque.png", testdata(t, "opaque.png"))
	if code != 200 {
		t.Fatalf("upload: %d %s", code, body)
	}
	var storage string
	if err := w.c.DB.Read().QueryRow(`SELECT storage_name FROM attachments WHERE id = ?`, v.ID).Scan(&storage); err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("0123456789abcdef"), size/16)
	if err := os.WriteFile(filepath.Join(w.c.Files.Dir(), storage), data, 0o600); err != nil {
		t.Fatal(err)
	}
	return v.URL, data
}

// stuckReader asks for path with c's session over a raw connection and
// never reads the answer.
func stuckReader(t *testing.T, w *web, c *http.Client, path string) net.Conn {
	t.Helper()
	u, _ := url.Parse(w.srv.URL)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	var cookies []string
	for _, ck := range c.Jar.Cookies(u) {
		cookies = append(cookies, ck.Name+"="+ck.Value)
	}
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nCookie: %s\r\n\r\n", path, u.Host, strings.Join(cookies, "; "))
	return conn
}

// poll calls try until it reports done, for at most a minute.
func poll(t *testing.T, what string, try func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !try() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A download is streamed from the file (ranges and conditional requests
// work, which reading the whole file into memory did not offer), revalidated
// on every use, and never answered from another person's ETag.
func TestDownloadsStreamAndRevalidate(t *testing.T) {
	w := newWeb(t, webOptions{})
	owner, other, _ := twoUsers(t, w)
	path, data := bigFile(t, w, owner, 1<<20)

	resp, body := w.fetch(owner, "GET", path)
	if resp.StatusCode != 200 || !bytes.Equal(body, data) {
		t.Fatalf("whole file: %d, %d bytes", resp.StatusCode, len(body))
	}
	etag := resp.Header.Get("ETag")
	if cc := resp.Header.Get("Cache-Control"); !strings.Contains(cc, "no-cache") || strings.Contains(cc, "max-age") {
		t.Errorf("Cache-Control = %q, want revalidation on every use", cc)
	}
	if etag == "" {
		t.Fatal("no ETag")
	}

	get := func(c *http.Client, hdr ...string) (*http.Response, []byte) {
		req, _ := http.NewRequest("GET", w.srv.URL+path, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	if resp, b := get(owner, "Range", "bytes=100000-100015"); resp.StatusCode != 206 || !bytes.Equal(b, data[100000:100016]) {
		t.Errorf("range: %d %q", resp.StatusCode, b)
	}
	if resp, b := get(owner, "If-None-Match", etag); resp.StatusCode != 304 || len(b) != 0 {
		t.Errorf("revalidation: %d, %d bytes", resp.StatusCode, len(b))
	}
	// Another person revalidating what the browser cached for the first
	// is told it does not exist, not that the cached copy is fine.
	if resp, _ := get(other, "If-None-Match", etag); resp.StatusCode != 404 {
		t.Errorf("another user's revalidation: %d, want 404", resp.StatusCode)
	}
	if resp, b := w.fetch(owner, "HEAD", path); resp.StatusCode != 200 || len(b) != 0 || resp.ContentLength != int64(len(data)) {
		t.Errorf("HEAD: %d, %d bytes, length %d", resp.StatusCode, len(b), resp.ContentLength)
	}
}

// One person's downloads are bounded: with every slot held by readers that
// never read, the next download is refused with a clear 429, and a slot is
// free again once its reader goes.
func TestConcurrentDownloadsAreCapped(t *testing.T) {
	w := newWeb(t, webOptions{maxDownloads: 2, downloadWait: 50 * time.Millisecond, writeTimeout: time.Hour})
	owner, other, _ := twoUsers(t, w)
	// Larger than what the socket buffers take, so the writes block.
	path, data := bigFile(t, w, owner, 32<<20)
	a, b := stuckReader(t, w, owner, path), stuckReader(t, w, owner, path)

	var refused string
	poll(t, "a third download refused", func() bool {
		req, _ := http.NewRequest("GET", w.srv.URL+path, nil)
		req.Header.Set("Range", "bytes=0-9") // a refused probe or a short one
		resp, err := owner.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode == 429 {
			refused = string(body)
			return true
		}
		return false
	})
	if !strings.Contains(refused, "too many downloads at once") || !strings.Contains(refused, "rate_limited") {
		t.Errorf("refusal: %s", refused)
	}
	// The cap is each person's own.
	if code, v, _ := w.upload(other, "opaque.png", testdata(t, "opaque.png")); code != 200 {
		t.Fatal("other's upload failed")
	} else if resp, _ := w.fetch(other, "GET", v.URL); resp.StatusCode != 200 {
		t.Errorf("another person's download while the first is at the cap: %d", resp.StatusCode)
	}

	a.Close()
	b.Close()
	poll(t, "a slot freed by a reader that went", func() bool {
		resp, body := w.fetch(owner, "GET", path)
		return resp.StatusCode == 200 && len(body) == len(data)
	})
}

// A reader that never reads is cut by the write deadline, which frees its
// download slot (and its open file), while the event stream, which writes
// rarely, is not cut by it.
func TestWriteDeadlineCutsAReaderThatNeverReads(t *testing.T) {
	w := newWeb(t, webOptions{maxDownloads: 1, downloadWait: 50 * time.Millisecond, writeTimeout: time.Second})
	owner, _, _ := twoUsers(t, w)
	path, data := bigFile(t, w, owner, 32<<20)

	// An event stream open across several write deadlines.
	req, _ := http.NewRequest("GET", w.srv.URL+"/api/events", nil)
	events, err := (&http.Client{Jar: owner.Jar}).Do(req) // no overall timeout
	if err != nil {
		t.Fatal(err)
	}
	defer events.Body.Close()

	stuck := stuckReader(t, w, owner, path)
	poll(t, "the stuck reader's slot freed by the deadline", func() bool {
		resp, body := w.fetch(owner, "GET", path)
		return resp.StatusCode == 200 && len(body) == len(data)
	})
	// What the stuck reader can still read is what the sockets held when
	// the server gave up: less than the file.
	stuck.SetReadDeadline(time.Now().Add(30 * time.Second))
	got, _ := io.Copy(io.Discard, bufio.NewReader(stuck))
	if got >= int64(len(data)) {
		t.Errorf("the stuck reader got %d bytes, the whole file: it was never cut", got)
	}

	// The stream outlived the deadline: a per-response deadline would have
	// ended it a second after it began; it still delivers heartbeats.
	pings := make(chan struct{}, 1024)
	go func() {
		sc := bufio.NewScanner(events.Body)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), ": ping") {
				pings <- struct{}{}
			}
		}
		close(pings)
	}()
	time.Sleep(3 * time.Second)       // lower bound: several deadlines
	for drained := false; !drained; { // what arrived meanwhile
		select {
		case _, ok := <-pings:
			if !ok {
				t.Fatal("the event stream ended")
			}
		default:
			drained = true
		}
	}
	select {
	case _, ok := <-pings:
		if !ok {
			t.Error("the event stream ended")
		}
	case <-time.After(30 * time.Second):
		t.Error("no heartbeat after the wait")
	}
}

// Signing out asks the browser to drop its cache, so the next person on it
// does not get the first one's files from there.
func TestSignOutClearsTheCache(t *testing.T) {
	w := newWeb(t, webOptions{})
	c := newClient()
	w.signUp(c, "frodo", "a-long-enough-password")
	req, _ := http.NewRequest("POST", w.srv.URL+"/api/auth/logout", nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("Clear-Site-Data"); got != `"cache"` {
		t.Errorf("Clear-Site-Data = %q, want \"cache\"", got)
	}
}
