// Package api is the contract between the frontend and the services: facades
// (plain structs whose methods take a context first) and the one Dispatcher
// that every transport calls. The dispatcher is the single place that
// resolves the caller, recovers panics, maps errors to kinds, logs and times
// calls, so the desktop bridge and the HTTP API cannot drift apart.
package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/auth"
)

// Caller is who is making a call. Transports resolve it per mount: the
// desktop bridge acts as the owner; a listening socket needs a session.
type Caller struct {
	UserID int64
	Admin  bool
	Owner  bool
	// Session is the hash of the session token the call came with (""
	// on the desktop mount). It names the session, for "this device" in
	// the sessions list; it is not the token.
	Session string
	// Via names the transport ("bridge", "http"), for logs.
	Via string
}

type callerKey struct{}

// WithCaller returns ctx carrying c.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the caller the dispatcher put in ctx. Facade methods
// always have one; its absence is a programming error.
func CallerFrom(ctx context.Context) Caller {
	c, ok := ctx.Value(callerKey{}).(Caller)
	if !ok {
		panic("api: no caller in context (called outside the dispatcher)")
	}
	return c
}

// Result is what a call answers with on every transport: a result or an
// error with a kind, never both.
type Result struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  *ErrorBody      `json:"error,omitempty"`
}

// ErrorBody is the public face of an error.
type ErrorBody struct {
	Kind    apperr.Kind `json:"kind"`
	Message string      `json:"message"`
}

// Method describes one callable facade method.
type Method struct {
	Name   string         // "Facade.Method"
	Params []reflect.Type // argument types after ctx
	Guard  Guard          // who may call it, checked before it runs
	fn     reflect.Value
	hasOut bool
}

// Dispatcher finds methods by name and runs them.
type Dispatcher struct {
	methods map[string]*Method
	log     *slog.Logger
	// require answers Perm guards (RegisterAll sets it; without it only
	// administrators hold a permission).
	require func(context.Context, auth.Permission) error
}

var (
	ctxType = reflect.TypeFor[context.Context]()
	errType = reflect.TypeFor[error]()
)

// NewDispatcher returns a dispatcher with no facades.
func NewDispatcher(log *slog.Logger) *Dispatcher {
	return &Dispatcher{methods: map[string]*Method{}, log: log}
}

// Register adds every exported method of facade whose first parameter is a
// context.Context and which returns error or (T, error), under
// "name.Method", each behind its guard in guards. Other exported methods
// are a mistake and make Register panic, since they would silently be
// unreachable; so does a method without a guard, or a guard without a
// method.
func (d *Dispatcher) Register(name string, facade any, guards Guards) {
	v := reflect.ValueOf(facade)
	t := v.Type()
	for g := range guards {
		if _, ok := t.MethodByName(g); !ok {
			panic(fmt.Sprintf("api: a guard for %s.%s, which %T does not have", name, g, facade))
		}
	}
	for i := 0; i < t.NumMethod(); i++ {
		m := t.Method(i)
		mt := m.Type // includes the receiver
		full := name + "." + m.Name
		guard := guards[m.Name]
		if guard.kind == guardUnset {
			panic(fmt.Sprintf("api: %s has no guard (add it to api.Table)", full))
		}
		if mt.NumIn() < 2 || mt.In(1) != ctxType {
			panic(fmt.Sprintf("api: %s must take a context.Context first", full))
		}
		var hasOut bool
		switch {
		case mt.NumOut() == 1 && mt.Out(0) == errType:
		case mt.NumOut() == 2 && mt.Out(1) == errType:
			hasOut = true
		default:
			panic(fmt.Sprintf("api: %s must return error or (T, error)", full))
		}
		var params []reflect.Type
		for j := 2; j < mt.NumIn(); j++ {
			params = append(params, mt.In(j))
		}
		if _, dup := d.methods[full]; dup {
			panic("api: duplicate method " + full)
		}
		d.methods[full] = &Method{Name: full, Params: params, Guard: guard, fn: v.Method(i), hasOut: hasOut}
	}
}

