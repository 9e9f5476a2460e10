package ledger_test

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/budget"
	"github.com/troupe-dev/troupe/budget/ledger"
	"github.com/troupe-dev/troupe/llm"
)

func usd(v float64) *float64 { return &v }

func TestWriteReadSummarize(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions", "s1")
	at := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	// Two writers on one file, as the lead and a pane teammate have.
	w1, err := ledger.Open(dir, func() time.Time { return at })
	if err != nil {
		t.Fatal(err)
	}
	w2, err := ledger.Open(dir, func() time.Time { return at.Add(time.Second) })
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 100 {
		w, who := w1, "lead"
		if i%2 == 1 {
			w, who = w2, "alice"
		}
		wg.Go(func() {
			w.Record(budget.Record{Agent: who, Model: "claude-sonnet-4-5", Usage: llm.Usage{InputTokens: 10, OutputTokens: 5}, USD: usd(0.001)})
		})
	}
	wg.Wait()
	w1.Record(budget.Record{Agent: "bob", Model: "local-llama", Usage: llm.Usage{InputTokens: 7}})
	if err := errors.Join(w1.Err(), w2.Err()); err != nil {
		t.Fatal(err)
	}
	es, err := ledger.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 101 {
		t.Fatalf("read %d entries; want 101", len(es))
	}
	s := ledger.Summarize(es)
	if got := s.ByAgent["alice"]; got.Calls != 50 || got.Usage.OutputTokens != 250 || math.Abs(got.USD-0.05) > 1e-9 {
		t.Errorf("alice = %+v; want 50 calls, 250 output tokens, $0.05", got)
	}
	if got := s.Total; got.Calls != 101 || math.Abs(got.USD-0.1) > 1e-9 || len(got.Unpriced) != 1 || got.Unpriced[0] != "local-llama" {
		t.Errorf("total = %+v; want 101 calls, $0.10, local-llama unpriced", got)
	}
	if got := s.Agents(); len(got) != 3 || got[2] != "bob" {
		t.Errorf("Agents() = %v; want bob, the cheapest, last", got)
	}
	if !s.First.Equal(at) || !s.Last.Equal(at.Add(time.Second)) {
		t.Errorf("first, last = %v, %v", s.First, s.Last)
	}
	if fi, err := os.Stat(filepath.Join(dir, ledger.FileName)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("ledger file: %v, %v; want mode 0600", fi, err)
	}
}

