//go:build !desktop

package main

import (
	"context"
	"errors"

	"github.com/llembas/lembas/backend/config"
)

// runDesktop in a build without the desktop tag explains what to do instead.
func (c *cli) runDesktop(ctx context.Context, cfg config.Config, quick bool) error {
	return &exitError{code: 2, err: errors.New("this build of LLeMbas has no desktop window (built without the \"desktop\" tag).\n" +
		"Serve it to a browser instead:  lembas --serve   (then open http://" + cfg.Addr + "/)")}
}
