package api

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/auth"
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
	d.Register("S", sample{}, Guards{"Add": SignedIn, "Who": SignedIn, "Move": SignedIn,
		"Fail": SignedIn, "Leak": SignedIn, "Boom": SignedIn})
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
	NewDispatcher(slog.New(slog.DiscardHandler)).Register("B", badFacade{}, Guards{"NoCtx": SignedIn})
}

func TestRegisterRejectsMissingOrStrayGuards(t *testing.T) {
	for name, guards := range map[string]Guards{
		"a method without a guard": {"Open": SignedIn, "Admin": AdminOnly, "Desk": DesktopOwner("x")},
		"a guard without a method": {"Open": SignedIn, "Admin": AdminOnly, "Desk": DesktopOwner("x"), "Perm": Perm("p"), "Gone": SignedIn},
		"a zero guard":             {"Open": SignedIn, "Admin": AdminOnly, "Desk": DesktopOwner("x"), "Perm": {}},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("Register accepted %s", name)
				}
			}()
			NewDispatcher(slog.New(slog.DiscardHandler)).Register("G", &guarded{}, guards)
		})
	}
}

// guarded counts the calls that reach its methods.
type guarded struct{ ran int }

func (g *guarded) Open(ctx context.Context) error        { g.ran++; return nil }
func (g *guarded) Admin(ctx context.Context) error       { g.ran++; return nil }
func (g *guarded) Desk(ctx context.Context) error        { g.ran++; return nil }
func (g *guarded) Perm(ctx context.Context, n int) error { g.ran++; return nil }

func TestDispatcherEnforcesGuards(t *testing.T) {
	d := NewDispatcher(slog.New(slog.DiscardHandler))
	d.require = func(ctx context.Context, p auth.Permission) error {
		if CallerFrom(ctx).UserID == 3 {
			return nil
		}
		return apperr.New(apperr.Forbidden, "no %s", p)
	}
	g := &guarded{}
	d.Register("G", g, Guards{"Open": SignedIn, "Admin": AdminOnly, "Desk": DesktopOwner("only the window"), "Perm": Perm("x.y")})
	member, holder := Caller{UserID: 2, Session: "s"}, Caller{UserID: 3, Session: "s"}
	admin := Caller{UserID: 1, Admin: true, Owner: true, Session: "s"}
	window := Caller{UserID: 1, Admin: true, Owner: true}
	tests := []struct {
		caller Caller
		method string
		args   string
		kind   apperr.Kind
		msg    string
	}{
		{member, "G.Open", ``, "", ""},
		{member, "G.Admin", ``, apperr.Forbidden, "only an administrator can do that"},
		{admin, "G.Admin", ``, "", ""},
		{admin, "G.Desk", ``, apperr.Forbidden, "only the window"},
		{window, "G.Desk", ``, "", ""},
		{member, "G.Perm", `[1]`, apperr.Forbidden, "no x.y"},
		{holder, "G.Perm", `[1]`, "", ""},
		// Arguments are decoded first, as when each method checked for
		// itself.
		{member, "G.Perm", `["one"]`, apperr.Invalid, "argument 1"},
	}
	for _, tt := range tests {
		before := g.ran
		res := d.Call(context.Background(), tt.caller, tt.method, []byte(tt.args))
		switch {
		case tt.kind == "" && (res.Error != nil || g.ran != before+1):
			t.Errorf("%s as %+v: %+v, ran %d times, want it to run", tt.method, tt.caller, res.Error, g.ran-before)
		case tt.kind != "" && (res.Error == nil || res.Error.Kind != tt.kind || res.Error.Message != tt.msg && !strings.Contains(res.Error.Message, tt.msg)):
			t.Errorf("%s as %+v: %+v, want %s %q", tt.method, tt.caller, res.Error, tt.kind, tt.msg)
		case tt.kind != "" && g.ran != before:
			t.Errorf("%s as %+v was refused but the method ran", tt.method, tt.caller)
		}
	}
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

type managing struct{}

func (managing) Act(ctx context.Context) (bool, error) { return manager(ctx).Admin, nil }

// TestManagerNeedsItsGuard: the admin's reach that manager grants is only
// for methods behind connections.manage; anywhere else it is an error.
func TestManagerNeedsItsGuard(t *testing.T) {
	admin := Caller{UserID: 1, Admin: true}
	for _, tt := range []struct {
		guard Guard
		kind  apperr.Kind
	}{
		{Perm(auth.ConnectionsManage), ""},
		{SignedIn, apperr.Internal},
		{AdminOnly, apperr.Internal},
		{Perm(auth.ChatCreate), apperr.Internal},
	} {
		d := NewDispatcher(slog.New(slog.DiscardHandler))
		d.Register("M", managing{}, Guards{"Act": tt.guard})
		r := d.Call(context.Background(), admin, "M.Act", nil)
		if got := apperr.Kind(""); r.Error != nil {
			got = r.Error.Kind
			if got != tt.kind {
				t.Errorf("manager behind %s: %+v, want %q", tt.guard, r.Error, tt.kind)
			}
		} else if tt.kind != "" || string(r.Result) != "true" {
			t.Errorf("manager behind %s: %s, want %q", tt.guard, r.Result, tt.kind)
		}
	}
}
