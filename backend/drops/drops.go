// Package drops holds the files dropped onto the desktop window until the
// page claims them.
//
// WebKitGTK no longer hands dropped files to the page (since the fix for
// CVE-2025-13947, dataTransfer.files of a drop from outside is empty), so
// the desktop app takes drops natively and gets paths. A path never goes
// to the page and the page never names one: each dropped file is put on
// the shelf under a random token, the window is told the tokens, names and
// sizes, and the composer then uploads a token through the same handler
// and files service as a picked file (POST /api/files/dropped/{token}).
// A token is good once, for a few minutes, and only on the desktop mount.
package drops

import (
	"crypto/rand"
	"encoding/base64"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// TTL is how long a dropped file waits to be claimed.
const TTL = 10 * time.Minute

// maxShelved bounds the shelf; the oldest offers go first.
const maxShelved = 256

// MaxPerDrop is the most files one drop shelves; the rest are refused, so
// that a huge drop cannot push its own first files off the shelf. (A
// message takes far fewer anyway.)
const MaxPerDrop = 64

// Offer is one dropped file as the window sees it. Error, when set, says
// why it cannot be attached (a folder, an unreadable file), and there is
// no token.
type Offer struct {
	Token string `json:"token,omitempty"`
	Name  string `json:"name"`
	Size  int64  `json:"size"`
	Error string `json:"error,omitempty"`
}

type entry struct {
	path string
	at   time.Time
}

// Shelf is safe for concurrent use. The zero value is not; use New.
type Shelf struct {
	mu    sync.Mutex
	items map[string]entry
	order []string // tokens, oldest first
	now   func() time.Time
}

// New returns an empty shelf.
func New() *Shelf {
	return &Shelf{items: map[string]entry{}, now: time.Now}
}

// Offer shelves the regular files among paths and describes every path.
func (s *Shelf) Offer(paths []string) []Offer {
	out := make([]Offer, 0, len(paths))
	shelved := 0
	for _, p := range paths {
		if p == "" {
			continue
		}
		o := Offer{Name: filepath.Base(p)}
		fi, err := os.Stat(p)
		switch {
		case !filepath.IsAbs(p):
			o.Error = "could not be read" // never one of GTK's; not resolved against our directory
		case shelved >= MaxPerDrop:
			o.Error = "was one file too many for one drop"
		case err != nil:
			o.Error = "could not be read"
		case fi.IsDir():
			o.Error = "is a folder; drop the files in it instead"
		case !fi.Mode().IsRegular():
			o.Error = "is not a regular file"
		default:
			o.Size = fi.Size()
			o.Token = s.put(p)
			shelved++
		}
		out = append(out, o)
	}
	return out
}

func (s *Shelf) put(path string) string {
	var b [18]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	token := base64.RawURLEncoding.EncodeToString(b[:])
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prune()
	for len(s.order) >= maxShelved {
		delete(s.items, s.order[0])
		s.order = s.order[1:]
	}
	s.items[token] = entry{path: path, at: s.now()}
	s.order = append(s.order, token)
	return token
}

// prune forgets expired offers; s.mu is held.
func (s *Shelf) prune() {
	cut := s.now().Add(-TTL)
	i := 0
	for ; i < len(s.order); i++ {
		e, ok := s.items[s.order[i]]
		if ok && e.at.After(cut) {
			break
		}
		delete(s.items, s.order[i])
	}
	s.order = s.order[i:]
}

// Take hands over the path shelved under token, once.
func (s *Shelf) Take(token string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prune()
	e, ok := s.items[token]
	if !ok {
		return "", false
	}
	delete(s.items, token) // order keeps the token until it ages out
	return e.path, true
}
