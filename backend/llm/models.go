package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"time"

	"github.com/llembas/lembas/backend/apperr"
)

// Model is one model an endpoint offers.
type Model struct {
	ID      string `json:"id"`
	OwnedBy string `json:"owned_by,omitempty"`
	// ContextLength is the context size in tokens, 0 when the endpoint
	// does not say.
	ContextLength int `json:"context_length,omitempty"`
	// Raw is the entry as the endpoint sent it.
	Raw json.RawMessage `json:"raw,omitempty"`
}

// TestResult is what a connection test found.
type TestResult struct {
	// Latency is the time the model list took, connection included.
	Latency time.Duration
	Count   int
	Models  []Model
}

// ListModels asks the endpoint for its models (GET {base}/models).
func (c *Client) ListModels(ctx context.Context) (_ []Model, err error) {
	defer func() { err = c.scrub(err) }()
	wd := newWatchdog(ctx, phaseList, min(listTimeout, c.opt.FirstTokenTimeout))
	defer wd.stop()
	req, err := c.newRequest(wd.ctx, http.MethodGet, "/models", nil, "application/json")
	if err != nil {
		return nil, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, wd.failure(ctx, err, c.networkError)
	}
	defer resp.Body.Close()
	rd := &activityReader{r: resp.Body, w: wd}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		raw, rerr := io.ReadAll(io.LimitReader(rd, maxErrorBody))
		if rerr != nil && len(raw) == 0 {
			return nil, wd.failure(ctx, rerr, c.networkError)
		}
		return nil, c.statusError(resp, raw, c.shown+"/models", "")
	}
	raw, err := io.ReadAll(io.LimitReader(rd, maxBody+1))
	if err != nil {
		return nil, wd.failure(ctx, err, c.networkError)
	}
	if len(raw) > maxBody {
		return nil, apperr.New(apperr.Unavailable, "The endpoint's model list is larger than %d MiB. Check the base URL.", maxBody>>20)
	}
	models, err := parseModels(raw)
	if err != nil {
		// The quoted start of a body that is not a list may hold what the
		// endpoint echoed of our request: parse again, hidden, to quote.
		// One that parses only once hidden is refused all the same.
		if _, err = parseModels([]byte(c.redact.Redact(string(raw)))); err == nil {
			err = apperr.New(apperr.Unavailable, "The endpoint's model list is not valid JSON. Check that the base URL points at an OpenAI-compatible API.")
		}
		return nil, err
	}
	return models, nil
}

// Test checks the connection by listing the models, and reports how long
// that took. Its errors say in plain words what is wrong: the URL, the name,
// nothing listening, the certificate, the key, the path, or a timeout.
func (c *Client) Test(ctx context.Context) (TestResult, error) {
	start := time.Now()
	models, err := c.ListModels(ctx)
	if err != nil {
		return TestResult{}, err
	}
	return TestResult{Latency: time.Since(start), Count: len(models), Models: models}, nil
}

