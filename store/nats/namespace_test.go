package nats_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	natsstore "github.com/troupe-dev/troupe/store/nats"
)

// TestDeleteNamespace: the streams and buckets troupe made in a namespace
// are deleted; another namespace, and a stream of the same name pattern
// that troupe did not make, are left alone.
func TestDeleteNamespace(t *testing.T) {
	ts := startServer(t, "")
	gone := ts.open(t, natsstore.Options{Namespace: "gone"})
	newCrew(t, gone)
	if _, err := gone.Jobs(t.Context(), natsstore.JobOptions{}); err != nil {
		t.Fatal(err)
	}
	kept := ts.open(t, natsstore.Options{Namespace: "kept"})
	newCrew(t, kept)

	js := jetStream(t, ts.url())
	if _, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: "gone_v1_foreign", Subjects: []string{"foreign.>"}}); err != nil {
		t.Fatal(err)
	}

	err := gone.DeleteNamespace(t.Context())
	if err == nil || !strings.Contains(err.Error(), "gone_v1_foreign") {
		t.Errorf("DeleteNamespace error = %v; want one naming the stream troupe did not make", err)
	}
	var names []string
	lister := js.StreamNames(t.Context())
	for n := range lister.Name() {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if strings.Contains(n, "gone_") && n != "gone_v1_foreign" {
			t.Errorf("stream %s survived DeleteNamespace", n)
		}
	}
	for _, want := range append(troupeStreams("kept"), "gone_v1_foreign") {
		if !slices.Contains(names, want) {
			t.Errorf("stream %s was deleted; want it kept (streams: %v)", want, names)
		}
	}
	if _, err := kept.Teams().Get(t.Context(), "crew"); err != nil {
		t.Errorf("team of the other namespace: %v", err)
	}
}
