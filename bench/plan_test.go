package bench

import (
	"fmt"
	"strings"
	"testing"
	"time"

	natsstore "github.com/troupe-dev/troupe/store/nats"
)

func TestParseCounts(t *testing.T) {
	tests := []struct {
		in      string
		want    []int
		wantErr bool
	}{
		{"1,4,16,64", []int{1, 4, 16, 64}, false},
		{" 2 , 3 ", []int{2, 3}, false},
		{"", nil, false},
		{"0", nil, false},
		{"1,,2", nil, true},
		{"0,4", nil, true},
		{"-4", nil, true},
	}
	for _, tt := range tests {
		got, err := ParseCounts(tt.in)
		if (err != nil) != tt.wantErr || fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("ParseCounts(%q) = %v, %v; want %v (error %t)", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestParsePeerModes(t *testing.T) {
	if got, err := ParsePeerModes(" legacy,current"); err != nil || fmt.Sprint(got) != "[legacy current]" {
		t.Errorf("ParsePeerModes = %v, %v; want [legacy current]", got, err)
	}
	if _, err := ParsePeerModes("legacy,future"); err == nil || !strings.Contains(err.Error(), `"legacy,future"`) {
		t.Errorf("ParsePeerModes(legacy,future) = %v; want an error naming it", err)
	}
}

// TestPlanChecks: every plan that cannot run is refused, naming the flag.
func TestPlanChecks(t *testing.T) {
	okMail := MailboxPlan{Reps: 1, Writer: WritersConfig{Msgs: 1}}
	okTeam := TeamPlan{Sizes: []int{3}, Base: TeamConfig{Hosts: 3, Chain: 1, Idle: time.Second, Timeout: time.Second}}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"mailbox ok", okMail.Check(), ""},
		{"no messages", MailboxPlan{Reps: 1}.Check(), "--msgs 0"},
		{"negative preload", MailboxPlan{Reps: 1, Writer: WritersConfig{Msgs: 1, Preload: -1}}.Check(), "must not be negative"},
		{"no reps", MailboxPlan{Writer: WritersConfig{Msgs: 1}}.Check(), "--reps 0"},
		{"gaps reversed", MailboxPlan{Reps: 1, Writer: WritersConfig{Msgs: 1}, Delivery: DeliveryConfig{GapMin: 2, GapMax: 1}}.Check(), "--gap-min"},
		{"claim ok", ClaimPlan{}.Check(), ""},
		{"negative rounds", ClaimPlan{Rounds: -1}.Check(), "--rounds"},
		{"team ok", okTeam.Check(), ""},
		{"no sizes", TeamPlan{Base: okTeam.Base}.Check(), "--teammates"},
		{"no hosts", TeamPlan{Sizes: []int{1}, Base: TeamConfig{Chain: 1, Idle: 1, Timeout: 1}}.Check(), "--hosts 0"},
		{"negative tasks", TeamPlan{Sizes: []int{3}, Base: TeamConfig{Hosts: 1, Tasks: -1, Chain: 1, Idle: 1, Timeout: 1}}.Check(), "--tasks -1"},
		{"no chain", TeamPlan{Sizes: []int{3}, Base: TeamConfig{Hosts: 1, Idle: 1, Timeout: 1}}.Check(), "--chain 0"},
		{"negative pings", TeamPlan{Sizes: []int{3}, Base: TeamConfig{Hosts: 1, Chain: 1, Pings: -1, Idle: 1, Timeout: 1}}.Check(), "--pings -1"},
		{"no idle window", TeamPlan{Sizes: []int{3}, Base: TeamConfig{Hosts: 1, Chain: 1, Timeout: 1}}.Check(), "--idle"},
		{"fewer teammates than hosts", TeamPlan{Sizes: []int{2}, Base: okTeam.Base}.Check(), "--teammates 2 on --hosts 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.want == "" {
				if tt.err != nil {
					t.Errorf("Check() = %v; want nil", tt.err)
				}
				return
			}
			if tt.err == nil || !strings.Contains(tt.err.Error(), tt.want) {
				t.Errorf("Check() = %v; want an error containing %q", tt.err, tt.want)
			}
		})
	}
}

// TestMailboxInteropSkipped: without the peer-bench folder, B8 is
// skipped and the report says how to run it; nothing else runs.
func TestMailboxInteropSkipped(t *testing.T) {
	r := testRunner(t)
	rep := r.NewReport(time.Now())
	if err := r.Mailbox(t.Context(), MailboxPlan{Reps: 1, Writer: WritersConfig{Msgs: 1}, Interop: InteropConfig{Troupe: 1, Node: 1, Msgs: 1}, PeerModes: []string{PeerLegacy}}, rep); err != nil {
		t.Fatalf("Mailbox: %v", err)
	}
	if len(rep.Skipped) != 1 || !strings.Contains(rep.Skipped[0], "--peer-bench") || len(rep.Writers)+len(rep.Interop) != 0 || rep.Delivery != nil {
		t.Errorf("report = %+v; want only B8 skipped, naming --peer-bench", rep)
	}
	if rep.Store != "file" {
		t.Errorf("report store = %q; want file", rep.Store)
	}
}

func TestCheckNATS(t *testing.T) {
	tests := []struct {
		o    natsstore.Options
		want string
	}{
		{natsstore.Options{}, ""},
		{natsstore.Options{Token: "x"}, "credentials"},
		{natsstore.Options{User: "u", Password: "p"}, "credentials"},
		{natsstore.Options{TLSCAFile: "ca.pem"}, "TLS files"},
		{natsstore.Options{Namespace: "mine"}, `namespace "mine"`},
	}
	for _, tt := range tests {
		err := CheckNATS("nats://h:4222", tt.o)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "nats://h:4222")) {
			t.Errorf("CheckNATS(%+v) = %v; want %q", tt.o, err, tt.want)
		}
	}
}
