package bench

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/team"
)

// TestTeam runs the team benchmark small on both stores: every task is
// claimed once and completed, every ping wakes its recipient, and the
// figures are there.
// TestTeamWithoutPings measures the spawn and the drain alone when the
// pings are turned off (--pings 0): none is sent, none is missing.
func TestTeamWithoutPings(t *testing.T) {
	r := testRunner(t)
	cfg := TeamConfig{Teammates: 2, Hosts: 1, Tasks: 2, Chain: 1, Idle: 100 * time.Millisecond, Timeout: time.Minute}
	res, err := r.Team(t.Context(), cfg)
	if err != nil {
		t.Fatalf("Team(%+v) = %v", cfg, err)
	}
	if res.Pings != 0 || res.Missing != 0 || res.Delivery.N != 0 || res.Churn != nil || res.Again != nil {
		t.Errorf("Team without pings: %d pings, %d missing, delivery %+v, churn %+v, again %+v; want none", res.Pings, res.Missing, res.Delivery, res.Churn, res.Again)
	}
	if res.Completed != cfg.Tasks {
		t.Errorf("Team without pings: %d of %d tasks completed", res.Completed, cfg.Tasks)
	}
}

func TestTeam(t *testing.T) {
	_, url := startNATS(t)
	for _, store := range []string{"", url} {
		name := "file"
		if store != "" {
			name = "nats"
		}
		t.Run(name, func(t *testing.T) {
			r := testRunner(t)
			r.NATS = store
			cfg := TeamConfig{Teammates: 6, Hosts: 2, Tasks: 12, Chain: 3, Pings: 4, PingGap: 5 * time.Millisecond, Idle: 300 * time.Millisecond, Timeout: time.Minute}
			res, err := r.Team(t.Context(), cfg)
			if err != nil {
				t.Fatalf("Team(%+v) = %v", cfg, err)
			}
			if res.Claims != cfg.Tasks || res.DoubleClaims != 0 || res.Completed != cfg.Tasks {
				t.Errorf("Team: %d claims, %d double, %d completed (%v); want %d claimed once and completed", res.Claims, res.DoubleClaims, res.Completed, res.Examples, cfg.Tasks)
			}
			if res.Pings != cfg.Pings*cfg.Hosts || res.Missing != 0 || res.Delivery.N != res.Pings || res.Delivery.Min <= 0 {
				t.Errorf("Team: %d pings, %d missing, delivery %+v; want %d seen, from the send's call (errors %v)", res.Pings, res.Missing, res.Delivery, cfg.Pings*cfg.Hosts, res.Errors)
			}
			if c := res.Churn; c == nil || c.Pings != cfg.Pings*cfg.Hosts || c.Missing != 0 || c.Delivery.N != c.Pings {
				t.Errorf("Team: pings right after the drain %+v; want %d seen", c, cfg.Pings*cfg.Hosts)
			}
			if a := res.Again; a == nil || a.Pings != cfg.Pings*cfg.Hosts || a.Missing != 0 || a.Delivery.N != a.Pings || a.Delivery.Min <= 0 {
				t.Errorf("Team: second round to the settled team %+v; want %d seen", a, cfg.Pings*cfg.Hosts)
			}
			if res.SpawnS <= 0 || len(res.HostRSSMB) != cfg.Hosts || res.HostRSSMB[0] <= 0 || res.IdleS <= 0 {
				t.Errorf("Team: spawn %.2f s, host RSS %v MB, idle window %.1f s; want them measured", res.SpawnS, res.HostRSSMB, res.IdleS)
			}
			if len(res.Errors) > 0 {
				t.Errorf("Team errors: %v", res.Errors)
			}
		})
	}
}

// TestTeamDumpsOnMissingPings: when a round misses pings (its recipients
// are deaf), the runner counts them, has every host write its goroutines,
// and keeps the run's folder for those files, which show where the
// teammates wait.
func TestTeamDumpsOnMissingPings(t *testing.T) {
	r := testRunner(t)
	r.ChildEnv = append(r.ChildEnv, "TROUPE_BENCH_TEST_DEAF=1")
	cfg := TeamConfig{Teammates: 4, Hosts: 2, Pings: 2, PingGap: time.Millisecond, Idle: 50 * time.Millisecond, Timeout: time.Second}
	res, err := r.Team(t.Context(), cfg)
	if err != nil {
		t.Fatalf("Team(%+v) = %v", cfg, err)
	}
	if want := 2 * cfg.Pings * cfg.Hosts; res.Missing != want {
		t.Errorf("Team with deaf teammates: %d missing; want %d (two rounds)", res.Missing, want)
	}
	if len(res.Dumps) != 2*cfg.Hosts {
		t.Fatalf("Team with deaf teammates: dumps %q; want one per host and round", res.Dumps)
	}
	for _, path := range res.Dumps {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("goroutine dump: %v (want the run's folder kept)", err)
		}
		if !strings.Contains(string(b), "deafTeammate") {
			t.Errorf("%s does not show the deaf teammates' goroutines:\n%.2000s", path, b)
		}
	}
}

// TestReadLead: without a lead, the runner reads the lead's inbox and
// marks what came in read, as a lead's inbox pump does.
func TestReadLead(t *testing.T) {
	s, err := openFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	ctx := t.Context()
	if _, err := team.Create(ctx, s.teams, team.CreateOptions{Name: teamName, Now: time.Now(), Pick: func(int) int { return 0 }}); err != nil {
		t.Fatal(err)
	}
	if _, err := team.AddMember(ctx, s.teams, teamName, team.Member{Name: "ann"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	lctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		readLead(lctx, s.mail)
	}()
	defer func() { stop(); <-done }()
	for i := range 3 {
		if _, err := s.mail.Send(ctx, teamName, team.LeadName, mailbox.Message{From: "ann", Text: fmt.Sprintf("idle %d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		unread, err := s.mail.Read(ctx, teamName, team.LeadName, true)
		if err != nil {
			t.Fatal(err)
		}
		all, err := s.mail.Read(ctx, teamName, team.LeadName, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(unread) == 0 && len(all) == 3 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("lead inbox: %d unread of %d after 10 s; want all 3 read", len(unread), len(all))
		}
		time.Sleep(10 * time.Millisecond)
	}
}
