package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/bench"
)

func TestBenchTeam(t *testing.T) {
	r := runBench(t, nil, "--json", "team", "--teammates", "4", "--hosts", "2", "--tasks", "6", "--chain", "2", "--pings", "3", "--ping-gap", "1ms", "--idle", "200ms", "--tmp", t.TempDir())
	if r.err != nil {
		t.Fatalf("bench team: %v\nstderr:\n%s", r.err, r.stderr)
	}
	var rep bench.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("bench team --json printed no report: %v\n%s", err, r.stdout)
	}
	if len(rep.Team) != 1 {
		t.Fatalf("report has %d team runs; want 1", len(rep.Team))
	}
	if tr := rep.Team[0]; tr.Completed != 6 || tr.DoubleClaims != 0 || tr.Pings != 6 || tr.Missing != 0 || len(tr.HostRSSMB) != 2 {
		t.Errorf("team run %+v; want 6 tasks completed once, 6 pings seen, 2 hosts measured", tr)
	}
	if rep.Store != "file" {
		t.Errorf("report store %q; want file", rep.Store)
	}
}

func TestBenchTeamUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"more hosts than teammates", []string{"team", "--teammates", "2", "--hosts", "3"}, "at least one teammate a host"},
		{"no hosts", []string{"team", "--hosts", "0"}, "--hosts"},
		{"bad sizes", []string{"team", "--teammates", "ten"}, "--teammates"},
		{"chain", []string{"team", "--chain", "0"}, "--chain"},
		{"negative tasks", []string{"team", "--tasks", "-1"}, "--tasks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runBench(t, nil, tt.args...)
			var ue *UsageError
			if !errors.As(r.err, &ue) || !strings.Contains(r.err.Error(), tt.want) {
				t.Errorf("bench %s = %v; want a usage error about %s", strings.Join(tt.args, " "), r.err, tt.want)
			}
		})
	}
}
