package llm

import "strings"

const (
	openThink  = "<think>"
	closeThink = "</think>"
)

type thinkState int

const (
	thinkStart      thinkState = iota // nothing decisive seen yet
	thinkReasonLead                   // inside <think>, skipping leading whitespace
	thinkReason                       // inside <think>
	thinkAnswerLead                   // after </think>, skipping leading whitespace
	thinkAnswer                       // the answer; tags are text from here on
)

// ThinkSplitter separates inline reasoning from the answer in a streamed
// reply, for servers that send it as <think>…</think> in the content
// (Ollama and servers without a reasoning parser).
//
// It follows Ollama's rule: only a <think> at the very start of the answer,
// after optional whitespace, opens reasoning, and everything after the
// matching </think> is answer, so a <think> later in the text (a model
// explaining the tag, say) is passed through as content. Whitespace right
// after either tag is dropped. Tags may arrive split at any byte; a partial
// tag is held back until it is decided, never emitted as content, so
// feeding a text in any chunks gives the same output as feeding it whole.
// A reply that starts with </think> alone (a template that opened the tag
// in the prompt) is not recognised; the tag stays in the content.
//
// The zero value is ready to use; one splitter serves one reply.
type ThinkSplitter struct {
	state thinkState
	held  string // undecided text: leading whitespace or a partial tag
}

// Feed takes the next piece of content and returns the parts of it now
// known to be answer and reasoning.
func (s *ThinkSplitter) Feed(piece string) (content, reasoning string) {
	if piece == "" {
		return "", ""
	}
	text := s.held + piece
	s.held = ""
	var c, r strings.Builder
	for text != "" {
		switch s.state {
		case thinkStart:
			rest := strings.TrimLeft(text, " \t\r\n")
			switch {
			case rest == "" || strings.HasPrefix(openThink, rest):
				s.held = text // only whitespace, or a tag in the making
				return c.String(), r.String()
			case strings.HasPrefix(rest, openThink):
				text = rest[len(openThink):]
				s.state = thinkReasonLead
			default:
				s.state = thinkAnswer
			}
		case thinkReasonLead, thinkAnswerLead:
			text = strings.TrimLeft(text, " \t\r\n")
			if text == "" {
				return c.String(), r.String()
			}
			s.state++ // to thinkReason or thinkAnswer
		case thinkReason:
			if i := strings.Index(text, closeThink); i >= 0 {
				r.WriteString(text[:i])
				text = text[i+len(closeThink):]
				s.state = thinkAnswerLead
				continue
			}
			keep := partialSuffix(text, closeThink)
			r.WriteString(text[:len(text)-keep])
			s.held = text[len(text)-keep:]
			return c.String(), r.String()
		case thinkAnswer:
			c.WriteString(text)
			text = ""
		}
	}
	return c.String(), r.String()
}

// Flush ends the reply and returns what was held back: undecided text at
// the start is content, a partial closing tag inside unfinished reasoning
// is reasoning.
func (s *ThinkSplitter) Flush() (content, reasoning string) {
	held := s.held
	s.held = ""
	switch s.state {
	case thinkStart:
		s.state = thinkAnswer
		return held, ""
	case thinkReason:
		return "", held
	}
	return "", ""
}

// partialSuffix returns the length of the longest suffix of s that is a
// proper prefix of tag.
func partialSuffix(s, tag string) int {
	for n := min(len(s), len(tag)-1); n > 0; n-- {
		if strings.HasSuffix(s, tag[:n]) {
			return n
		}
	}
	return 0
}
