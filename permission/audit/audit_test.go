package audit_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/audit"
)

func TestLogConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	l, err := audit.Open(path, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	const n = 200
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			in, _ := json.Marshal(map[string]string{"command": fmt.Sprintf("echo %d %s", i, strings.Repeat("x", 3000))})
			r := permission.MustParseRule("Bash(echo:*)")
			r.Source = "/s.json"
			req := permission.Request{Tool: "Bash", Input: in, Mode: permission.ModeDefault}
			e := audit.NewEntry(time.Time{}, "helper", req, permission.Decision{Behavior: permission.Allow, Rule: &r, Reason: "ok"})
			if err := l.Record(e); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close = %v; want nil", err)
	}
	if err := l.Record(audit.Entry{}); !errors.Is(err, audit.ErrClosed) {
		t.Errorf("Record after Close = %v; want ErrClosed", err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	lines := 0
	for sc.Scan() {
		var e audit.Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %d: %v", lines+1, err)
		}
		if e.Agent != "helper" || e.Tool != "Bash" || e.Decision != permission.Allow || e.Rule != "Bash(echo:*)" || e.Source != "/s.json" || !e.Time.Equal(now) {
			t.Errorf("line %d = %+v", lines+1, e)
		}
		if len(e.Input) > audit.MaxInput+len("…") || !strings.HasPrefix(e.Input, "echo ") {
			t.Errorf("line %d input = %q (%d bytes); want a cut command", lines+1, e.Input[:20], len(e.Input))
		}
		lines++
	}
	if lines != n {
		t.Errorf("lines = %d; want %d", lines, n)
	}
}

func TestSummary(t *testing.T) {
	tests := []struct{ tool, in, want string }{
		{"Read", `{"file_path":"/a/b"}`, "/a/b"},
		{"Grep", `{"pattern":"x","path":"src"}`, "x"},
		{"WebSearch", `{"query":"go 1.26","allowed_domains":["go.dev"]}`, "go 1.26"},
		{"Other", `{"q":1}`, `{"q":1}`},
		{"Bad", `not json`, `not json`},
	}
	for _, tt := range tests {
		if got := audit.Summary(tt.tool, json.RawMessage(tt.in)); got != tt.want {
			t.Errorf("Summary(%s, %s) = %q; want %q", tt.tool, tt.in, got, tt.want)
		}
	}
}
