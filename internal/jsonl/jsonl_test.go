package jsonl

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// TestReadLineAnyLength reads lines far longer than the reader's buffer,
// each whole and unchanged, then a torn last line with io.EOF.
func TestReadLineAnyLength(t *testing.T) {
	var in bytes.Buffer
	var want []string
	for i, n := range []int{0, 1, 15, 16, 17, 4095, 6 << 10, 1 << 20} {
		l := strings.Repeat(string(rune('a'+i)), n) + "\n"
		want = append(want, l)
		in.WriteString(l)
	}
	in.WriteString(`{"torn`)
	br := bufio.NewReaderSize(&in, 16)
	for i, w := range want {
		got, err := ReadLine(br, 2<<20)
		if err != nil || string(got) != w {
			t.Fatalf("line %d: %d bytes, %v; want %d bytes", i+1, len(got), err, len(w))
		}
	}
	got, err := ReadLine(br, 2<<20)
	if err != io.EOF || string(got) != `{"torn` {
		t.Fatalf("torn line: %q, %v; want its bytes with io.EOF", got, err)
	}
	if got, err := ReadLine(br, 2<<20); err != io.EOF || len(got) != 0 {
		t.Fatalf("after the end: %q, %v", got, err)
	}
}

func TestReadLineTooLong(t *testing.T) {
	br := bufio.NewReaderSize(strings.NewReader(strings.Repeat("x", 100)+"\nok\n"), 16)
	if _, err := ReadLine(br, 99); !errors.Is(err, ErrTooLong) || !strings.Contains(err.Error(), "longer than 99 bytes") {
		t.Fatalf("err = %v; want ErrTooLong naming the bound", err)
	}
	br = bufio.NewReaderSize(strings.NewReader(strings.Repeat("x", 99)+"\n"), 16)
	if l, err := ReadLine(br, 100); err != nil || len(l) != 100 {
		t.Fatalf("a line of exactly the bound: %d bytes, %v", len(l), err)
	}
}

// FuzzReadLine: the lines read, joined, are the input, whatever the
// buffer size.
func FuzzReadLine(f *testing.F) {
	f.Add("a\nbb\n", 16)
	f.Add("", 16)
	f.Add("\n\n\n", 16)
	f.Add(strings.Repeat("x", 100)+"\ny", 16)
	f.Fuzz(func(t *testing.T, in string, size int) {
		br := bufio.NewReaderSize(strings.NewReader(in), 16+size%64)
		var out bytes.Buffer
		for {
			l, err := ReadLine(br, len(in)+1)
			out.Write(l)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(l) == 0 || l[len(l)-1] != '\n' {
				t.Fatalf("line %q without its newline", l)
			}
		}
		if out.String() != in {
			t.Fatalf("read %q; want %q", out.String(), in)
		}
	})
}
