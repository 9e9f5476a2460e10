package schedule

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/tool"
)

// call runs the tool named name of s on input.
func call(t *testing.T, s *Schedule, name, input string) tool.Result {
	t.Helper()
	reg, err := tool.NewRegistry(s.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	tl, ok := reg.Get(name)
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	if !json.Valid(tl.Spec().InputSchema) {
		t.Fatalf("%s's schema is not JSON: %s", name, tl.Spec().InputSchema)
	}
	r, err := tl.Run(context.Background(), tool.Call{Name: name, Input: json.RawMessage(input)})
	if err != nil {
		t.Fatalf("%s(%s) = Go error %v; want a result", name, input, err)
	}
	return r
}

func TestTools(t *testing.T) {
	s, _ := New(Config{Fire: func(Firing) {}}, State{})
	tests := []struct {
		name, tool, input string
		isError           bool
		want              string
	}{
		{"create", NameCronCreate, `{"cron":"*/5 * * * *","prompt":"check CI"}`, false, "Scheduled recurring job"},
		{"one-shot", NameCronCreate, `{"cron":"30 14 * * *","prompt":"remind","recurring":false,"durable":true}`, false, "one-shot"},
		{"bad cron", NameCronCreate, `{"cron":"*/5 * * *","prompt":"x"}`, true, "want 5 fields"},
		{"unknown field", NameCronCreate, `{"schedule":"* * * * *","prompt":"x"}`, true, "unknown field"},
		{"list", NameCronList, `{}`, false, "*/5 * * * *  recurring"},
		{"delete missing", NameCronDelete, `{"id":"nope"}`, true, `no job "nope"`},
		{"wake short", NameScheduleWakeup, `{"delaySeconds":30,"reason":"r","prompt":"p"}`, true, "want 60 to 3600 seconds"},
		{"wake long", NameScheduleWakeup, `{"delaySeconds":3601,"reason":"r","prompt":"p"}`, true, "want 60 to 3600 seconds"},
		{"wake no delay", NameScheduleWakeup, `{"prompt":"p"}`, true, "delaySeconds is missing"},
		{"wake", NameScheduleWakeup, `{"delaySeconds":270,"reason":"CI","prompt":"look again"}`, false, "Will wake at"},
		{"list wake", NameCronList, `{}`, false, "Wakeup at"},
		{"stop", NameScheduleWakeup, `{"stop":true}`, false, "Cancelled the pending wakeup"},
		{"stop again", NameScheduleWakeup, `{"stop":true}`, false, "No wakeup was pending"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, s, tt.tool, tt.input)
			if r.IsError != tt.isError || !strings.Contains(r.Content, tt.want) {
				t.Fatalf("%s(%s) = %+v; want IsError %v and %q", tt.tool, tt.input, r, tt.isError, tt.want)
			}
		})
	}
	id := regexp.MustCompile(`[0-9a-f]{8}`).FindString(Listing(s.State()))
	if r := call(t, s, NameCronDelete, `{"id":"`+id+`"}`); r.IsError || len(s.List()) != 1 {
		t.Fatalf("CronDelete(%s) = %+v, %d jobs left; want 1", id, r, len(s.List()))
	}
	if w := s.State().Wakeup; w != nil {
		t.Fatalf("wakeup %+v after stop; want none", w)
	}
}
