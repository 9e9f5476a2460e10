package teamtool

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/tool"
)

// The task tools work on the caller's team's task list,
// tasklist.New(Config.Tasks, Self().Team).

// list returns the caller's task list, an error Result when the caller is
// in no team, or a Go error when the Config lacks what the call needs.
func (e *env) list(toolName string) (*tasklist.List, Self, *tool.Result, error) {
	self, err := e.self()
	if err != nil {
		return nil, self, nil, err
	}
	if e.cfg.Tasks == nil {
		return nil, self, nil, errConfig("Tasks")
	}
	if self.Team == "" {
		res := noTeam(toolName, self)
		return nil, self, &res, nil
	}
	return tasklist.New(e.cfg.Tasks, self.Team), self, nil, nil
}

// taskID normalizes a task id the model gave ("#3" → "3") and checks it.
func taskID(toolName, field, id string) (string, error) {
	id = strings.TrimPrefix(strings.TrimSpace(id), "#")
	switch {
	case id == "":
		return "", fmt.Errorf("%s: invalid input: %s is required (a task id such as \"3\", from TaskList)", toolName, field)
	case !tasklist.ValidID(id):
		return "", fmt.Errorf("%s: invalid input: %s %q is not a task id; ids are positive numbers such as \"3\"", toolName, field, id)
	}
	return id, nil
}

// taskErr turns a task list error into a Result the model can act on, or
// returns a Go error when ctx ended.
func taskErr(ctx context.Context, toolName, id string, err error) (tool.Result, error) {
	if e := ctxErr(ctx); e != nil {
		return tool.Result{}, e
	}
	var (
		claimed *tasklist.ClaimedError
		blocked *tasklist.BlockedError
		cycle   *tasklist.CycleError
	)
	switch {
	case errors.As(err, &claimed):
		return tool.Errorf("%s: task #%s is already claimed by %s; pick another task from TaskList, or ask %s with SendMessage", toolName, claimed.ID, claimed.Owner, claimed.Owner), nil
	case errors.As(err, &blocked):
		return tool.Errorf("%s: task #%s is blocked by open task(s) %s; those must be completed first", toolName, blocked.ID, hashIDs(blocked.Blockers)), nil
	case errors.As(err, &cycle):
		return tool.Errorf("%s: that dependency would close a cycle: %s", toolName, strings.Join(cycle.Path, " -> ")), nil
	case errors.Is(err, tasklist.ErrCompleted):
		return tool.Errorf("%s: task #%s is already completed", toolName, id), nil
	case errors.Is(err, tasklist.ErrNotFound):
		return tool.Errorf("%s: %v; TaskList shows the existing tasks", toolName, err), nil
	default:
		return tool.Errorf("%s: %v", toolName, err), nil
	}
}

func hashIDs(ids []string) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = "#" + id
	}
	return strings.Join(out, ", ")
}

// metadataIn checks a metadata input: a JSON object (or absent).
func metadataIn(toolName string, raw json.RawMessage) (map[string]json.RawMessage, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%s: invalid input: metadata must be a JSON object, got %s", toolName, abbrev(raw))
	}
	return m, nil
}

// TaskCreate is the TaskCreate tool: it adds a pending task to the team's
// task list.
type TaskCreate struct{ e *env }

//go:embed taskcreate.md
var taskCreateDescription string

const taskCreateSchema = `{
  "type": "object",
  "properties": {
    "subject": {"type": "string", "description": "A brief title in the imperative, such as \"Write the parser tests\""},
    "description": {"type": "string", "description": "What needs to be done, in enough detail for a teammate to do it"},
    "activeForm": {"type": "string", "description": "Present-continuous form shown while the task is in progress, such as \"Writing the parser tests\""},
    "metadata": {"type": "object", "description": "Optional free-form data to keep with the task"}
  },
  "required": ["subject", "description"],
  "additionalProperties": false
}`

// Spec implements tool.Tool.
func (*TaskCreate) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "TaskCreate", Description: taskCreateDescription, InputSchema: json.RawMessage(taskCreateSchema)}
}

// ReadOnly implements tool.Tool.
func (*TaskCreate) ReadOnly(json.RawMessage) bool { return false }

