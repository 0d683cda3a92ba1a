// Command lembas is LLeMbas: a desktop chat client for OpenAI-compatible LLM
// endpoints, and the same app served to browsers with --serve.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := newCLI(os.Stdout, os.Stderr, os.LookupEnv).run(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}
