package api

import (
	"os"
	"testing"
)

// TestAPIDocIsCurrent fails while docs/API.md's guard table differs from
// api.Table, so a stale document fails `make test` (and CI).
func TestAPIDocIsCurrent(t *testing.T) {
	b, err := os.ReadFile("../../docs/API.md")
	if err != nil {
		t.Fatal(err)
	}
	want, err := UpdateDoc(string(b))
	if err != nil {
		t.Fatalf("docs/API.md: %v", err)
	}
	if string(b) != want {
		t.Error("docs/API.md is stale: run `go run ./build/apidoc` from the repository root and commit the result")
	}
}

// TestEveryGuardIsSet fails on a zero guard in Table, which Register would
// only refuse once a dispatcher registers that facade (Desktop's in the
// desktop app).
func TestEveryGuardIsSet(t *testing.T) {
	for facade, guards := range Table {
		for name, g := range guards {
			if g.Kind() == guardUnset {
				t.Errorf("%s.%s has no guard", facade, name)
			}
		}
	}
}
