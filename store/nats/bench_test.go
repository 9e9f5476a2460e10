package nats_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/troupe-dev/troupe/bench"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/store/file"
	natsstore "github.com/troupe-dev/troupe/store/nats"
	"github.com/troupe-dev/troupe/team"
)

// The B1-B3 scenarios of the peer baseline (docs/benchmarks.md, "The peer's scenarios")
// against store/nats and store/file side by side, in one process: W
// writers, each with a store of its own (its own connection, or its own
// file.Store on the shared root) as separate processes would have, send M
// messages of the peer's 300-character workload into one inbox that may
// hold a preload of unread messages. Each run then reads the inbox back and
// fails on a lost, duplicated or invented message.
//
//	go test -run='^$' -bench=Stores -benchtime=1x ./store/nats/
//
// "nats" is a server with JetStream's default flush (every two minutes);
// "nats-fsync" flushes each write before acknowledging it, the
// durability of the file store and of troupe serve's default.
//
// Metrics: msgs/s (acknowledged sends from the barrier to the last
// return), p50-ms and p99-ms (one send's latency), lost (always 0, or the
// benchmark fails).

// benchText is the peer's workload: 300 characters starting with an id.
func benchText(id string) string {
	const lorem = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor. "
	s := "<" + id + "> "
	for len(s) < 300 {
		s += lorem
	}
	return s[:300]
}

// backend opens stores sharing one fresh backend for a scenario run.
type backend interface {
	// open returns a new store (a "process") of the run's backend.
	open(b *testing.B) (team.Store, mailbox.Store, func())
	// preload puts n unread messages in the bench inbox.
	preload(b *testing.B, n int)
}

type fileBackend struct{ root string }

