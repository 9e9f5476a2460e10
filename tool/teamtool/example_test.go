package teamtool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/troupe-dev/troupe/store/mem"
	"github.com/troupe-dev/troupe/team"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/tool/teamtool"
)

// A teammate's tools: it takes a task from the shared list and tells the
// lead, whose inbox then holds the message.
func Example() {
	ctx := context.Background()
	st := mem.New(mem.Options{})
	defer st.Close()
	now := time.Date(2026, 12, 2, 13, 0, 0, 0, time.UTC)
	c, _ := team.Create(ctx, st.Teams(), team.CreateOptions{Name: "alpha", Now: now, Pick: func(int) int { return 0 }})
	helper, _ := team.AddMember(ctx, st.Teams(), c.Name, team.Member{Name: "helper", TmuxPaneID: team.PaneInProcess, BackendType: team.BackendInProcess}, now)

	self := teamtool.Self{Team: c.Name, Name: helper.Name, Color: helper.Color, PaneID: helper.TmuxPaneID, Backend: helper.BackendType}
	tools := map[string]tool.Tool{}
	for _, t := range teamtool.Tools(teamtool.Config{Teams: st.Teams(), Mail: st.Mail(), Tasks: st.Tasks(),
		Self: func() teamtool.Self { return self }, Now: func() time.Time { return now }}) {
		tools[t.Spec().Name] = t
	}
	call := func(name, input string) string {
		res, err := tools[name].Run(ctx, tool.Call{Name: name, Input: json.RawMessage(input)})
		if err != nil {
			return err.Error()
		}
		return res.Content
	}
	fmt.Println(call("TaskCreate", `{"subject": "Fix the parser", "description": "parse.go panics on empty input"}`))
	fmt.Println(call("TaskUpdate", `{"taskId": "1", "owner": "helper", "status": "in_progress"}`))
	call("SendMessage", `{"to": "team-lead", "message": "Took #1, the parser fix."}`)

	msgs, _ := st.Mail().Read(ctx, c.Name, team.LeadName, true)
	fmt.Printf("%s -> team-lead: %s\n", msgs[0].From, msgs[0].Text)
	// Output:
	// {"task":{"id":"1","subject":"Fix the parser"}}
	// {"success":true,"taskId":"1","updatedFields":["owner","status"],"statusChange":{"from":"pending","to":"in_progress"}}
	// helper -> team-lead: Took #1, the parser fix.
}
