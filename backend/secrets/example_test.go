package secrets_test

import (
	"fmt"

	"github.com/llembas/lembas/backend/secrets"
)

func ExampleMask() {
	fmt.Println(secrets.Mask("sk-proj-abcdefghijklmnopqrstuvwxyz"))
	fmt.Println(secrets.Mask("short-key"))
	fmt.Printf("%q\n", secrets.Mask(""))
	// Output:
	// sk-…wxyz
	// ••••••••
	// ""
}
