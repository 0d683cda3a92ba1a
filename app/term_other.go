//go:build !(linux || darwin || freebsd || openbsd || netbsd)

package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// isTerminal cannot tell here; create-admin then wants --password-stdin.
func isTerminal(io.Reader) bool { return false }

func readSecret(r io.Reader, in *bufio.Reader, w io.Writer, prompt string) (string, error) {
	fmt.Fprint(w, prompt)
	line, err := in.ReadString('\n')
	return strings.TrimRight(line, "\r\n"), err
}
