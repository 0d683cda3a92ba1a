package generation

import (
	"fmt"
	"strings"

	"github.com/llembas/lembas/backend/render"
	"github.com/llembas/lembas/backend/store"
)

// Replica is a reply rebuilt from its frames the way a follower rebuilds it
// (frames.js does the same in the page): Snapshot takes a Live frame, Apply
// the frames after it. Tests use it to check what followers end with.
type Replica struct {
	Seq     int64
	Parts   []ReplicaPart
	Status  store.Status
	Error   string
	Content string
	// Ask is the card the follower shows (nil: none).
	Ask *Ask
}

// ReplicaPart is one part as a follower has it: a text part's HTML as its
// sealed region and live tail, any other part's plain text.
type ReplicaPart struct {
	Kind         store.PartKind
	Name, CallID string
	Sealed, Tail string
	Text         string
	Closed       bool
}

// HTML is what a text part shows.
func (p ReplicaPart) HTML() string { return p.Sealed + p.Tail }

// Snapshot replaces everything with a Live frame.
func (r *Replica) Snapshot(f Frame) error {
	r.Parts, r.Ask = nil, nil
	r.Seq = f.Seq - 1
	return r.Apply(f)
}

// Apply takes the frame after the last one; a frame out of order, or an
// operation on a part not opened, is an error and changes nothing after it.
func (r *Replica) Apply(f Frame) error {
	if f.Seq != r.Seq+1 {
		return fmt.Errorf("frame seq %d after %d", f.Seq, r.Seq)
	}
	if r.Status != "" && r.Status != StatusStreaming {
		return fmt.Errorf("frame %d after the final one", f.Seq)
	}
	r.Seq = f.Seq
	for _, op := range f.Parts {
		switch {
		case op.Open != "" && op.I <= len(r.Parts):
			p := ReplicaPart{Kind: op.Open, Name: op.Name, CallID: op.CallID}
			if op.I == len(r.Parts) {
				r.Parts = append(r.Parts, p)
			} else {
				r.Parts[op.I] = p
			}
		case op.Open != "" || op.I < 0 || op.I >= len(r.Parts):
			return fmt.Errorf("frame %d: op on part %d of %d", f.Seq, op.I, len(r.Parts))
		}
		p := &r.Parts[op.I]
		if p.Closed {
			return fmt.Errorf("frame %d: op on closed part %d", f.Seq, op.I)
		}
		if p.Kind == store.PartText {
			if err := applyHTML(p, op.Frame); err != nil {
				return fmt.Errorf("frame %d part %d: %w", f.Seq, op.I, err)
			}
		} else {
			p.Text += op.Text
		}
		p.Closed = op.Close
	}
	if f.Ask != nil {
		r.Ask = f.Ask.Ask
	}
	r.Status, r.Error = f.Status, f.Error
	if f.Content != "" {
		r.Content = f.Content
	}
	return nil
}

// applyHTML applies a text part's render.Frame in its documented order.
func applyHTML(p *ReplicaPart, f render.Frame) error {
	if f.Reset {
		p.Sealed, p.Tail = f.Full, ""
	}
	for _, s := range f.Seal {
		p.Sealed += s
	}
	switch f.Op {
	case render.TailReplace:
		p.Tail = f.Tail
	case render.TailAppend:
		i := strings.LastIndex(p.Tail, "</code>")
		if i < 0 {
			return fmt.Errorf("append to a tail without code: %q", p.Tail)
		}
		p.Tail = p.Tail[:i] + f.Tail + p.Tail[i:]
	}
	return nil
}

// HTML is the reply's text parts' HTML, joined.
func (r *Replica) HTML() string { return r.join(store.PartText) }

// Reasoning is the reply's reasoning parts, joined.
func (r *Replica) Reasoning() string { return r.join(store.PartReasoning) }

func (r *Replica) join(kind store.PartKind) string {
	var b strings.Builder
	for _, p := range r.Parts {
		if p.Kind != kind {
			continue
		}
		if kind == store.PartText {
			b.WriteString(p.HTML())
		} else {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}
