package llm

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/fakellm"
)

func TestListModelsFixture(t *testing.T) {
	fake := fakellm.New(t)
	models, err := newClient(t, fake.URL(), Options{}).ListModels(bg())
	if err != nil {
		t.Fatal(err)
	}
	if len(models) != 1 {
		t.Fatalf("got %d models, want tiny-qwen35 once (it is in both lists)", len(models))
	}
	m := models[0]
	if m.ID != "tiny-qwen35" || m.OwnedBy != "llamacpp" || m.ContextLength != 16384 || len(m.Raw) == 0 {
		t.Errorf("got %+v", m)
	}
}

func TestModelShapes(t *testing.T) {
	type short struct {
		ID      string
		OwnedBy string
		Ctx     int
	}
	tests := []struct {
		name string
		body string
		want []short
	}{
		{"openai", `{"object":"list","data":[{"id":"gpt-4o","object":"model","owned_by":"openai"},{"id":"o3","owned_by":"openai"}]}`,
			[]short{{"gpt-4o", "openai", 0}, {"o3", "openai", 0}}},
		{"vllm", `{"object":"list","data":[{"id":"Qwen/Qwen3-8B","object":"model","owned_by":"vllm","max_model_len":32768}]}`,
			[]short{{"Qwen/Qwen3-8B", "vllm", 32768}}},
		{"openrouter", `{"data":[{"id":"a/b","context_length":131072},{"id":"c/d","top_provider":{"context_length":8192}}]}`,
			[]short{{"a/b", "", 131072}, {"c/d", "", 8192}}},
		{"ollama", `{"models":[{"name":"llama3:8b","model":"llama3:8b","size":1},{"name":"qwen3:4b"}]}`,
			[]short{{"llama3:8b", "", 0}, {"qwen3:4b", "", 0}}},
		{"bare array", `[{"id":"one"},"two",{"id":"one"}]`, []short{{"one", "", 0}, {"two", "", 0}}},
		{"dedupe keeps order", `{"data":[{"id":"b"},{"id":"a"},{"id":"b","owned_by":"later"}]}`, []short{{"b", "later", 0}, {"a", "", 0}}},
		{"items without id skipped", `{"data":[{"object":"model"},{"id":"x"}]}`, []short{{"x", "", 0}}},
		{"empty list", `{"data":[]}`, []short{}},
		{"odd field types", `{"data":[{"id":"x","max_model_len":"big","meta":null}]}`, []short{{"x", "", 0}}},
		{"data null beside models", `{"data":null,"models":[{"name":"m"}]}`, []short{{"m", "", 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			models, err := parseModels([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			got := []short{}
			for _, m := range models {
				got = append(got, short{m.ID, m.OwnedBy, m.ContextLength})
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestModelListFailures(t *testing.T) {
	tests := []struct {
		name  string
		reply fakellm.Reply
		words []string
	}{
		{"html page", fakellm.Reply{Status: 200, Header: http.Header{"Content-Type": {"text/html"}}, Body: "<!DOCTYPE html><html><body>Open WebUI</body></html>"}, []string{"web page", "/v1"}},
		{"data null", fakellm.Status(200, `{"object":"list","data":null}`), []string{"empty model list", "Load a model"}},
		{"object without list", fakellm.Status(200, `{"status":"ok"}`), []string{`no "data" or "models"`}},
		{"data not a list", fakellm.Status(200, `{"data":{"id":"x"}}`), []string{`"data" field that is not a list`}},
		{"no ids", fakellm.Status(200, `{"data":[{"object":"model"},{}]}`), []string{"None of the 2 entries", "id"}},
		{"not json", fakellm.Status(200, `ok then`), []string{"not valid JSON"}},
		{"scalar", fakellm.Status(200, `42`), []string{"42", "instead of a model list"}},
		{"empty body", fakellm.Reply{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}}, []string{"nothing instead of a model list"}},
		{"error object", fakellm.Status(200, `{"error":{"message":"no models loaded"}}`), []string{"no models loaded"}},
		{"huge", fakellm.Status(200, `{"data":[`+strings.Repeat(`{"id":"x"},`, (maxBody/10)+1)+`{"id":"y"}]}`), []string{"larger than 8 MiB"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := fakellm.New(t)
			fake.SetModels(tt.reply)
			_, err := newClient(t, fake.URL(), Options{}).ListModels(bg())
			checkErr(t, err, apperr.Unavailable, tt.words...)
		})
	}
}

func TestTestReportsLatency(t *testing.T) {
	fake := fakellm.New(t)
	fake.SetModels(fakellm.Fixture("models").FirstByteAfter(30 * time.Millisecond))
	res, err := newClient(t, fake.URL(), Options{}).Test(bg())
	if err != nil {
		t.Fatal(err)
	}
	if res.Count != 1 || len(res.Models) != 1 || res.Latency < 30*time.Millisecond {
		t.Errorf("got %+v", res)
	}
}

func TestProbe(t *testing.T) {
	fake := fakellm.New(t)
	fakePort := port(t, root(fake))
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html>not an LLM</html>")
	}))
	defer html.Close()
	htmlPort := port(t, html.URL)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	defer slow.Close()
	defer slow.CloseClientConnections()
	slowPort := port(t, slow.URL)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closedPort := port(t, "http://"+ln.Addr().String())
	ln.Close()

	var found []Found
	start := time.Now()
	found = Probe(context.Background(), []int{closedPort, htmlPort, fakePort, slowPort, fakePort, 0, 70000}, 0)
	// The slow port answers after 10 s: finishing well before that shows
	// the probe is bounded (a margin of seconds, so load cannot fail it).
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("Probe took %v: a silent port is not bounded by ProbeTimeout", d)
	}
	want := []Found{{Port: fakePort, BaseURL: "http://127.0.0.1:" + strconv.Itoa(fakePort) + "/v1", Server: "llama.cpp", Models: []string{"tiny-qwen35"}}}
	if !reflect.DeepEqual(found, want) {
		t.Errorf("got %+v, want %+v", found, want)
	}

	if found := Probe(context.Background(), []int{fakePort}, fakePort); len(found) != 0 {
		t.Errorf("our own port was probed: %+v", found)
	}
}

func TestGuessServer(t *testing.T) {
	tests := []struct {
		port   int
		header string
		want   string
	}{
		{11434, "", "Ollama"},
		{1234, "", "LM Studio"},
		{8080, "", "llama.cpp"},
		{8000, "uvicorn", "vLLM"},
		{9999, "llama.cpp", "llama.cpp"},
		{9999, "", "OpenAI-compatible server"},
	}
	for _, tt := range tests {
		if got := guessServer(tt.port, tt.header); got != tt.want {
			t.Errorf("guessServer(%d, %q) = %q, want %q", tt.port, tt.header, got, tt.want)
		}
	}
}

func port(t *testing.T, rawURL string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(strings.TrimPrefix(rawURL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
