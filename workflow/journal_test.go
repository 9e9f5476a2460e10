package workflow

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestReadJournal(t *testing.T) {
	in := `{"index":1,"digest":"b","result":"\"two\"","usage":{"input_tokens":1,"output_tokens":2}}
{"index":0,"digest":"a","result":"\"one\"","usage":{"input_tokens":1,"output_tokens":2}}
{"index":0,"digest":"z","error":"a repeat is ignored","usage":{"input_tokens":0,"output_tokens":0}}

{"index":2,"digest":"c","error":"model down","usage":{"input_tokens":0,"output_tokens":0}}
{"index":3,"digest":"d","res`
	got, err := ReadJournal(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	var idx []int
	for _, e := range got {
		idx = append(idx, e.Index)
	}
	if len(got) != 3 || idx[0] != 0 || idx[1] != 1 || idx[2] != 2 || got[0].Digest != "a" || got[2].Error != "model down" {
		t.Errorf("ReadJournal = %+v; want indexes 0, 1, 2 (the torn last line dropped)", got)
	}
}

func FuzzReadJournal(f *testing.F) {
	f.Add([]byte(`{"index":0,"digest":"a","result":"\"x\"","usage":{}}` + "\n"))
	f.Add([]byte(`{"index":-1,"digest":"a"}` + "\n" + `{"index":0}`))
	f.Add([]byte("\n\n{\"index\":3,\"digest\":\"q\",\"result\":{\"a\":[1,2]}}\n{"))
	f.Add([]byte(`{"index":0,"digest":"a","result":"\"x\""}` + "\n" + `{"index":0,"digest":"a","error":"e"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ReadJournal(bytes.NewReader(data))
		if err != nil {
			return
		}
		seen := map[int]bool{}
		for i, e := range got {
			if e.Index < 0 || e.Digest == "" || seen[e.Index] {
				t.Fatalf("entry %d = %+v: bad index, empty digest or repeat", i, e)
			}
			seen[e.Index] = true
			if i > 0 && got[i-1].Index >= e.Index {
				t.Fatalf("entries not sorted: %d then %d", got[i-1].Index, e.Index)
			}
			if e.Error == "" && !json.Valid(e.Result) {
				t.Fatalf("entry %d has neither a valid result nor an error", i)
			}
		}
	})
}