func TestParse(t *testing.T) {
	good := `{"time":"2026-12-03T12:00:00Z","agent":"lead","model":"m","usage":{"input_tokens":1,"output_tokens":2},"usd":0.5}` + "\n"
	tests := []struct {
		name    string
		in      string
		want    int
		wantErr string
	}{
		{"empty", "", 0, ""},
		{"one", good, 1, ""},
		{"blank lines", "\n" + good + "\n\n" + good, 2, ""},
		{"torn last line", good + `{"time":"2026-12-03T12:00:00Z","agent":"le`, 1, ""},
		{"not JSON", good + "garbage\n" + good, 1, "malformed line 2"},
		{"no agent", `{"model":"m","usage":{}}` + "\n", 0, "malformed line 1: no agent"},
		{"negative tokens", `{"agent":"a","usage":{"output_tokens":-1}}` + "\n", 0, "negative token count"},
		{"negative cost", `{"agent":"a","usage":{},"usd":-2}` + "\n", 0, "not an amount"},
		{"too long", strings.Repeat(" ", 70<<10) + "\n", 0, "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			es, err := ledger.Parse(strings.NewReader(tt.in))
			if len(es) != tt.want {
				t.Errorf("Parse read %d entries; want %d", len(es), tt.want)
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("Parse: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ledger.ErrMalformed)):
				t.Errorf("Parse: %v; want an ErrMalformed containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestReadMissing(t *testing.T) {
	es, err := ledger.Read(t.TempDir())
	if err != nil || len(es) != 0 {
		t.Errorf("Read of a folder without a ledger = %v, %v; want nothing, no error", es, err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"time":"2026-12-03T12:00:00Z","agent":"lead","model":"m","usage":{"input_tokens":1,"output_tokens":2},"usd":0.5}` + "\n"))
	f.Add([]byte("{\"agent\":\"a\",\"usage\":{}}\n{\"agent\""))
	f.Add([]byte("\n\n{}\n"))
	f.Add([]byte(`{"agent":"a","usage":{"input_tokens":1e30}}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		es, err := ledger.Parse(bytes.NewReader(data))
		for _, e := range es {
			if e.Agent == "" || e.Usage.InputTokens < 0 || (e.USD != nil && *e.USD < 0) {
				t.Fatalf("Parse accepted %+v", e)
			}
		}
		if err != nil && !errors.Is(err, ledger.ErrMalformed) {
			t.Fatalf("Parse of bytes in memory: %v; want only ErrMalformed", err)
		}
		s := ledger.Summarize(es)
		if s.Total.Calls != len(es) {
			t.Fatalf("Summarize counted %d calls of %d entries", s.Total.Calls, len(es))
		}
	})
}

// A Tailer reports only what was appended after it started, complete
// lines only, each once, and the writer's origin tells whose lines they are.
func TestTailer(t *testing.T) {
	dir := t.TempDir()
	w, err := ledger.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.Record(budget.Record{Agent: "before", Usage: llm.Usage{InputTokens: 1}})
	tail := ledger.NewTailer(filepath.Join(dir, ledger.FileName))
	if es, err := tail.Next(); err != nil || len(es) != 0 {
		t.Fatalf("Next before any append = %v, %v; want nothing", es, err)
	}
	other, err := ledger.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	other.Record(budget.Record{Agent: "ann", Model: "m", Usage: llm.Usage{InputTokens: 5}})
	w.Record(budget.Record{Agent: "lead", Model: "m", Usage: llm.Usage{InputTokens: 7}})
	f, err := os.OpenFile(filepath.Join(dir, ledger.FileName), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"agent":"torn","usage":{}`) // no newline yet
	es, err := tail.Next()
	if err != nil || len(es) != 2 || es[0].Agent != "ann" || es[0].Origin != other.Origin() || es[1].Origin != w.Origin() || w.Origin() == other.Origin() {
		t.Fatalf("Next = %+v, %v; want ann's line (other's origin) then lead's (w's)", es, err)
	}
	f.WriteString("}\nnot json\n")
	f.Close()
	es, err = tail.Next()
	if len(es) != 1 || es[0].Agent != "torn" || !errors.Is(err, ledger.ErrMalformed) {
		t.Errorf("Next after the torn line's end = %+v, %v; want it, and the malformed line reported", es, err)
	}
	if es, err := tail.Next(); len(es) != 0 || err != nil {
		t.Errorf("Next with nothing new = %+v, %v", es, err)
	}
}

// BenchmarkTailerIdle measures what the lead pays before each limit check
// when no other process has appended: the Tailer's look at the file.
func BenchmarkTailerIdle(b *testing.B) {
	dir := b.TempDir()
	w, err := ledger.Open(dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	w.Record(budget.Record{Agent: "lead", Usage: llm.Usage{InputTokens: 1}})
	tail := ledger.NewTailer(w.Path())
	for b.Loop() {
		if _, err := tail.Next(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRecord measures one ledger line: what each model call adds.
func BenchmarkRecord(b *testing.B) {
	w, err := ledger.Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	usd := 0.001
	for b.Loop() {
		w.Record(budget.Record{Agent: "lead", Model: "claude-sonnet-4-5", Usage: llm.Usage{InputTokens: 1000, OutputTokens: 100}, USD: &usd})
	}
	if err := w.Err(); err != nil {
		b.Fatal(err)
	}
}
