package library

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// checkChunks checks the properties every chunking must have: no empty
// chunk, none longer than chunkMax characters or with whitespace at its
// ends, valid UTF-8 (no rune split), and the chunks are text in order with
// only whitespace between them.
func checkChunks(t *testing.T, text string, chunks []string) {
	t.Helper()
	rest := text
	for i, c := range chunks {
		if c == "" || strings.TrimSpace(c) != c {
			t.Fatalf("chunk %d is empty or has whitespace at an end: %q", i, c)
		}
		if n := utf8.RuneCountInString(c); n > chunkMax {
			t.Fatalf("chunk %d has %d characters", i, n)
		}
		if !utf8.ValidString(c) {
			t.Fatalf("chunk %d is not valid UTF-8: a rune was split", i)
		}
		at := strings.Index(rest, c)
		if at < 0 {
			t.Fatalf("chunk %d is not the text that follows", i)
		}
		if gap := rest[:at]; strings.TrimSpace(gap) != "" {
			t.Fatalf("before chunk %d, %q is lost", i, gap)
		}
		rest = rest[at+len(c):]
	}
	if strings.TrimSpace(rest) != "" {
		t.Fatalf("the end of the text is lost: %q", rest)
	}
}

func TestChunksProperties(t *testing.T) {
	words := []string{"the", "hive", "queen", "a", "of", "wax", "honey", "Grüße", "世界", "пчела", "🐝", "naïve", "x",
		"supercalifragilisticexpialidocious", "données", "ß"}
	seps := []string{" ", " ", " ", " ", ". ", "? ", "\n", "\n\n", "\t", ", ", "", "\n \n"}
	rng := rand.New(rand.NewPCG(14, 2))
	for i := range 300 {
		var b strings.Builder
		n := rng.IntN(6000)
		for b.Len() < n {
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteString(seps[rng.IntN(len(seps))])
		}
		text := b.String()
		if i%7 == 0 {
			text = "  \n" + text + "\n\n  "
		}
		checkChunks(t, text, Chunks(text))
	}
}

func TestChunksEdges(t *testing.T) {
	for name, text := range map[string]string{
		"empty":            "",
		"blank":            " \n\t\n ",
		"short":            "One line.",
		"one long word":    strings.Repeat("a", 4000),
		"CJK without gaps": strings.Repeat("世界和平", 1000),
		"emoji":            strings.Repeat("🐝", 3001),
		"exactly max":      strings.Repeat("b", chunkMax),
		"max plus one":     strings.Repeat("b", chunkMax+1),
		"spaces only past": strings.Repeat("c", chunkMax-1) + strings.Repeat(" ", 5000) + "d",
	} {
		t.Run(name, func(t *testing.T) {
			chunks := Chunks(text)
			checkChunks(t, text, chunks)
			if strings.TrimSpace(text) == "" && len(chunks) != 0 {
				t.Errorf("%d chunks of nothing", len(chunks))
			}
		})
	}
	if got := Chunks(strings.Repeat("🐝", 3001)); len(got) != 3 || utf8.RuneCountInString(got[0]) != chunkMax {
		t.Errorf("3001 bees in %d chunks", len(got))
	}
}

// Cuts prefer paragraphs, then lines, then sentences, then words.
func TestChunksCutAtTheBestBoundary(t *testing.T) {
	para := strings.Repeat("Bees make honey from nectar and keep it in wax cells. ", 5) // 270 characters
	text := strings.Repeat(para+"\n\n", 20)
	for i, c := range Chunks(text) {
		if !strings.HasSuffix(c, "cells.") || utf8.RuneCountInString(c) < chunkMin {
			t.Errorf("paragraphs: chunk %d ends %q (%d characters)", i, c[max(0, len(c)-20):], len(c))
		}
	}
	lines := strings.Repeat("A line of a log with some words in it\n", 200)
	for i, c := range Chunks(lines)[:3] {
		if !strings.HasSuffix(c, "in it") {
			t.Errorf("lines: chunk %d ends %q", i, c[len(c)-20:])
		}
	}
	sentences := strings.Repeat("One sentence ends here. And another, with a comma, goes on", 100)
	for i, c := range Chunks(sentences)[:3] {
		if !strings.HasSuffix(c, "here.") {
			t.Errorf("sentences: chunk %d ends %q", i, c[len(c)-20:])
		}
	}
	wordsOnly := strings.Repeat("word ", 1000)
	for i, c := range Chunks(wordsOnly) {
		if !strings.HasSuffix(c, "word") || strings.IndexFunc(c, unicode.IsUpper) >= 0 {
			t.Errorf("words: chunk %d ends %q", i, c[max(0, len(c)-20):])
		}
	}
}
