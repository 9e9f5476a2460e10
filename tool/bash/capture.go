package bash

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// capture keeps the head and the tail of a stream: the first headMax bytes
// and the last tailMax bytes, counting all of them. It is not safe for
// concurrent use.
type capture struct {
	headMax, tailMax int
	head             []byte
	tail             []byte // the last bytes after head; may hold up to 2*tailMax before compaction
	total            int64
}

// newCapture returns a capture that keeps max bytes in all, half at each
// end.
func newCapture(max int) *capture {
	h := max / 2
	return &capture{headMax: h, tailMax: max - h}
}

// Write implements io.Writer; it never fails.
func (c *capture) Write(p []byte) (int, error) {
	n := len(p)
	c.total += int64(n)
	if room := c.headMax - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	if len(p) >= c.tailMax {
		c.tail = append(c.tail[:0], p[len(p)-c.tailMax:]...)
		return n, nil
	}
	c.tail = append(c.tail, p...)
	if len(c.tail) > 2*c.tailMax {
		c.tail = append(c.tail[:0], c.tail[len(c.tail)-c.tailMax:]...)
	}
	return n, nil
}

// String returns the output: whole if it fit, else its head, a note
// "... [N bytes truncated] ..." and its tail, cut at UTF-8 boundaries.
// Invalid UTF-8 is replaced by U+FFFD.
func (c *capture) String() string {
	tail := c.tail
	if len(tail) > c.tailMax {
		tail = tail[len(tail)-c.tailMax:]
	}
	dropped := c.total - int64(len(c.head)) - int64(len(tail))
	if dropped == 0 {
		return strings.ToValidUTF8(string(c.head)+string(tail), "\uFFFD")
	}
	head := c.head
	// Do not split a rune at either cut.
	for i := 1; i < utf8.UTFMax && i <= len(head); i++ {
		if utf8.RuneStart(head[len(head)-i]) {
			if !utf8.FullRune(head[len(head)-i:]) {
				head = head[:len(head)-i]
			}
			break
		}
	}
	for i := 0; i < utf8.UTFMax-1 && len(tail) > 0 && !utf8.RuneStart(tail[0]); i++ {
		tail = tail[1:]
	}
	dropped = c.total - int64(len(head)) - int64(len(tail))
	return strings.ToValidUTF8(fmt.Sprintf("%s\n... [%d bytes truncated] ...\n%s", head, dropped, tail), "\uFFFD")
}
