package llm

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// MaxEventSize bounds one line, and the data of one event, of a stream.
// Real chunks are a few hundred bytes; 4 MiB leaves room for a large tool
// call while keeping a stream that never sends a newline from growing
// memory without bound.
const MaxEventSize = 4 << 20

// Event is one server-sent event.
type Event struct {
	// Name is the "event:" field, empty for the default "message".
	Name string
	// Data is the "data:" lines joined with "\n". The chat terminator
	// "[DONE]" is passed on like any other data.
	Data string
	// ID is the last "id:" field seen, as the SSE rules say it persists.
	ID string
}

// ParseSSE reads a text/event-stream from r and calls fn for each event
// that has data, in order, as soon as its terminating blank line arrives.
// It accepts LF and CRLF line ends, lines split across reads, several data
// lines per event, comments (": keep-alive"), event, id and retry fields,
// and a last event without a trailing blank line. A line or event longer
// than MaxEventSize stops it with ErrLineTooLong. It returns nil at the end
// of r, fn's error as is, or r's read error.
func ParseSSE(r io.Reader, fn func(Event) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var (
		data    []byte
		hasData bool
		name    string
		id      string
		long    []byte // a line longer than br's buffer, reassembled
	)
	dispatch := func() error {
		if !hasData {
			name = ""
			return nil
		}
		ev := Event{Name: name, Data: string(data), ID: id}
		data, hasData, name = data[:0], false, ""
		return fn(ev)
	}
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				if len(long)+len(line) > MaxEventSize {
					return ErrLineTooLong
				}
				long = append(long, line...)
			}
			line = long
		}
		if len(line) > 0 {
			line = bytes.TrimSuffix(line, []byte("\n"))
			line = bytes.TrimSuffix(line, []byte("\r"))
			switch {
			case len(line) == 0:
				if ferr := dispatch(); ferr != nil {
					return ferr
				}
			case line[0] == ':':
				// A comment: only a sign of life.
			default:
				field, value, found := bytes.Cut(line, []byte(":"))
				if found && len(value) > 0 && value[0] == ' ' {
					value = value[1:]
				}
				switch string(field) {
				case "data":
					if len(data)+len(value)+1 > MaxEventSize {
						return ErrLineTooLong
					}
					if hasData {
						data = append(data, '\n')
					}
					data = append(data, value...)
					hasData = true
				case "event":
					name = string(value)
				case "id":
					if !bytes.ContainsRune(value, 0) {
						id = string(value)
					}
				}
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return dispatch()
			}
			return err
		}
	}
}