// Run implements tool.Tool.
func (c *TaskCreate) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	var in struct {
		Subject     string          `json:"subject"`
		Description *string         `json:"description"`
		ActiveForm  string          `json:"activeForm"`
		Metadata    json.RawMessage `json:"metadata"`
	}
	if res, ok := tool.Decode("TaskCreate", call.Input, &in); !ok {
		return res, nil
	}
	in.Subject = strings.TrimSpace(in.Subject)
	switch {
	case in.Subject == "":
		return tool.Errorf("TaskCreate: invalid input: subject is required (a brief imperative title)"), nil
	case in.Description == nil:
		return tool.Errorf("TaskCreate: invalid input: description is required (what needs to be done)"), nil
	}
	meta, err := metadataIn("TaskCreate", in.Metadata)
	if err != nil {
		return tool.Result{Content: err.Error(), IsError: true}, nil
	}
	for k, v := range meta {
		if string(v) == "null" {
			delete(meta, k)
		}
	}
	l, self, res, err := c.e.list("TaskCreate")
	if res != nil || err != nil {
		return derefResult(res), err
	}
	t, err := l.Create(ctx, tasklist.Draft{Subject: in.Subject, Description: *in.Description, ActiveForm: strings.TrimSpace(in.ActiveForm), Metadata: meta})
	if err != nil {
		return taskErr(ctx, "TaskCreate", "", err)
	}
	if gate := c.e.cfg.Hooks.TaskGate; gate != nil {
		if refused, reason := gate(ctx, GateTaskCreated, self, t); refused {
			if err := l.Delete(ctx, t.ID); err != nil {
				return taskErr(ctx, "TaskCreate", t.ID, err)
			}
			return tool.Errorf("TaskCreate: a TaskCreated hook refused task %q: %s", t.Subject, reason), nil
		}
	}
	type created struct {
		ID      string `json:"id"`
		Subject string `json:"subject"`
	}
	return jsonResult(struct {
		Task created `json:"task"`
	}{created{t.ID, t.Subject}})
}

// TaskGet is the TaskGet tool: one task with its dependencies.
type TaskGet struct{ e *env }

//go:embed taskget.md
var taskGetDescription string

const taskGetSchema = `{
  "type": "object",
  "properties": {
    "taskId": {"type": "string", "description": "The id of the task, such as \"3\""}
  },
  "required": ["taskId"],
  "additionalProperties": false
}`

// Spec implements tool.Tool.
func (*TaskGet) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "TaskGet", Description: taskGetDescription, InputSchema: json.RawMessage(taskGetSchema)}
}

// ReadOnly implements tool.Tool: reading the list changes nothing.
func (*TaskGet) ReadOnly(json.RawMessage) bool { return true }

// taskView is a task as TaskGet shows it.
type taskView struct {
	ID          string                     `json:"id"`
	Subject     string                     `json:"subject"`
	Description string                     `json:"description"`
	ActiveForm  string                     `json:"activeForm,omitempty"`
	Status      tasklist.Status            `json:"status"`
	Owner       string                     `json:"owner,omitempty"`
	Blocks      []string                   `json:"blocks"`
	BlockedBy   []string                   `json:"blockedBy"`
	Metadata    map[string]json.RawMessage `json:"metadata,omitempty"`
}

// Run implements tool.Tool.
func (g *TaskGet) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	var in struct {
		TaskID string `json:"taskId"`
	}
	if res, ok := tool.Decode("TaskGet", call.Input, &in); !ok {
		return res, nil
	}
	id, err := taskID("TaskGet", "taskId", in.TaskID)
	if err != nil {
		return tool.Result{Content: err.Error(), IsError: true}, nil
	}
	l, _, res, err := g.e.list("TaskGet")
	if res != nil || err != nil {
		return derefResult(res), err
	}
	t, err := l.Get(ctx, id)
	if err != nil {
		return taskErr(ctx, "TaskGet", id, err)
	}
	v := taskView{ID: t.ID, Subject: t.Subject, Description: t.Description, ActiveForm: t.ActiveForm, Status: t.Status, Owner: t.Owner,
		Blocks: nonNil(t.Blocks), BlockedBy: nonNil(t.BlockedBy), Metadata: t.Metadata}
	return jsonResult(struct {
		Task taskView `json:"task"`
	}{v})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// TaskList is the TaskList tool: every task, in id order.
type TaskList struct{ e *env }

//go:embed tasklist.md
var taskListDescription string

const taskListSchema = `{"type": "object", "properties": {}, "additionalProperties": false}`

// Spec implements tool.Tool.
func (*TaskList) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "TaskList", Description: taskListDescription, InputSchema: json.RawMessage(taskListSchema)}
}

// ReadOnly implements tool.Tool: reading the list changes nothing.
func (*TaskList) ReadOnly(json.RawMessage) bool { return true }

// Run implements tool.Tool.
func (tl *TaskList) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	var in struct{}
	if res, ok := tool.Decode("TaskList", call.Input, &in); !ok {
		return res, nil
	}
	l, _, res, err := tl.e.list("TaskList")
	if res != nil || err != nil {
		return derefResult(res), err
	}
	tasks, err := l.Tasks(ctx)
	var warning string
	if err != nil {
		if !errors.Is(err, tasklist.ErrCorrupt) {
			return taskErr(ctx, "TaskList", "", err)
		}
		warning = fmt.Sprintf("some tasks could not be read and are left out: %v", err)
	}
	type item struct {
		ID        string          `json:"id"`
		Subject   string          `json:"subject"`
		Status    tasklist.Status `json:"status"`
		Owner     string          `json:"owner,omitempty"`
		BlockedBy []string        `json:"blockedBy"`
	}
	out := struct {
		Tasks   []item `json:"tasks"`
		Warning string `json:"warning,omitempty"`
	}{Tasks: []item{}, Warning: warning}
	for _, t := range tasks {
		out.Tasks = append(out.Tasks, item{ID: t.ID, Subject: t.Subject, Status: t.Status, Owner: t.Owner,
			BlockedBy: nonNil(tasklist.OpenBlockers(t, tasks))})
	}
	return jsonResult(out)
}
