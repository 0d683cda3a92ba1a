package fakellm_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/llembas/lembas/backend/fakellm"
)

// exampleT stands in for the *testing.T a real test passes to New, since
// examples get none.
type exampleT struct {
	testing.TB
	cleanups []func()
}

func (t *exampleT) Helper()          {}
func (t *exampleT) Cleanup(f func()) { t.cleanups = append(t.cleanups, f) }

func Example() {
	t := &exampleT{}
	defer func() {
		for _, f := range slices.Backward(t.cleanups) {
			f()
		}
	}()

	llm := fakellm.New(t)
	llm.Enqueue(
		fakellm.NewStream().Reasoning("The user greets.").Content("Hello", ", Frodo!").Reply(),
		fakellm.Status(http.StatusTooManyRequests, ""),
	)

	// The code under test would be pointed at llm.URL().
	resp, err := http.Post(llm.URL()+"/chat/completions", "application/json",
		strings.NewReader(`{"model":"tiny-qwen35","stream":true,"messages":[{"role":"user","content":"Hi"}]}`))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var answer string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var chunk struct {
			Choices []struct {
				Delta struct{ Content string }
			}
		}
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			panic(err)
		}
		for _, c := range chunk.Choices {
			answer += c.Delta.Content
		}
	}
	fmt.Println(answer)

	resp2, err := http.Post(llm.URL()+"/chat/completions", "application/json", strings.NewReader(`{}`))
	if err != nil {
		panic(err)
	}
	resp2.Body.Close()
	fmt.Println(resp2.StatusCode, "retry after", resp2.Header.Get("Retry-After"))

	req := llm.Requests()[0]
	fmt.Println(req.Path, req.JSON["model"])
	// Output:
	// Hello, Frodo!
	// 429 retry after 1
	// /v1/chat/completions tiny-qwen35
}
