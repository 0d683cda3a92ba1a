package llm

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ProbeTimeout bounds the probe of one port.
const ProbeTimeout = 1500 * time.Millisecond

// Found is a local server that answered Probe with a model list.
type Found struct {
	Port    int
	BaseURL string // http://127.0.0.1:PORT/v1
	// Server is a guess at the software, from its Server header or its
	// usual port: "Ollama", "LM Studio", "llama.cpp", "vLLM", or
	// "OpenAI-compatible server".
	Server string
	Models []string
}

// Probe looks for OpenAI-compatible servers on this computer, for the first
// run: it asks http://127.0.0.1:PORT/v1/models on each port in parallel,
// each within ProbeTimeout, skipping self (our own port, which would answer
// with something else). It returns the servers that answered with a model
// list, in the order of ports. It only ever reaches loopback: there is no
// host to pass, and no proxy is used.
func Probe(ctx context.Context, ports []int, self int) []Found {
	tr := &http.Transport{
		Proxy:             nil,
		DialContext:       (&net.Dialer{Timeout: ProbeTimeout}).DialContext,
		DisableKeepAlives: true,
	}
	defer tr.CloseIdleConnections()
	hc := &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	results := make([]*Found, len(ports))
	seen := map[int]bool{}
	var wg sync.WaitGroup
	for i, port := range ports {
		if port <= 0 || port > 65535 || port == self || seen[port] {
			continue
		}
		seen[port] = true
		wg.Go(func() { results[i] = probe(ctx, hc, port) })
	}
	wg.Wait()
	var found []Found
	for _, f := range results {
		if f != nil {
			found = append(found, *f)
		}
	}
	return found
}

func probe(ctx context.Context, hc *http.Client, port int) *Found {
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	base := "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) + "/v1"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/models", nil)
	if err != nil {
		return nil
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", DefaultUserAgent)
	resp, err := hc.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil
	}
	models, err := parseModels(raw)
	if err != nil {
		return nil
	}
	f := &Found{Port: port, BaseURL: base, Server: guessServer(port, resp.Header.Get("Server"))}
	for _, m := range models {
		f.Models = append(f.Models, m.ID)
	}
	return f
}

func guessServer(port int, header string) string {
	if strings.Contains(strings.ToLower(header), "llama.cpp") {
		return "llama.cpp"
	}
	switch port {
	case 11434:
		return "Ollama"
	case 1234:
		return "LM Studio"
	case 8080:
		return "llama.cpp"
	case 8000:
		return "vLLM"
	}
	return "OpenAI-compatible server"
}
