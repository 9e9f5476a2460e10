package kit_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/peer"
	"github.com/troupe-dev/troupe/session/kit"
	"github.com/troupe-dev/troupe/store/file"
)

type peerInbox struct {
	mu  sync.Mutex
	got []peer.Message
}

func (b *peerInbox) deliver(m peer.Message) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.got = append(b.got, m)
	return nil
}

func (b *peerInbox) texts() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, m := range b.got {
		out = append(out, m.From+": "+m.Text)
	}
	return out
}

func openPresence(t *testing.T, reg *file.Sessions, sockDir, id, name string, refuse bool, in *peerInbox) *kit.Presence {
	t.Helper()
	p, err := kit.OpenPresence(t.Context(), kit.PresenceConfig{Registry: reg, SocketDir: sockDir, Refuse: refuse,
		Entry: peer.Entry{ID: id, Name: name, Folder: "/w", Kind: peer.KindPrint}, Deliver: in.deliver, Heartbeat: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	return p
}

func TestPresence(t *testing.T) {
	reg := file.NewSessions(t.TempDir())
	sockDir, err := os.MkdirTemp("", "pk")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sockDir)
	ina, inb, inc := &peerInbox{}, &peerInbox{}, &peerInbox{}
	a := openPresence(t, reg, sockDir, "aaaaaaaa-1111", "alpha", false, ina)
	b := openPresence(t, reg, sockDir, "bbbbbbbb-2222", "beta", false, inb)
	c := openPresence(t, reg, sockDir, "cccccccc-3333", "", true, inc)

	rows, err := a.Rows(t.Context())
	if err != nil || len(rows) != 2 || rows[0].Name != "beta" || rows[1].Name != "cccccccc" || !strings.Contains(rows[1].State, "takes no messages") {
		t.Fatalf("Rows = %+v, %v; want beta and the unnamed, refusing cccccccc", rows, err)
	}
	if _, err := a.SendPeer(t.Context(), "session:bbbbbbbb-2222", "by id", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := a.SendPeer(t.Context(), "session:bbbbbbbb", "by short id", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := b.SendPeer(t.Context(), "uds:"+a.Entry().Socket, "by socket", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := a.SendPeer(t.Context(), "session:cccccccc-3333", "refused", ""); err == nil || !strings.Contains(err.Error(), "takes no messages") {
		t.Fatalf("SendPeer to a refusing session = %v", err)
	}
	if _, err := a.SendPeer(t.Context(), "uds:"+c.Entry().Socket, "refused too", ""); !errors.Is(err, peer.ErrRefused) {
		t.Fatalf("SendPeer by socket to a refusing session = %v; want ErrRefused", err)
	}
	if _, err := a.SendPeer(t.Context(), "bridge:bbbbbbbb-2222", "no bridge", ""); err == nil {
		t.Fatal("bridge: without a NATS store was sent")
	}
	if got := inb.texts(); len(got) != 2 || got[0] != "alpha: by id" {
		t.Errorf("beta got %q", got)
	}
	if got := ina.texts(); len(got) != 1 || got[0] != "beta: by socket" {
		t.Errorf("alpha got %q", got)
	}
	if got := inc.texts(); len(got) != 0 {
		t.Errorf("the refusing session got %q", got)
	}

	if err := b.Rename(t.Context(), "  new   beta "); err != nil {
		t.Fatal(err)
	}
	if rows, _ := a.Rows(t.Context()); rows[0].Name != "new beta" {
		t.Errorf("after Rename: %+v", rows)
	}
	b.SetState(peer.StateWorking)
	time.Sleep(50 * time.Millisecond) // heartbeats run meanwhile, under -race
	es, _ := reg.List(t.Context())
	for _, e := range es {
		if e.ID == "bbbbbbbb-2222" && (e.State != peer.StateWorking || e.Name != "new beta") {
			t.Errorf("beta's entry = %+v", e)
		}
	}
	sock := b.Entry().Socket
	if err := b.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("socket after Close: %v", err)
	}
	if es, _ := reg.List(t.Context()); len(es) != 2 {
		t.Errorf("entries after Close: %+v", es)
	}
}

// BenchmarkPresenceDeliver measures a message from one session's
// SendPeer (resolving "session:<id>" in the registry) to the other's
// Deliver, on one machine; it reports p50 and p99.
func BenchmarkPresenceDeliver(b *testing.B) {
	reg := file.NewSessions(b.TempDir())
	sockDir, err := os.MkdirTemp("", "pb")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(sockDir)
	got := make(chan struct{}, 1)
	open := func(id string, deliver func(peer.Message) error) *kit.Presence {
		p, err := kit.OpenPresence(context.Background(), kit.PresenceConfig{Registry: reg, SocketDir: sockDir,
			Entry: peer.Entry{ID: id, Kind: peer.KindPrint}, Deliver: deliver})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { p.Close(context.Background()) })
		return p
	}
	a := open("aaaaaaaa-bench", func(peer.Message) error { return nil })
	open("bbbbbbbb-bench", func(peer.Message) error { got <- struct{}{}; return nil })
	ctx := context.Background()
	var lat []time.Duration
	for b.Loop() {
		t0 := time.Now()
		if _, err := a.SendPeer(ctx, "session:bbbbbbbb-bench", "ping", ""); err != nil {
			b.Fatal(err)
		}
		<-got
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	}
}

// A uds: address must be a registered session's socket.
func TestPresenceUDSOnlyToSessions(t *testing.T) {
	reg := file.NewSessions(t.TempDir())
	sockDir, err := os.MkdirTemp("", "pu")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sockDir)
	a := openPresence(t, reg, sockDir, "aaaaaaaa-uds", "alpha", false, &peerInbox{})
	stray, err := peer.Listen(sockDir+"/stray.sock", peer.ListenConfig{Deliver: func(peer.Message) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer stray.Close()
	if _, err := a.SendPeer(t.Context(), "uds:"+stray.Path(), "hi", ""); err == nil || !strings.Contains(err.Error(), "not the socket of a running troupe session") {
		t.Fatalf("SendPeer to an unregistered socket = %v; want refused", err)
	}
}
