package customtools

import (
	"runtime"
	"strings"
	"testing"
)

// An answer of arrays nested thousands deep is valid JSON that json.Indent
// would grow to hundreds of megabytes (every element on a line thousands
// of spaces deep). It is kept as it came; ordinary JSON is still indented.
// Measured as bytes allocated (TotalAlloc counts every allocation,
// whenever the collector runs).
func TestDeepJSONIsNotIndented(t *testing.T) {
	s := New(nil, nil, nil, Options{MaxBytes: 64 << 10})
	const depth = 5000
	body := strings.Repeat("[", depth) + strings.TrimSuffix(strings.Repeat("1,", (64<<10-2*depth)/2-10), ",") + strings.Repeat("]", depth)
	if len(body) > 64<<10 {
		t.Fatalf("the body is %d bytes, over the limit", len(body))
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	text, _ := s.text([]byte(body), "application/json", false)
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 16<<20 {
		t.Errorf("reading a %d-byte answer allocated %d MB", len(body), got>>20)
	}
	if !strings.HasPrefix(text, "[[[") {
		t.Errorf("the answer's text starts %q", text[:20])
	}
	if got, _ := s.text([]byte(`{"a":[1,2]}`), "application/json", false); got != "{\n  \"a\": [\n    1,\n    2\n  ]\n}" {
		t.Errorf("ordinary JSON = %q, want it indented", got)
	}
}
