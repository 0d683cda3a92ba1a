package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The dev server answers without keeping what it was asked: under a long
// chat its request log once reached 23 GB.
func TestDevServerKeepsNoRequests(t *testing.T) {
	srv := newServer(t, 0)
	for range 3 {
		resp, err := http.Post(srv.URL()+"/chat/completions", "application/json",
			strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"`+strings.Repeat("x", 1<<16)+`"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := srv.WaitRequests(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("the dev server kept %d requests", n)
	}
}
