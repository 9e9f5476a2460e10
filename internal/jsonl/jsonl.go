// Package jsonl reads the lines of a JSON-lines file (a session record, a
// transcript, a ledger) whatever their length: a line is read in the
// reader's buffer-sized pieces and grown as needed, up to a bound the
// caller chooses, so that one long answer or one large file read in a
// record is read back, and a file that is not JSON lines cannot take all
// memory.
package jsonl

import (
	"bufio"
	"errors"
	"fmt"
)

// ErrTooLong marks a line longer than the bound given to ReadLine.
var ErrTooLong = errors.New("line too long")

// ReadLine returns the next line of br, its newline included, in a slice
// of its own. At the end of the input it returns what is left (a last
// line without its newline, possibly empty) with io.EOF; a line longer
// than max bytes is an error matching ErrTooLong, read no further than
// max bytes. Other read errors are returned as they are.
func ReadLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > max {
			return nil, fmt.Errorf("%w: longer than %d bytes", ErrTooLong, max)
		}
		line = append(line, chunk...) // chunk is br's buffer: copied before the next read
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}