// Methods lists every registered method, sorted by name. Tests use it to
// call each one and to find every method that takes an id.
func (d *Dispatcher) Methods() []*Method {
	out := make([]*Method, 0, len(d.methods))
	for _, m := range d.methods {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Call runs method with args (a JSON array of the arguments after ctx, or
// empty for none) as caller, and returns the JSON result. It never panics:
// a panic inside a method becomes an internal error with its stack logged.
func (d *Dispatcher) Call(ctx context.Context, caller Caller, method string, args []byte) Result {
	start := time.Now()
	out, err := d.call(WithCaller(ctx, caller), method, args)
	dur := time.Since(start)
	attrs := []any{"method", method, "via", caller.Via, "user", caller.UserID, "ms", float64(dur.Microseconds()) / 1000}
	if err != nil {
		kind, msg := apperr.Public(err)
		switch kind {
		case apperr.Internal:
			d.log.Error("call failed", append(attrs, "kind", kind, "err", err)...)
		default:
			d.log.Info("call refused", append(attrs, "kind", kind, "err", err)...)
		}
		return Result{Error: &ErrorBody{Kind: kind, Message: msg}}
	}
	d.log.Debug("call", attrs...)
	return Result{Result: out}
}

func (d *Dispatcher) call(ctx context.Context, method string, args []byte) (out json.RawMessage, err error) {
	m, ok := d.methods[method]
	if !ok {
		return nil, apperr.New(apperr.NotFound, "no method %q", method)
	}
	in, err := decodeArgs(m, args)
	if err != nil {
		return nil, err
	}
	defer func() {
		if p := recover(); p != nil {
			d.log.Error("panic in call", "method", method, "panic", p, "stack", string(debug.Stack()))
			out, err = nil, apperr.New(apperr.Internal, "panic in %s", method)
		}
	}()
	require := d.require
	if require == nil {
		require = Permits{}.Require
	}
	// After decoding, as the methods' own checks came before: a refused
	// call answers as it did when each method checked for itself.
	if err := m.Guard.check(ctx, require); err != nil {
		return nil, err
	}
	ctx = context.WithValue(ctx, guardKey{}, m.Guard)
	res := m.fn.Call(append([]reflect.Value{reflect.ValueOf(ctx)}, in...))
	if e := res[len(res)-1]; !e.IsNil() {
		return nil, e.Interface().(error)
	}
	if !m.hasOut {
		return json.RawMessage("null"), nil
	}
	b, err := json.Marshal(res[0].Interface())
	if err != nil {
		return nil, fmt.Errorf("encode result of %s: %w", method, err)
	}
	return b, nil
}

func decodeArgs(m *Method, args []byte) ([]reflect.Value, error) {
	var raw []json.RawMessage
	if trimmed := bytes.TrimSpace(args); len(trimmed) > 0 && !bytes.Equal(trimmed, []byte("null")) {
		if err := json.Unmarshal(trimmed, &raw); err != nil {
			return nil, apperr.New(apperr.Invalid, "%s: arguments must be a JSON array", m.Name)
		}
	}
	// Trailing arguments may be left out; they take their zero values
	// (Chats.Messages(chatId) means the newest page).
	if len(raw) > len(m.Params) {
		return nil, apperr.New(apperr.Invalid, "%s takes %d argument%s, got %d",
			m.Name, len(m.Params), plural(len(m.Params)), len(raw))
	}
	in := make([]reflect.Value, len(m.Params))
	for i := len(raw); i < len(m.Params); i++ {
		in[i] = reflect.Zero(m.Params[i])
	}
	for i, r := range raw {
		p := reflect.New(m.Params[i])
		dec := json.NewDecoder(bytes.NewReader(r))
		dec.DisallowUnknownFields()
		if err := dec.Decode(p.Interface()); err != nil {
			return nil, apperr.New(apperr.Invalid, "%s argument %d: %s", m.Name, i+1, cleanJSONError(err))
		}
		in[i] = p.Elem()
	}
	return in, nil
}

func cleanJSONError(err error) string {
	s := err.Error()
	return strings.TrimPrefix(s, "json: ")
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
