// Command apidoc writes the generated part of docs/API.md: every facade
// method with its guard, from api.Table. Run it from the repository root
// (go run ./build/apidoc); backend/api's TestAPIDocIsCurrent fails while
// the checked-in file differs from what it writes.
package main

import (
	"fmt"
	"os"

	"github.com/llembas/lembas/backend/api"
)

func main() {
	const path = "docs/API.md"
	b, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "apidoc:", err)
		os.Exit(1)
	}
	doc, err := api.UpdateDoc(string(b))
	if err != nil {
		fmt.Fprintf(os.Stderr, "apidoc: %s: %v\n", path, err)
		os.Exit(1)
	}
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "apidoc:", err)
		os.Exit(1)
	}
}
