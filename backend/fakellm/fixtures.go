package fakellm

import (
	"embed"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Tests must pass from a clone alone, so the captures travel with the code.
//
//go:embed fixtures
var fixtureFS embed.FS

var captured = loadFixtures()

type fixtureSet struct {
	replies  map[string]Reply
	requests map[string][]byte
}

// Fixture replays the captured response fixtures/<name>.http: its status,
// headers and body, with each event of a text/event-stream body flushed
// separately. Framing headers (Content-Length, Transfer-Encoding,
// Connection, Keep-Alive) are left to net/http. It panics on an unknown
// name, listing the known ones.
func Fixture(name string) Reply {
	r, ok := captured.replies[name]
	if !ok {
		panic(fmt.Sprintf("fakellm: no fixture %q; known: %s", name, strings.Join(slices.Sorted(maps.Keys(captured.replies)), ", ")))
	}
	r.Header = r.Header.Clone()
	r.Events = slices.Clone(r.Events)
	return r
}

// FixtureRequest returns the captured request body that produced the
// fixture, for the fixtures that have one (fixtures/<name>.request.json).
// It panics if there is none.
func FixtureRequest(name string) []byte {
	b, ok := captured.requests[name]
	if !ok {
		panic(fmt.Sprintf("fakellm: no request for fixture %q; known: %s", name, strings.Join(slices.Sorted(maps.Keys(captured.requests)), ", ")))
	}
	return slices.Clone(b)
}

// framing lists headers that describe the captured connection rather than
// the response; net/http frames our own.
var framing = []string{"Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive"}

func loadFixtures() fixtureSet {
	set := fixtureSet{replies: map[string]Reply{}, requests: map[string][]byte{}}
	entries, err := fs.ReadDir(fixtureFS, "fixtures")
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		b, err := fs.ReadFile(fixtureFS, path.Join("fixtures", e.Name()))
		if err != nil {
			panic(err)
		}
		if name, ok := strings.CutSuffix(e.Name(), ".request.json"); ok {
			set.requests[name] = b
		} else if name, ok := strings.CutSuffix(e.Name(), ".http"); ok {
			set.replies[name] = parseCapture(e.Name(), string(b))
		}
	}
	return set
}

func parseCapture(file, raw string) Reply {
	bad := func(why string) { panic(fmt.Sprintf("fakellm: fixture %s: %s", file, why)) }
	head, body, ok := strings.Cut(raw, "\n\n")
	if !ok {
		bad("no blank line after the headers")
	}
	lines := strings.Split(head, "\n")
	statusLine := strings.Fields(lines[0])
	if len(statusLine) < 2 {
		bad("no status line")
	}
	code, err := strconv.Atoi(statusLine[1])
	if err != nil {
		bad("bad status line")
	}
	r := Reply{Status: code, Header: http.Header{}}
	for _, line := range lines[1:] {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			bad("bad header line " + strconv.Quote(line))
		}
		if !slices.Contains(framing, http.CanonicalHeaderKey(k)) {
			r.Header.Add(k, strings.TrimLeft(v, " "))
		}
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "text/event-stream") {
		r.Body = body
		return r
	}
	rest, ok := strings.CutSuffix(body, "\n\n")
	if !ok {
		bad("stream does not end with a blank line")
	}
	r.Events = []Event{}
	for block := range strings.SplitSeq(rest, "\n\n") {
		var e Event
		var comments, data []string
		for line := range strings.SplitSeq(block, "\n") {
			switch {
			case strings.HasPrefix(line, ":"):
				comments = append(comments, strings.TrimPrefix(strings.TrimPrefix(line, ":"), " "))
			case strings.HasPrefix(line, "event:"):
				e.Name = strings.TrimPrefix(strings.TrimPrefix(line, "event:"), " ")
			case strings.HasPrefix(line, "data:"):
				data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
			default:
				bad("unsupported stream line " + strconv.Quote(line))
			}
		}
		e.Comment = strings.Join(comments, "\n")
		e.Data = strings.Join(data, "\n")
		r.Events = append(r.Events, e)
	}
	return r
}
