package llm

import "unicode/utf8"

// Estimate guesses the number of tokens in text as its characters divided
// by four, rounded up. It is an estimate for endpoints that report no
// usage: real tokenisers differ by model and language (code and non-Latin
// scripts take more tokens per character), so show it as approximate.
func Estimate(text string) int {
	return (utf8.RuneCountInString(text) + 3) / 4
}
