package team_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/troupe-dev/troupe/team"
)

// decodeSeeds are team files as Claude Code and troupe write them, and
// ones a plain split must leave to json.Unmarshal.
var decodeSeeds = []string{
	`{"name":"s","createdAt":17,"leadAgentId":"team-lead@s","leadProcess":{"pid":3,"members":[]},
	  "members":[{"agentId":"team-lead@s","name":"team-lead","joinedAt":1,"tmuxPaneId":"leader","cwd":"/w","subscriptions":[]},
	  {"agentId":"a@s","name":"a","joinedAt":2,"tmuxPaneId":"%3","cwd":"/w","subscriptions":["x"],"isActive":false,"future":{"members":[]}},
	  {"agentId":"b@s","name":"b","prompt":"<html> & \"quotes\"\nline","joinedAt":3,"tmuxPaneId":"in-process","cwd":"/w","subscriptions":[],"isActive":true}],
	  "futureTopLevel":[1,{"deep":true}]}`,
	`{"name":"crew","createdAt":1,"leadAgentId":"team-lead@crew","members":[]}`,
	`{"name":"crew","createdAt":1,"leadAgentId":"team-lead@crew"}`,
	`{"name":"crew","Members":[],"members":[]}`,
	`{"name":"crew","members":[{"agentId":"a@crew","name":"a"},]}`,
	`{"name":"crew","members":null}`,
}

// checkReusing fails unless DecodeReusing(data), after prev decoded from
// prevData, is json.Unmarshal's decoding of data (or fails when it does).
func checkReusing(t *testing.T, prevData, data []byte) {
	t.Helper()
	prev, spans, _, err := team.DecodeReusing(prevData, nil, nil)
	if err != nil {
		t.Skip("the previous file does not decode")
	}
	var prevBytes [][]byte
	for _, sp := range spans {
		prevBytes = append(prevBytes, prevData[sp[0]:sp[1]])
	}
	var want team.Config
	wantErr := json.Unmarshal(data, &want)
	got, gotSpans, reused, err := team.DecodeReusing(data, team.MemberList(prev.Members), func(i int, b []byte) bool {
		return i < len(prevBytes) && bytes.Equal(prevBytes[i], b)
	})
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("DecodeReusing error %v; json.Unmarshal's %v", err, wantErr)
	}
	if err != nil {
		return
	}
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if !bytes.Equal(g, w) {
		t.Fatalf("DecodeReusing =\n%s\nwant (json.Unmarshal)\n%s", g, w)
	}
	if gotSpans != nil && (len(gotSpans) != len(got.Members) || len(reused) != len(got.Members)) {
		t.Fatalf("%d spans, %d reuse marks for %d members", len(gotSpans), len(reused), len(got.Members))
	}
}

func TestDecodeReusing(t *testing.T) {
	base := []byte(decodeSeeds[0])
	flipped := bytes.Replace(base, []byte(`"isActive":false`), []byte(`"isActive":true`), 1)
	for _, data := range append([][]byte{base, flipped}, func() [][]byte {
		var out [][]byte
		for _, s := range decodeSeeds[1:] {
			out = append(out, []byte(s))
		}
		return out
	}()...) {
		checkReusing(t, base, data)
	}
	prev, _, _, err := team.DecodeReusing(base, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _, reused, err := team.DecodeReusing(flipped, team.MemberList(prev.Members), func(i int, b []byte) bool { return i != 1 })
	if err != nil {
		t.Fatal(err)
	}
	if want := []bool{true, false, true}; len(reused) != 3 || reused[0] != want[0] || reused[1] != want[1] || reused[2] != want[2] {
		t.Errorf("reused = %v; want %v", reused, want)
	}
	if !got.Members[1].Active() {
		t.Errorf("member a decoded as idle; want the flipped flag (active)")
	}
}

// FuzzDecodeReusing checks DecodeReusing against json.Unmarshal on any
// bytes, after a snapshot of a team of three.
func FuzzDecodeReusing(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	base := []byte(decodeSeeds[0])
	f.Fuzz(func(t *testing.T, data []byte) { checkReusing(t, base, data) })
}
