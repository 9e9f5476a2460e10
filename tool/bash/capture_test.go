package bash

import (
	"strings"
	"testing"
)

func TestCapture(t *testing.T) {
	tests := []struct {
		name   string
		max    int
		writes []string
		want   string
	}{
		{"empty", 10, nil, ""},
		{"fits", 10, []string{"abc", "def"}, "abcdef"},
		{"exactly full", 10, []string{"0123456789"}, "0123456789"},
		{"one big write", 10, []string{"0123456789abcdef"}, "01234\n... [6 bytes truncated] ...\nbcdef"},
		{"many small writes", 4, strings.Split("abcdefghij", ""), "ab\n... [6 bytes truncated] ...\nij"},
		{"tail compaction", 4, []string{"ab", "c", "d", "e", "f", "g", "h", "i", "j", "k"}, "ab\n... [7 bytes truncated] ...\njk"},
		{"runes not split", 6, []string{"ééééé"}, "é\n... [6 bytes truncated] ...\né"},
		{"invalid UTF-8 replaced", 10, []string{"a\xffb"}, "a\uFFFDb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCapture(tt.max)
			total := 0
			for _, w := range tt.writes {
				n, err := c.Write([]byte(w))
				if n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v; want %d, nil", w, n, err, len(w))
				}
				total += n
			}
			if got := c.String(); got != tt.want {
				t.Errorf("String() after %q = %q; want %q", tt.writes, got, tt.want)
			}
			if c.total != int64(total) {
				t.Errorf("total = %d; want %d", c.total, total)
			}
		})
	}
}
