package api

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/llembas/lembas/backend/apperr"
)

type sample struct{}

type point struct {
	X int `json:"x"`
}

func (sample) Add(ctx context.Context, a, b int) (int, error) { return a + b, nil }
func (sample) Who(ctx context.Context) (int64, error)         { return CallerFrom(ctx).UserID, nil }
func (sample) Move(ctx context.Context, p point) (point, error) {
	return point{X: p.X + 1}, nil
}
func (sample) Fail(ctx context.Context) error {
	return apperr.New(apperr.Conflict, "already there")
}
func (sample) Leak(ctx context.Context) error {
	return errors.New("open /secret/path: permission denied")
}
func (sample) Boom(ctx context.Context) error {
	var m map[string]int
	//lint:ignore SA5000 the panic is the point: the dispatcher must recover it
	m["x"] = 1 // panics: assignment to entry in nil map
	return nil
}

func newTestDispatcher() *Dispatcher {
	d := NewDispatcher(slog.New(slog.DiscardHandler))
	d.Register("S", sample{})
	return d
}

func TestDispatcherCalls(t *testing.T) {
	d := newTestDispatcher()
	ctx := context.Background()
	tests := []struct {
		method, args string
		want         string
		kind         apperr.Kind
		msg          string
	}{
		{"S.Add", `[2, 3]`, `5`, "", ""},
		{"S.Who", ``, `7`, "", ""},
		{"S.Who", `[]`, `7`, "", ""},
		{"S.Move", `[{"x": 1}]`, `{"x":2}`, "", ""},
		{"S.Move", `[{"x": 1, "y": 2}]`, ``, apperr.Invalid, `unknown field "y"`},
		{"S.Add", `[1]`, `1`, "", ""},
		{"S.Add", `[1, 2, 3]`, ``, apperr.Invalid, "takes 2 arguments, got 3"},
		{"S.Add", `{"a": 1}`, ``, apperr.Invalid, "must be a JSON array"},
		{"S.Add", `["1", 2]`, ``, apperr.Invalid, "argument 1"},
		{"S.Nope", `[]`, ``, apperr.NotFound, `no method "S.Nope"`},
		{"S.Fail", `[]`, ``, apperr.Conflict, "already there"},
		{"S.Leak", `[]`, ``, apperr.Internal, "details are in its log"},
		{"S.Boom", `[]`, ``, apperr.Internal, "details are in its log"},
	}
	for _, tt := range tests {
		t.Run(tt.method+tt.args, func(t *testing.T) {
			res := d.Call(ctx, Caller{UserID: 7}, tt.method, []byte(tt.args))
			if tt.kind == "" {
				if res.Error != nil {
					t.Fatalf("error %+v", res.Error)
				}
				if string(res.Result) != tt.want {
					t.Errorf("result %s, want %s", res.Result, tt.want)
				}
				return
			}
			if res.Error == nil {
				t.Fatalf("no error, result %s", res.Result)
			}
			if res.Error.Kind != tt.kind || !strings.Contains(res.Error.Message, tt.msg) {
				t.Errorf("error %+v, want kind %s containing %q", res.Error, tt.kind, tt.msg)
			}
			if strings.Contains(res.Error.Message, "/secret/path") {
				t.Error("internal error message leaked to the caller")
			}
		})
	}
	// After a panic the dispatcher still answers.
	if res := d.Call(ctx, Caller{}, "S.Add", []byte(`[1,1]`)); string(res.Result) != "2" {
		t.Errorf("after panic: %+v", res)
	}
}

func TestRegisterRejectsMethodsWithoutContext(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Register accepted a method without a context")
		}
	}()
	NewDispatcher(slog.New(slog.DiscardHandler)).Register("B", badFacade{})
}

type badFacade struct{}

func (badFacade) NoCtx(a int) error { return nil }

func TestResultJSONShape(t *testing.T) {
	b, _ := json.Marshal(Result{Error: &ErrorBody{Kind: apperr.NotFound, Message: "gone"}})
	if string(b) != `{"error":{"kind":"not_found","message":"gone"}}` {
		t.Errorf("got %s", b)
	}
}

func TestCheckExternalURL(t *testing.T) {
	for _, ok := range []string{"https://example.org/x", "http://10.0.0.2:8080/", "mailto:frodo@example.org"} {
		if err := CheckExternalURL(ok); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"file:///etc/passwd", "javascript:alert(1)", "JaVaScRiPt:alert(1)", "smb://host/share", "https:///nohost", "mailto:", "", "/relative", "vscode://x"} {
		if err := CheckExternalURL(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// BenchmarkDispatch measures the dispatcher's own cost per call: lookup,
// argument decoding, reflection, result encoding, logging (discarded).
func BenchmarkDispatch(b *testing.B) {
	d := newTestDispatcher()
	ctx := context.Background()
	args := []byte(`[2, 3]`)
	b.ReportAllocs()
	for b.Loop() {
		if res := d.Call(ctx, Caller{UserID: 1}, "S.Add", args); res.Error != nil {
			b.Fatal(res.Error)
		}
	}
}
