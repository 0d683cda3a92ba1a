//go:build unix

package httpapi

import (
	"os"
	"syscall"
)

// openRegular opens path for reading without blocking: a FIFO put in a
// dropped file's place would otherwise hold the open until a writer came.
// The caller still checks that what it opened is a regular file.
func openRegular(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