func (f *fileBackend) open(b *testing.B) (team.Store, mailbox.Store, func()) {
	s, err := file.Open(f.root, file.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return s.Teams(), s.Mail(), func() { s.Close() }
}

func (f *fileBackend) preload(b *testing.B, n int) {
	msgs := make([]mailbox.Message, n)
	for i := range msgs {
		msgs[i] = mailbox.Message{ID: mailbox.NewID(), From: "pre", Text: benchText("pre-" + strconv.Itoa(i)),
			Summary: "pre", Color: "blue", Timestamp: time.Now(), Type: "message"}
	}
	data, err := json.MarshalIndent(msgs, "", "  ")
	if err != nil {
		b.Fatal(err)
	}
	inbox := filepath.Join(f.root, "teams", "bench", "inboxes", team.LeadName+".json")
	if err := os.MkdirAll(filepath.Dir(inbox), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(inbox, data, 0o600); err != nil {
		b.Fatal(err)
	}
}

type natsBackend struct {
	srv  *testServer
	urls string // instead of srv: a cluster's URLs
	ns   string
}

func (n *natsBackend) open(b *testing.B) (team.Store, mailbox.Store, func()) {
	url := n.urls
	if url == "" {
		url = n.srv.url()
	}
	s, err := natsstore.Open(b.Context(), url, natsstore.Options{Namespace: n.ns})
	if err != nil {
		b.Fatal(err)
	}
	return s.Teams(), s.Mail(), func() { s.Close() }
}

// preload sends n messages from 16 goroutines (not measured).
func (n *natsBackend) preload(b *testing.B, count int) {
	_, mail, closeStore := n.open(b)
	defer closeStore()
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := g; i < count; i += 16 {
				msg := mailbox.Message{From: "pre", Text: benchText("pre-" + strconv.Itoa(i)), Summary: "pre", Color: "blue"}
				if _, err := mail.Send(b.Context(), "bench", team.LeadName, msg); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// writersRun is the outcome of one scenario run.
type writersRun struct {
	elapsed time.Duration
	lat     []time.Duration
	acked   int
}

// runWriters runs one scenario on be: w writers × m messages into the lead's
// inbox of team "bench", holding preload messages, then checks the inbox.
func runWriters(b *testing.B, be backend, w, m, preload int) writersRun {
	teams, mail, closeStore := be.open(b)
	defer closeStore()
	ctx := b.Context()
	if _, err := team.Create(ctx, teams, team.CreateOptions{Name: "bench", Now: time.Now(), Pick: rand.IntN}); err != nil {
		b.Fatal(err)
	}
	if preload > 0 {
		be.preload(b, preload)
	}
	type writer struct {
		mail  mailbox.Store
		close func()
		lat   []time.Duration
		ids   []string
		errs  int
	}
	ws := make([]*writer, w)
	for i := range ws {
		_, mb, c := be.open(b)
		ws[i] = &writer{mail: mb, close: c}
		defer c()
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, wr := range ws {
		wg.Go(func() {
			<-start
			for j := range m {
				id := fmt.Sprintf("w%d-m%d", i, j)
				msg := mailbox.Message{From: fmt.Sprintf("w%d", i), Text: benchText(id), Summary: "msg " + id, Color: "blue"}
				t0 := time.Now()
				_, err := wr.mail.Send(ctx, "bench", team.LeadName, msg)
				wr.lat = append(wr.lat, time.Since(t0))
				if err != nil {
					wr.errs++
					b.Errorf("Send(%s) = %v", id, err)
					continue
				}
				wr.ids = append(wr.ids, id)
			}
		})
	}
	t0 := time.Now()
	close(start)
	wg.Wait()
	run := writersRun{elapsed: time.Since(t0)}
	acked := map[string]bool{}
	for _, wr := range ws {
		run.lat = append(run.lat, wr.lat...)
		for _, id := range wr.ids {
			acked[id] = true
		}
	}
	run.acked = len(acked)
	got, err := mail.Read(ctx, "bench", team.LeadName, false)
	if err != nil {
		b.Fatalf("Read(inbox) = %v", err)
	}
	seen := map[string]int{}
	for _, msg := range got {
		id, _, _ := strings.Cut(strings.TrimPrefix(msg.Text, "<"), ">")
		seen[id]++
	}
	lost, dups, phantoms := 0, 0, 0
	for id := range acked {
		if seen[id] == 0 {
			lost++
		}
	}
	for id, n := range seen {
		switch {
		case strings.HasPrefix(id, "pre-"):
			if n > 1 {
				dups += n - 1
			}
		case n > 1:
			dups += n - 1
		case !acked[id]:
			phantoms++
		}
	}
	if lost+dups+phantoms > 0 || len(got) != preload+run.acked {
		b.Fatalf("inbox check: %d messages for %d acknowledged + %d preloaded; lost %d, duplicates %d, phantoms %d", len(got), run.acked, preload, lost, dups, phantoms)
	}
	return run
}

// newBackend returns the backend a benchmark names: "file", "nats-fsync"
// (on fsync, in namespace ns) or "nats" (on srv).
func newBackend(b *testing.B, store string, srv, fsync *testServer, ns string) backend {
	switch store {
	case "file":
		return &fileBackend{root: b.TempDir()}
	case "nats-fsync":
		return &natsBackend{srv: fsync, ns: ns}
	}
	return &natsBackend{srv: srv, ns: ns}
}

// msSummary summarizes latencies in milliseconds, by nearest rank.
func msSummary(lat []time.Duration) bench.Summary {
	ms := make([]float64, len(lat))
	for i, d := range lat {
		ms[i] = float64(d) / float64(time.Millisecond)
	}
	return bench.Summarize(ms)
}

// BenchmarkStores runs B1 (W = 1, 4, 16, 64 × 200), B2 (W = 16, 64 × 20)
// and B3 (10,000 preloaded, W = 1, 4 × 100) on both stores.
func BenchmarkStores(b *testing.B) {
	srv := startServer(b, "")
	// A second server flushes every write to disk before acknowledging it,
	// as the file store does and troupe serve does by default.
	fsync := &testServer{dir: b.TempDir(), port: -1, syncAlways: true}
	fsync.start(b)
	b.Cleanup(fsync.stop)
	scenarios := []struct {
		name      string
		w, m, pre int
		skipShort bool
	}{
		{name: "B1", w: 1, m: 200},
		{name: "B1", w: 4, m: 200},
		{name: "B1", w: 16, m: 200},
		{name: "B1", w: 64, m: 200, skipShort: true},
		{name: "B2", w: 16, m: 20},
		{name: "B2", w: 64, m: 20, skipShort: true},
		{name: "B3", w: 1, m: 100, pre: 10000, skipShort: true},
		{name: "B3", w: 4, m: 100, pre: 10000, skipShort: true},
	}
	run := 0
	for _, sc := range scenarios {
		for _, store := range []string{"file", "nats-fsync", "nats"} {
			b.Run(fmt.Sprintf("%s/W=%d/M=%d/pre=%d/%s", sc.name, sc.w, sc.m, sc.pre, store), func(b *testing.B) {
				if sc.skipShort && testing.Short() {
					b.Skip("long scenario; not in -short")
				}
				var total writersRun
				for b.Loop() {
					run++
					be := newBackend(b, store, srv, fsync, fmt.Sprintf("bench%d", run))
					r := runWriters(b, be, sc.w, sc.m, sc.pre)
					total.elapsed += r.elapsed
					total.acked += r.acked
					total.lat = append(total.lat, r.lat...)
				}
				sum := msSummary(total.lat)
				b.ReportMetric(float64(total.acked)/total.elapsed.Seconds(), "msgs/s")
				b.ReportMetric(sum.P50, "p50-ms")
				b.ReportMetric(sum.P99, "p99-ms")
				b.ReportMetric(0, "lost")
			})
		}
	}
}

// BenchmarkDelivery is B4 in one process: a sender (its own store) sends
// 50 messages at random 10-30 ms gaps while a watcher (its own store)
// waits on Watch, reads the unread messages on each kick and marks them
// read. Reported: latency from Send's return to the watcher's Read that
// first shows the message (negative when the watcher was faster than the
// acknowledgement), and from Send's call (call-p50-ms, call-p99-ms).
func BenchmarkDelivery(b *testing.B) {
	srv := startServer(b, "")
	fsync := &testServer{dir: b.TempDir(), port: -1, syncAlways: true}
	fsync.start(b)
	b.Cleanup(fsync.stop)
	const n = 50
	run := 0
	for _, store := range []string{"file", "nats-fsync", "nats"} {
		b.Run(store, func(b *testing.B) {
			var lat, latCall []time.Duration
			for b.Loop() {
				run++
				be := newBackend(b, store, srv, fsync, fmt.Sprintf("deliver%d", run))
				r, c := runDelivery(b, be, n)
				lat, latCall = append(lat, r...), append(latCall, c...)
			}
			sum, call := msSummary(lat), msSummary(latCall)
			b.ReportMetric(sum.P50, "p50-ms")
			b.ReportMetric(sum.P99, "p99-ms")
			b.ReportMetric(call.P50, "call-p50-ms")
			b.ReportMetric(call.P99, "call-p99-ms")
		})
	}
}

// runDelivery runs one B4 round and returns each message's latency from
// its Send's return and from its Send's call.
func runDelivery(b *testing.B, be backend, n int) (fromReturn, fromCall []time.Duration) {
	teams, _, closeStore := be.open(b)
	defer closeStore()
	ctx := b.Context()
	if _, err := team.Create(ctx, teams, team.CreateOptions{Name: "bench", Now: time.Now(), Pick: rand.IntN}); err != nil {
		b.Fatal(err)
	}
	_, watcher, closeW := be.open(b)
	defer closeW()
	_, sender, closeS := be.open(b)
	defer closeS()
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	kicks, err := watcher.Watch(wctx, "bench", team.LeadName)
	if err != nil {
		b.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]time.Time{} // guarded by mu
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range kicks {
			msgs, err := watcher.Read(ctx, "bench", team.LeadName, true)
			now := time.Now()
			if err != nil {
				b.Error(err)
				return
			}
			var ids []string
			mu.Lock()
			for _, m := range msgs {
				if _, ok := seen[m.Text]; !ok {
					seen[m.Text] = now
				}
				ids = append(ids, m.ID)
			}
			all := len(seen) == n
			mu.Unlock()
			if _, err := watcher.MarkRead(ctx, "bench", team.LeadName, ids); err != nil {
				b.Error(err)
				return
			}
			if all {
				return
			}
		}
	}()
	returned := make(map[string]time.Time, n)
	called := make(map[string]time.Time, n)
	for i := range n {
		time.Sleep(time.Duration(10+rand.IntN(21)) * time.Millisecond)
		text := fmt.Sprintf("delivery %d", i)
		called[text] = time.Now()
		if _, err := sender.Send(ctx, "bench", team.LeadName, mailbox.Message{From: "w", Text: text}); err != nil {
			b.Fatal(err)
		}
		returned[text] = time.Now()
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		b.Fatal("the watcher did not see every message within 30s of the last send")
	}
	mu.Lock()
	defer mu.Unlock()
	for text, at := range returned {
		fromReturn = append(fromReturn, seen[text].Sub(at))
		fromCall = append(fromCall, seen[text].Sub(called[text]))
	}
	return fromReturn, fromCall
}

// BenchmarkCluster runs B4 (delivery) and B1 (W = 1, 16 × 200) on a
// three-server cluster on loopback, where every stream has three replicas,
// beside one server ("single", same flush settings: JetStream's default).
func BenchmarkCluster(b *testing.B) {
	c := startCluster(b)
	srv := startServer(b, "")
	run := 0
	for _, store := range []string{"single", "cluster"} {
		be := func() backend {
			run++
			ns := fmt.Sprintf("cl%d", run)
			if store == "cluster" {
				return &natsBackend{urls: c.urls(), ns: ns}
			}
			return &natsBackend{srv: srv, ns: ns}
		}
		b.Run("B4/"+store, func(b *testing.B) {
			var lat, latCall []time.Duration
			for b.Loop() {
				r, cl := runDelivery(b, be(), 50)
				lat, latCall = append(lat, r...), append(latCall, cl...)
			}
			sum, call := msSummary(lat), msSummary(latCall)
			b.ReportMetric(sum.P50, "p50-ms")
			b.ReportMetric(sum.P99, "p99-ms")
			b.ReportMetric(call.P50, "call-p50-ms")
			b.ReportMetric(call.P99, "call-p99-ms")
		})
		b.Run("B4/"+store+"/nats-floor", func(b *testing.B) {
			url, replicas := srv.url(), 1
			if store == "cluster" {
				url, replicas = c.urls(), 3
			}
			var lat []time.Duration
			for b.Loop() {
				run++
				lat = append(lat, runFloor(b, url, fmt.Sprintf("FLOOR%d", run), replicas, 50)...)
			}
			sum := msSummary(lat)
			b.ReportMetric(sum.P50, "call-p50-ms")
			b.ReportMetric(sum.P99, "call-p99-ms")
		})
		for _, w := range []int{1, 16} {
			b.Run(fmt.Sprintf("B1/W=%d/M=200/%s", w, store), func(b *testing.B) {
				var total writersRun
				for b.Loop() {
					r := runWriters(b, be(), w, 200, 0)
					total.elapsed += r.elapsed
					total.acked += r.acked
					total.lat = append(total.lat, r.lat...)
				}
				sum := msSummary(total.lat)
				b.ReportMetric(float64(total.acked)/total.elapsed.Seconds(), "msgs/s")
				b.ReportMetric(sum.P50, "p50-ms")
				b.ReportMetric(sum.P99, "p99-ms")
			})
		}
	}
}

// BenchmarkReadUnread is a woken teammate's read of its inbox: one new
// message beside the read ones an inbox keeps (KeepRead, 100 by default),
// each of the peer's 300-character workload.
//
//	go test -run='^$' -bench=ReadUnread -benchmem ./store/nats/
func BenchmarkReadUnread(b *testing.B) {
	srv := startServer(b, "")
	s := srv.open(b, natsstore.Options{})
	newCrew(b, s)
	ctx := b.Context()
	var ids []string
	for i := range natsstore.DefaultKeepRead {
		d, err := s.Mail().Send(ctx, "crew", "bob", mailbox.Message{From: "alice", Text: benchText(strconv.Itoa(i))})
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, d[0].ID)
	}
	if _, err := s.Mail().MarkRead(ctx, "crew", "bob", ids); err != nil {
		b.Fatal(err)
	}
	if _, err := s.Mail().Send(ctx, "crew", "bob", mailbox.Message{From: "alice", Text: benchText("new")}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		got, err := s.Mail().Read(ctx, "crew", "bob", true)
		if err != nil || len(got) != 1 {
			b.Fatalf("Read = %d messages, %v; want the new one", len(got), err)
		}
	}
}

// runFloor is B4's floor in NATS itself, with none of the store: a
// message published to a stream of the given replicas, delivered by a
// headers-only ordered consumer on another connection (an inbox watch),
// then fetched by a direct get (the read), each n times at B4's pace. It
// returns each message's time from the publish call to the get's answer.
func runFloor(b *testing.B, url, stream string, replicas, n int) []time.Duration {
	ctx := b.Context()
	pub, sub := jetStream(b, url), jetStream(b, url)
	subject := stream + ".inbox"
	if _, err := pub.CreateStream(ctx, jetstream.StreamConfig{Name: stream, Subjects: []string{subject}, Replicas: replicas, AllowDirect: true}); err != nil {
		b.Fatal(err)
	}
	defer pub.DeleteStream(context.WithoutCancel(ctx), stream)
	str, err := sub.Stream(ctx, stream)
	if err != nil {
		b.Fatal(err)
	}
	cons, err := str.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}, HeadersOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	delivered := make(chan uint64, n)
	cc, err := cons.Consume(func(m jetstream.Msg) {
		if md, err := m.Metadata(); err == nil {
			delivered <- md.Sequence.Stream
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	defer cc.Stop()
	var out []time.Duration
	for i := range n {
		time.Sleep(time.Duration(10+rand.IntN(21)) * time.Millisecond)
		start := time.Now()
		if _, err := pub.Publish(ctx, subject, []byte(benchText(strconv.Itoa(i)))); err != nil {
			b.Fatal(err)
		}
		var seq uint64
		select {
		case seq = <-delivered:
		case <-time.After(10 * time.Second):
			b.Fatalf("message %d not delivered within 10s", i)
		}
		for {
			_, err := str.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subject))
			if err == nil {
				break
			}
			if !errors.Is(err, jetstream.ErrMsgNotFound) {
				b.Fatal(err)
			}
			time.Sleep(100 * time.Microsecond) // a replica still applying it
		}
		out = append(out, time.Since(start))
	}
	return out
}
