package nats_test

import (
	"testing"

	natsstore "github.com/troupe-dev/troupe/store/nats"
)

// TestConsumerLimit: troupe's streams and buckets allow far more consumers
// than the server's default of 1,000 per stream, which a team of a
// thousand idle teammates (an inbox and a task-list watch each) reaches;
// so do those of a store opened before the limit was set.
func TestConsumerLimit(t *testing.T) {
	ts := startServer(t, "")
	ts.open(t, natsstore.Options{Namespace: "many"})
	js := jetStream(t, ts.url())
	check := func(when string) {
		t.Helper()
		for _, name := range troupeStreams("many") {
			str, err := js.Stream(t.Context(), name)
			if err != nil {
				t.Fatalf("stream %s: %v", name, err)
			}
			if got := str.CachedInfo().Config.MaxConsumers; got < 100_000 {
				t.Errorf("%s: stream %s allows %d consumers; want far more than the server's default of 1,000", when, name, got)
			}
		}
	}
	check("after the first open")
	// An older deployment's streams, back at the server's default, are
	// raised by the next open.
	for _, name := range troupeStreams("many") {
		str, err := js.Stream(t.Context(), name)
		if err != nil {
			t.Fatal(err)
		}
		cfg := str.CachedInfo().Config
		cfg.MaxConsumers = -1
		if _, err := js.UpdateStream(t.Context(), cfg); err != nil {
			t.Fatalf("reset the limit of %s: %v", name, err)
		}
	}
	ts.open(t, natsstore.Options{Namespace: "many"})
	check("after a later open")
}
