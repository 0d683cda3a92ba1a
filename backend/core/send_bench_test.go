package core

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/chat"
	"github.com/llembas/lembas/backend/connections"
	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

const (
	// sendCallsPerOp is how many timed sends one benchmark operation
	// makes, so that even a single operation gives 200 samples.
	sendCallsPerOp = 200
	// sendsPerChat is how many timed sends go into one chat before the
	// next starts: every chat the benchmark sends to has a short history,
	// so the figure does not grow with b.N.
	sendsPerChat = 10
)

// BenchmarkSendCall measures what Chats.Send itself costs on an existing
// chat with no attachments: the dispatcher call as the owner, against a
// real SQLite file, up to the moment it returns (the reply then streams in
// the background). Between sends the reply is waited for, untimed, so no
// send is refused for a reply still running.
//
// p50_ms and p99_ms are over every send measured (the "samples" column
// says how many); ns/op is their mean.
func BenchmarkSendCall(b *testing.B) {
	c := openBench(b)

	ep := fakellm.New(b)
	ep.KeepRequests(0)
	owner := ids.UserID(c.Owner.ID)
	if _, err := c.Connections.Create(context.Background(), store.Actor{User: owner, Admin: true},
		connections.Input{Name: "bench", BaseURL: ep.URL()}); err != nil {
		b.Fatal(err)
	}
	models, _, err := c.DB.ListModels(context.Background(), owner, store.ModelFilter{})
	if err != nil || len(models) == 0 {
		b.Fatalf("no models: %v", err)
	}
	caller := c.OwnerCaller()

	// send calls Chats.Send through the dispatcher, waits for its reply to
	// end, and returns how long the call took.
	send := func(in chat.SendInput) (ids.ChatID, time.Duration) {
		args, _ := json.Marshal([]any{in})
		start := time.Now()
		res := c.Dispatcher.Call(context.Background(), caller, "Chats.Send", args)
		took := time.Since(start)
		if res.Error != nil {
			b.Fatalf("Chats.Send: %s: %s", res.Error.Kind, res.Error.Message)
		}
		var turn struct {
			Chat struct{ ID ids.ChatID }
		}
		if err := json.Unmarshal(res.Result, &turn); err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := c.Gen.Wait(ctx, turn.Chat.ID); err != nil {
			b.Fatal(err)
		}
		return turn.Chat.ID, took
	}
	// newChat starts a chat (untimed) and lets its automatic title finish.
	newChat := func() ids.ChatID {
		id, _ := send(chat.SendInput{ModelID: models[0].ID, Content: "Hello there"})
		c.Chat.Wait()
		return id
	}

	// Warm up: pooled connections, prepared statements, the client cache.
	for range 2 {
		id := newChat()
		for range sendsPerChat {
			send(chat.SendInput{ChatID: id, Content: "And then?"})
		}
	}

	var samples []time.Duration
	for b.Loop() {
		var id ids.ChatID
		for i := range sendCallsPerOp {
			if i%sendsPerChat == 0 {
				id = newChat()
			}
			_, took := send(chat.SendInput{ChatID: id, Content: "And then?"})
			samples = append(samples, took)
		}
	}
	slices.Sort(samples)
	ms := func(q float64) float64 {
		i := int(math.Ceil(q*float64(len(samples)))) - 1
		return float64(samples[max(i, 0)]) / float64(time.Millisecond)
	}
	var sum time.Duration
	for _, d := range samples {
		sum += d
	}
	b.ReportMetric(float64(sum.Nanoseconds())/float64(len(samples)), "ns/op")
	b.ReportMetric(ms(0.50), "p50_ms")
	b.ReportMetric(ms(0.99), "p99_ms")
	b.ReportMetric(float64(len(samples)), "samples")
}
