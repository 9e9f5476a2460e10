package file

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/troupe-dev/troupe/team"
)

// decodePrev is the snapshot the decode tests read after: a team of three
// as this store writes it.
func decodePrev(t testing.TB) *teamSnap {
	var c team.Config
	if err := json.Unmarshal([]byte(teamFileSeeds[2]), &c); err != nil {
		t.Fatal(err)
	}
	snap, err := encodeSnap(c, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// checkDecode fails unless decodeSnap(data, prev) is json.Unmarshal's
// decoding (or fails when it does), the member encodings it calls
// canonical are, and an update from its snapshot writes MarshalIndent's
// bytes.
func checkDecode(t *testing.T, data []byte, prev *teamSnap) {
	t.Helper()
	var want team.Config
	wantErr := json.Unmarshal(data, &want)
	snap, err := decodeSnap(data, prev)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("decodeSnap error %v; json.Unmarshal's %v", err, wantErr)
	}
	if err != nil {
		return
	}
	got := snap.config()
	g, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	w, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(g, w) {
		t.Fatalf("decodeSnap =\n%s\nwant (json.Unmarshal)\n%s", g, w)
	}
	if !snap.equal(data) {
		t.Fatalf("decoded snapshot not equal to its bytes")
	}
	for i, e := range snap.members {
		if !e.canon {
			continue
		}
		enc, err := encodeMember(got.Members[i])
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(e.enc, enc) {
			t.Fatalf("member %d's encoding %s; want the canonical %s", i, e.enc, enc)
		}
	}
	if _, err := json.MarshalIndent(got, "", "  "); err == nil {
		checkEncoding(t, got, snap)
		// An edit from the decoded snapshot writes MarshalIndent's bytes.
		if len(got.Members) > 0 {
			d := newDraft(snap)
			name := got.Members[len(got.Members)-1].Name
			// The name is on the roster, and the roster encodes
			// (MarshalIndent above): the edit has no reason to fail.
			if _, err := d.apply(team.ActiveEdit(name, !got.Members[len(got.Members)-1].Active())); err != nil {
				t.Fatalf("flag edit of %q from the decoded snapshot: %v", name, err)
			}
			next, err := d.snap()
			if err != nil {
				t.Fatal(err)
			}
			c := next.config()
			if w, _ := json.MarshalIndent(c, "", "  "); !bytes.Equal(next.bytes(), w) {
				t.Fatalf("edit from the decoded snapshot wrote\n%s\nwant (MarshalIndent)\n%s", next.bytes(), w)
			}
		}
	}
}

func TestDecodeTeamFile(t *testing.T) {
	prev := decodePrev(t)
	prevRaw := prev.bytes()
	flip := func(i int) []byte {
		c := prev.config()
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
		{"unchanged", prevRaw},
		{"one flag flipped", flip(1)},
		{"a member added", bytes.Replace(prevRaw, []byte("\n  ],"), []byte(",\n    {\"agentId\": \"z@s\", \"name\": \"z\", \"joinedAt\": 4, \"tmuxPaneId\": \"\", \"cwd\": \"/\", \"subscriptions\": []}\n  ],"), 1)},
		{"compact, as another writer may write it", []byte(teamFileSeeds[2])},
		{"members spelled in capitals", bytes.Replace(prevRaw, []byte(`"members"`), []byte(`"Members"`), 1)},
		{"members twice", bytes.Replace(prevRaw, []byte(`"name": "s",`), []byte(`"name": "s", "members": [],`), 1)},
		{"a trailing comma", bytes.Replace(prevRaw, []byte("}\n  ]"), []byte("},\n  ]"), 1)},
		{"a member that is not an object", bytes.Replace(prevRaw, []byte("\n  ],"), []byte(", 7\n  ],"), 1)},
		{"members null", []byte(`{"name":"s","createdAt":1,"leadAgentId":"team-lead@s","members":null}`)},
		{"not an object", []byte(`[1]`)},
		{"truncated", prevRaw[:len(prevRaw)/2]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkDecode(t, tt.data, prev) })
	}
	// Unchanged members are shared with the snapshot before.
	got, err := decodeSnap(flip(1), prev)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got.members {
		shared := got.members[i] == prev.members[i]
		if want := i != 1; shared != want {
			t.Errorf("member %d reused from the snapshot before = %v; want %v", i, shared, want)
		}
	}
}

// FuzzDecodeTeamFile checks the decoder that reuses unchanged members
// against json.Unmarshal, on any bytes, after a snapshot of a team of three.
func FuzzDecodeTeamFile(f *testing.F) {
	prev := decodePrev(f)
	f.Add(prev.bytes())
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
	prev, err := encodeSnap(c, nil, true)
	if err != nil {
		b.Fatal(err)
	}
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
			if _, err := decodeSnap(data, prev); err != nil {
				b.Fatal(err)
			}
		}
	})
}
