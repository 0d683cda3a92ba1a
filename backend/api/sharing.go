package api

import (
	"context"

	"github.com/llembas/lembas/backend/apperr"
)

// ShareStatus is whether the desktop app serves the household on the local
// network, and where.
type ShareStatus struct {
	// Available is false where sharing cannot be turned on from here (the
	// household server, or a desktop without it); Reason says why.
	Available bool   `json:"available"`
	Reason    string `json:"reason,omitempty"`
	On        bool   `json:"on"`
	// Addresses are the URLs other devices can open.
	Addresses []string `json:"addresses"`
	// NeedsPassword is set while the owner has no password to sign in with
	// from other devices: sharing asks for one first.
	NeedsPassword bool `json:"needsPassword"`
}

// Sharer starts and stops the desktop app's household server.
type Sharer interface {
	Status(ctx context.Context) ShareStatus
	Start(ctx context.Context) (ShareStatus, error)
	Stop(ctx context.Context) (ShareStatus, error)
}

// Sharing is the facade for "Share on this network" in the desktop app.
type Sharing struct{ sharer Sharer }

// NewSharing returns the Sharing facade; sharer is nil where the app is
// not the desktop app.
func NewSharing(sharer Sharer) *Sharing { return &Sharing{sharer: sharer} }

// AtTheDesktop reports whether a call comes from the desktop window itself
// (the owner on the desktop mount), not from a browser — not even the
// owner's own phone while the app is shared. What acts on the desktop
// (its window, links, notifications, sharing) answers only to it.
func AtTheDesktop(c Caller) bool { return c.Owner && c.Session == "" }

// desktopOwner refuses anyone but the owner at the desktop window: a
// browser, even the owner's own, must not switch off the server it is using.
func desktopOwner(ctx context.Context) error {
	if !AtTheDesktop(CallerFrom(ctx)) {
		return apperr.New(apperr.Forbidden, "Sharing is switched on and off in the desktop app.")
	}
	return nil
}

// Status says whether the app is shared and at which addresses.
func (s *Sharing) Status(ctx context.Context) (ShareStatus, error) {
	if s.sharer == nil {
		return ShareStatus{Reason: "Sharing is turned on from the desktop app; this is the household server already.", Addresses: []string{}}, nil
	}
	if err := desktopOwner(ctx); err != nil {
		return ShareStatus{}, err
	}
	return s.sharer.Status(ctx), nil
}

// Start serves the app on the local network (the owner signs in from other
// devices with their username and password).
func (s *Sharing) Start(ctx context.Context) (ShareStatus, error) {
	if err := s.switchable(ctx); err != nil {
		return ShareStatus{}, err
	}
	return s.sharer.Start(ctx)
}

// Stop ends sharing; other devices are signed out of nothing, but cannot
// reach the app until it is shared again.
func (s *Sharing) Stop(ctx context.Context) (ShareStatus, error) {
	if err := s.switchable(ctx); err != nil {
		return ShareStatus{}, err
	}
	return s.sharer.Stop(ctx)
}

// switchable refuses switching sharing where there is no sharer, and to
// anyone but the owner at the desktop window.
func (s *Sharing) switchable(ctx context.Context) error {
	if s.sharer == nil {
		return apperr.New(apperr.Unavailable, "Sharing is only available in the desktop app.")
	}
	return desktopOwner(ctx)
}
