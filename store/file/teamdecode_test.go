package file

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/internal/atomicfile"
	"github.com/troupe-dev/troupe/team"
)

// decodePrev is the snapshot the decode tests read after: a team of three
// as this store writes it.
func decodePrev(t testing.TB) *teamSnap {
	var c team.Config
	if err := json.Unmarshal([]byte(teamFileSeeds[2]), &c); err != nil {
		t.Fatal(err)
	}
	raw, members, err := encodeConfig(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	snap := newSnap(raw, c, atomicfile.Identity{}, time.Now())
	snap.members = members
	return snap
}

// checkDecode fails unless decodeTeamFile(data, prev) is json.Unmarshal's
// decoding (or fails when it does), and the member encodings it reports
// are canonical: an update from its snapshot writes MarshalIndent's bytes.
func checkDecode(t *testing.T, data []byte, prev *teamSnap) {
	t.Helper()
	var want team.Config
	wantErr := json.Unmarshal(data, &want)
	got, members, err := decodeTeamFile(data, prev)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("decodeTeamFile error %v; json.Unmarshal's %v", err, wantErr)
	}
	if err != nil {
		return
	}
	g, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	w, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(g, w) {
		t.Fatalf("decodeTeamFile =\n%s\nwant (json.Unmarshal)\n%s", g, w)
	}
	if members == nil {
		return
	}
	if len(members) != len(got.Members) {
		t.Fatalf("%d member encodings for %d members", len(members), len(got.Members))
	}
	for i, b := range members {
		if b == nil {
			continue
		}
		enc, err := encodeMember(got.Members[i])
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, enc) {
			t.Fatalf("member %d's encoding %s; want the canonical %s", i, b, enc)
		}
	}
	if _, err := json.MarshalIndent(got, "", "  "); err == nil {
		snap := newSnap(data, got, atomicfile.Identity{}, time.Now())
		snap.members = members
		checkEncoding(t, got, snap)
	}
}

func TestDecodeTeamFile(t *testing.T) {
	prev := decodePrev(t)
	flip := func(i int) []byte {
		c := prev.cfg.Clone()
		v := !c.Members[i].Active()
		c.Members[i].IsActive = &v
		b, err := json.MarshalIndent(c, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := []struct {
		name string
		data []byte
	}{
		{"unchanged", prev.raw},
		{"one flag flipped", flip(1)},
		{"a member added", bytes.Replace(prev.raw, []byte("\n  ],"), []byte(",\n    {\"agentId\": \"z@s\", \"name\": \"z\", \"joinedAt\": 4, \"tmuxPaneId\": \"\", \"cwd\": \"/\", \"subscriptions\": []}\n  ],"), 1)},
		{"compact, as another writer may write it", []byte(teamFileSeeds[2])},
		{"members spelled in capitals", bytes.Replace(prev.raw, []byte(`"members"`), []byte(`"Members"`), 1)},
		{"members twice", bytes.Replace(prev.raw, []byte(`"name": "s",`), []byte(`"name": "s", "members": [],`), 1)},
		{"a trailing comma", bytes.Replace(prev.raw, []byte("}\n  ]"), []byte("},\n  ]"), 1)},
		{"a member that is not an object", bytes.Replace(prev.raw, []byte("\n  ],"), []byte(", 7\n  ],"), 1)},
		{"members null", []byte(`{"name":"s","createdAt":1,"leadAgentId":"team-lead@s","members":null}`)},
		{"not an object", []byte(`[1]`)},
		{"truncated", prev.raw[:len(prev.raw)/2]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkDecode(t, tt.data, prev) })
	}
	// Unchanged members are shared with the snapshot before.
	got, members, err := decodeTeamFile(flip(1), prev)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got.Members {
		shared := got.Members[i].AgentID == prev.cfg.Members[i].AgentID && members[i] != nil
		if want := i != 1; shared != want {
			t.Errorf("member %d reused from the snapshot before = %v; want %v", i, shared, want)
		}
	}
}

// FuzzDecodeTeamFile checks the decoder that reuses unchanged members
// against json.Unmarshal, on any bytes, after a snapshot of a team of three.
func FuzzDecodeTeamFile(f *testing.F) {
	prev := decodePrev(f)
	f.Add(prev.raw)
	for _, seed := range teamFileSeeds {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkDecode(t, data, prev) })
}

// BenchmarkDecodeTeamFile decodes a 1,000-member team file after another
// process flipped one member's flag: whole (json.Unmarshal), and reusing
// the snapshot before.
func BenchmarkDecodeTeamFile(b *testing.B) {
	c := team.Config{Name: "crew", LeadAgentID: "team-lead@crew"}
	for i := range 1000 {
		active := i%2 == 0
		c.Members = append(c.Members, team.Member{AgentID: "t" + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + "@crew", Name: "t" + string(rune('a'+i%26)) + string(rune('a'+i/26%26)),
			Color: "blue", JoinedAt: int64(i), TmuxPaneID: "in-process", Cwd: "/work", Subscriptions: []string{}, BackendType: "in-process", IsActive: &active})
	}
	raw, members, err := encodeConfig(c, nil)
	if err != nil {
		b.Fatal(err)
	}
	prev := newSnap(raw, c, atomicfile.Identity{}, time.Now())
	prev.members = members
	next := c.Clone()
	v := !next.Members[500].Active()
	next.Members[500].IsActive = &v
	data, err := json.MarshalIndent(next, "", "  ")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("whole", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var d team.Config
			if err := json.Unmarshal(data, &d); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("reusing", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := decodeTeamFile(data, prev); err != nil {
				b.Fatal(err)
			}
		}
	})
}
