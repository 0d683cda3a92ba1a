// Command devllm runs the scripted fake endpoint (backend/fakellm) as a
// standalone OpenAI-compatible server, for trying the app without a model:
//
//	go run ./build/devllm            # prints its base URL
//
// Add that URL as a connection. Every reply streams a sample answer with
// reasoning, a list, a code block and math, slowly enough to watch (and
// stop). It listens on loopback only.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/fakellm"
)

// tb satisfies testing.TB for fakellm.New outside a test.
type tb struct {
	testing.TB
	cleanups []func()
}

func (t *tb) Helper()                   {}
func (t *tb) Cleanup(f func())          { t.cleanups = append(t.cleanups, f) }
func (t *tb) Fatalf(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...); os.Exit(1) }
func (t *tb) Logf(f string, a ...any)   { fmt.Fprintf(os.Stderr, f+"\n", a...) }

const sample = `Here is a short answer with the usual parts.

1. A list item with **bold** text
2. Another with ` + "`inline code`" + `

` + "```go\nfunc main() {\n\tfmt.Println(\"lembas\")\n}\n```" + `

The area of a circle is $\pi r^2$, and

$$\int_0^1 x^2\,dx = \tfrac{1}{3}$$

| Bread | Days |
|---|---|
| lembas | many |
`

// newServer starts the fake with the sample reply. It records no
// requests: fakellm's log is for tests, and here it would keep every
// request (a long chat's whole history each time) until the machine ran
// out of memory.
func newServer(t testing.TB, every time.Duration) *fakellm.Server {
	srv := fakellm.New(t)
	srv.KeepRequests(0)
	var pieces []string
	for i := 0; i < len(sample); i += 6 {
		pieces = append(pieces, sample[i:min(i+6, len(sample))])
	}
	srv.SetDefault(fakellm.NewStream().Reasoning("The reader wants ", "a sample ", "answer.").Content(pieces...).Reply().Every(every))
	return srv
}

func main() {
	every := flag.Duration("every", 30*time.Millisecond, "delay between streamed chunks")
	flag.Parse()
	t := &tb{}
	srv := newServer(t, *every)
	fmt.Println(srv.URL())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	<-sig
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
}
