package nats_test

import (
	"fmt"
	"sync"
	"testing"

	natsstore "github.com/troupe-dev/troupe/store/nats"
	"github.com/troupe-dev/troupe/team"
)

// TestClusterConcurrentUpdates: members added to one team at once from
// three stores on a three-node cluster (R3) all land: a lost
// compare-and-swap is retried, whatever code the replicated stream gives
// it.
func TestClusterConcurrentUpdates(t *testing.T) {
	c := startCluster(t)
	var stores []*natsstore.Store
	for range 3 {
		s, err := natsstore.Open(t.Context(), c.urls(), natsstore.Options{Namespace: "cas"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		stores = append(stores, s)
	}
	if _, err := team.Create(t.Context(), stores[0].Teams(), team.CreateOptions{Name: "crew", Now: testNow, Pick: func(int) int { return 0 }}); err != nil {
		t.Fatal(err)
	}
	const each = 8
	var wg sync.WaitGroup
	errs := make(chan error, 3*each)
	for i, s := range stores {
		for j := range each {
			wg.Go(func() {
				if _, err := team.AddMember(t.Context(), s.Teams(), "crew", team.Member{Name: fmt.Sprintf("m%d-%d", i, j)}, testNow); err != nil {
					errs <- err
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("AddMember on the cluster: %v; want every concurrent update to land", err)
	}
	cfg, err := stores[1].Teams().Get(t.Context(), "crew")
	if err != nil {
		t.Fatal(err)
	}
	if got := len(cfg.Members); got != 3*each+1 {
		t.Errorf("team has %d members; want %d (the lead and every one added)", got, 3*each+1)
	}
}
