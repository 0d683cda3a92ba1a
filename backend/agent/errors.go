package agent

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"strings"

	"github.com/pkg/sftp"
)

// isAuthError reports a server that refused every credential offered.
func isAuthError(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "unable to authenticate") || strings.Contains(msg, "no supported methods remain")
}

// isTimeout reports a connection that got no answer in time.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// plainNetError is a network error's last, readable part ("connection
// refused", "no such host").
func plainNetError(err error) string {
	var dns *net.DNSError
	if errors.As(err, &dns) {
		if dns.IsNotFound {
			return "there is no such host"
		}
		return dns.Err
	}
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	return oneLine(msg, 200)
}

// plainFileError says why an SFTP operation failed, in words.
func plainFileError(err error) string {
	var se *sftp.StatusError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "no such file or directory"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	case errors.As(err, &se):
		if m := strings.TrimSpace(se.Error()); m != "" {
			return oneLine(strings.TrimPrefix(m, "sftp: "), 200)
		}
	}
	return plainNetError(err)
}

// oneLine folds whitespace and bounds s to n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