// parseModels reads the model-list shapes real servers send: OpenAI's
// {"data":[…]}, llama.cpp's "data" beside an Ollama-style "models",
// Ollama's {"models":[{"name":…}]}, or a bare array of objects or ids. The
// order is kept and ids are deduplicated, the first entry winning but
// gaining a context length or owner a later duplicate knows.
func parseModels(raw []byte) ([]Model, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		return nil, apperr.New(apperr.Unavailable, "The endpoint answered with nothing instead of a model list. Check the base URL: most servers expect it to end in /v1.")
	}
	if looksLikeHTML(string(trimmed)) || trimmed[0] == '<' {
		return nil, apperr.New(apperr.Unavailable, "The endpoint answered with a web page instead of a model list. Check the base URL: most servers expect it to end in /v1.")
	}
	var lists [][]json.RawMessage
	switch trimmed[0] {
	case '[':
		var items []json.RawMessage
		if err := json.Unmarshal(trimmed, &items); err != nil {
			return nil, notJSON(err, trimmed)
		}
		lists = append(lists, items)
	case '{':
		var top map[string]json.RawMessage
		if err := json.Unmarshal(trimmed, &top); err != nil {
			return nil, notJSON(err, trimmed)
		}
		if e, ok := top["error"]; ok && string(e) != "null" {
			ee := parseEndpointError(http.StatusOK, trimmed)
			return nil, apperr.Wrap(apperr.Unavailable, ee, "The endpoint answered with an error instead of a model list: %s.", ee.Message)
		}
		found := false
		for _, key := range []string{"data", "models"} {
			v, ok := top[key]
			if !ok || string(v) == "null" {
				continue
			}
			var items []json.RawMessage
			if err := json.Unmarshal(v, &items); err != nil {
				return nil, apperr.Wrap(apperr.Unavailable, err, "The endpoint's model list has a %q field that is not a list. Check the base URL.", key)
			}
			lists = append(lists, items)
			found = true
		}
		if !found {
			if v, ok := top["data"]; ok && string(v) == "null" {
				return nil, apperr.New(apperr.Unavailable, "The endpoint sent an empty model list (\"data\" is null). Load a model on the server, then try again.")
			}
			return nil, apperr.New(apperr.Unavailable, "The endpoint's answer has no model list (no \"data\" or \"models\" field). Check the base URL: most servers expect it to end in /v1.")
		}
	default:
		if json.Valid(trimmed) {
			return nil, apperr.New(apperr.Unavailable, "The endpoint answered with %s instead of a model list. Check the base URL.", snippet(string(trimmed)))
		}
		return nil, notJSON(nil, trimmed)
	}

	models := []Model{}
	seen := map[string]int{}
	entries := 0
	for _, items := range lists {
		for _, item := range items {
			entries++
			m, ok := parseModel(item)
			if !ok {
				continue
			}
			if i, dup := seen[m.ID]; dup {
				if models[i].ContextLength == 0 {
					models[i].ContextLength = m.ContextLength
				}
				if models[i].OwnedBy == "" {
					models[i].OwnedBy = m.OwnedBy
				}
				continue
			}
			seen[m.ID] = len(models)
			models = append(models, m)
		}
	}
	if entries > 0 && len(models) == 0 {
		return nil, apperr.New(apperr.Unavailable, "None of the %d entries in the endpoint's model list has an id. The server may not be OpenAI-compatible.", entries)
	}
	return models, nil
}

func notJSON(err error, body []byte) error {
	return apperr.Wrap(apperr.Unavailable, err, "The endpoint's model list is not valid JSON (%s). Check the base URL.", snippet(string(body)))
}

// modelEntry holds the fields of a model entry that any server uses.
type modelEntry struct {
	ID               string `json:"id"`
	Name             string `json:"name"`
	Model            string `json:"model"`
	OwnedBy          string `json:"owned_by"`
	MaxModelLen      int    `json:"max_model_len"`      // vLLM
	ContextLength    int    `json:"context_length"`     // OpenRouter
	MaxContextLength int    `json:"max_context_length"` // LM Studio
	ContextWindow    int    `json:"context_window"`     // Groq and others
	Meta             struct {
		NCtx int `json:"n_ctx"` // llama.cpp
	} `json:"meta"`
	TopProvider struct {
		ContextLength int `json:"context_length"` // OpenRouter
	} `json:"top_provider"`
}

func parseModel(raw json.RawMessage) (Model, bool) {
	var id string
	if json.Unmarshal(raw, &id) == nil {
		return Model{ID: id, Raw: raw}, id != ""
	}
	var e modelEntry
	if json.Unmarshal(raw, &e) != nil {
		// A field of an unexpected type: retry with the id alone.
		var bare struct {
			ID, Name, Model string
		}
		if json.Unmarshal(raw, &bare) != nil {
			return Model{}, false
		}
		e = modelEntry{ID: bare.ID, Name: bare.Name, Model: bare.Model}
	}
	m := Model{ID: e.ID, OwnedBy: e.OwnedBy, Raw: raw}
	if m.ID == "" {
		m.ID = e.Name
	}
	if m.ID == "" {
		m.ID = e.Model
	}
	for _, n := range []int{e.Meta.NCtx, e.MaxModelLen, e.ContextLength, e.TopProvider.ContextLength, e.MaxContextLength, e.ContextWindow} {
		if n > 0 {
			m.ContextLength = n
			break
		}
	}
	return m, m.ID != ""
}
