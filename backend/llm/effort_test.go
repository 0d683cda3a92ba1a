package llm

import (
	"testing"

	"github.com/llembas/lembas/backend/apperr"
)

func TestCheckEffort(t *testing.T) {
	s := func(v string) *string { return &v }
	for _, tc := range []struct {
		in *string
		ok bool
	}{{nil, true}, {s(""), true}, {s("low"), true}, {s("high"), true}, {s("extreme"), false}, {s("High"), false}} {
		err := CheckEffort(tc.in)
		if (err == nil) != tc.ok || (err != nil && apperr.KindOf(err) != apperr.Invalid) {
			t.Errorf("CheckEffort(%v): %v", tc.in, err)
		}
	}
}
