package nats_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"unsafe"

	natsstore "github.com/troupe-dev/troupe/store/nats"
	"github.com/troupe-dev/troupe/team"
)

// TestTeamDecodeReusesMembers: a store that reads a team entry another
// store (process) changed decodes only the changed members, and reads
// exactly what the other wrote.
func TestTeamDecodeReusesMembers(t *testing.T) {
	srv := startServer(t, "")
	a := srv.open(t, natsstore.Options{Namespace: "dec"})
	b := srv.open(t, natsstore.Options{Namespace: "dec"})
	ctx := t.Context()
	if _, err := team.Create(ctx, a.Teams(), team.CreateOptions{Name: "crew", Now: testNow, Pick: func(int) int { return 0 }}); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, err := team.AddMember(ctx, a.Teams(), "crew", team.Member{Name: fmt.Sprintf("m%d", i), Cwd: fmt.Sprintf("/w/%d", i)}, testNow); err != nil {
			t.Fatal(err)
		}
	}
	same := func() {
		t.Helper()
		want, err := a.Teams().Get(ctx, "crew")
		if err != nil {
			t.Fatal(err)
		}
		got, err := b.Teams().Get(ctx, "crew")
		if err != nil {
			t.Fatal(err)
		}
		w, _ := json.Marshal(want)
		g, _ := json.Marshal(got)
		if string(w) != string(g) {
			t.Fatalf("another store reads\n%s\nwant\n%s", g, w)
		}
	}
	same()
	before, ok := natsstore.DecodedTeam(b, "crew")
	if !ok {
		t.Fatal("the reading store keeps no decoding of the team")
	}
	if err := team.SetActive(ctx, a.Teams(), "crew", "m2", false); err != nil {
		t.Fatal(err)
	}
	same()
	after, _ := natsstore.DecodedTeam(b, "crew")
	for i, m := range after.Members {
		shared := unsafe.StringData(m.Cwd) == unsafe.StringData(before.Members[i].Cwd)
		if changed := m.Name == "m2"; m.Cwd != "" && shared == changed {
			t.Errorf("member %s: decoding shared with the one before = %v; want %v", m.Name, shared, !changed)
		}
	}
	if _, err := team.AddMember(ctx, a.Teams(), "crew", team.Member{Name: "m9"}, testNow); err != nil {
		t.Fatal(err)
	}
	same()
	if err := team.RemoveMember(ctx, a.Teams(), "crew", "m0"); err != nil {
		t.Fatal(err)
	}
	same()
}
