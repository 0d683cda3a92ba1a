package harness

import (
	"context"
	"fmt"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Click clicks the first visible node that sel matches with a real mouse
// event at its centre, as chromedp.Click does, but only once the click
// would land on it: the node is scrolled to the middle of the view, its
// box must stay put for two checks 40 ms apart, and the point must hit the
// node (or its label) rather than whatever now covers it.
//
// chromedp.Click measures the node and then presses the mouse at that
// point. When the page moves between the two, because a list above it
// finished loading or a dialog was still sliding in, the press lands on
// whatever is there now. That made tests fail on slower machines with
// nothing wrong in the app. The node is looked up again on each try, so a
// re-render that replaces it is followed too.
func Click[S chromedp.Selectable](sel S, opts ...chromedp.QueryOption) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		why := ""
		for {
			nodes, err := chromedp.Nodes(sel, append(opts, chromedp.NodeVisible)...)(ctx, t)
			if err != nil {
				return clickErr(sel, why, err)
			}
			if len(nodes) == 0 {
				return clickErr(sel, why, fmt.Errorf("no node matches"))
			}
			at, err := clickPoint(ctx, t, nodes[0])
			if err != nil {
				return clickErr(sel, why, err)
			}
			if at.OK {
				_, err := chromedp.MouseClickXY(at.X, at.Y)(ctx, t)
				return err
			}
			why = at.Why
			select {
			case <-ctx.Done():
				return clickErr(sel, why, ctx.Err())
			case <-time.After(50 * time.Millisecond):
			}
		}
	})
}

func clickErr(sel any, why string, err error) error {
	if why != "" {
		return fmt.Errorf("click %v: %w (last seen: %s)", sel, err, why)
	}
	return fmt.Errorf("click %v: %w", sel, err)
}

type point struct {
	OK  bool    `json:"ok"`
	X   float64 `json:"x"`
	Y   float64 `json:"y"`
	Why string  `json:"why"`
}

// settle runs in the page with the node as this.
const settle = `async function () {
  this.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
  const pause = () => new Promise((r) => setTimeout(r, 40));
  await pause();
  const a = this.getBoundingClientRect();
  await pause();
  const b = this.getBoundingClientRect();
  if (!this.isConnected) return { ok: false, why: 'the node left the page' };
  if (b.width === 0 || b.height === 0) return { ok: false, why: 'the node has no size' };
  if (a.x !== b.x || a.y !== b.y || a.width !== b.width || a.height !== b.height) {
    return { ok: false, why: 'the node was moving' };
  }
  const x = b.x + b.width / 2, y = b.y + b.height / 2;
  const hit = document.elementFromPoint(x, y);
  const label = hit && hit.closest && hit.closest('label');
  if (hit && (hit === this || this.contains(hit) || (label && label.control === this))) {
    return { ok: true, x, y };
  }
  const name = hit ? hit.tagName.toLowerCase() + (hit.id ? '#' + hit.id : '') +
    (typeof hit.className === 'string' && hit.className ? '.' + hit.className.trim().split(/\s+/).join('.') : '') : 'nothing';
  return { ok: false, why: 'the centre is covered by ' + name };
}`

func clickPoint(ctx context.Context, t *chromedp.Target, n *chromedp.Node) (point, error) {
	r, err := cdp.Call(ctx, t, dom.ResolveNode, dom.ResolveNodeParams{NodeID: n.NodeID})
	if err != nil {
		return point{}, err
	}
	defer cdp.Call(ctx, t, runtime.ReleaseObject, runtime.ReleaseObjectParams{ObjectID: r.Object.ObjectID})
	return chromedp.CallFunctionOn[point](settle, func(p *runtime.CallFunctionOnParams) {
		p.ObjectID = r.Object.ObjectID
		p.AwaitPromise = ptrTrue()
	})(ctx, t)
}

func ptrTrue() *bool { b := true; return &b }
