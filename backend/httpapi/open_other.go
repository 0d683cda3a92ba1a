//go:build !unix

package httpapi

import "os"

// openRegular opens path for reading; the caller checks that it is a
// regular file.
func openRegular(path string) (*os.File, error) { return os.Open(path) }
