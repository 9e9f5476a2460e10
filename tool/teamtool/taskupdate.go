package teamtool

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/tool"
)

// TaskUpdate is the TaskUpdate tool: it changes a task's fields, status,
// owner, dependencies and metadata, or deletes it. Taking a task for
// yourself (owner = your name, status in_progress) is a claim: among
// concurrent claimers exactly one wins. Giving a task to a teammate writes
// a task_assignment frame into its inbox.
type TaskUpdate struct{ e *env }

//go:embed taskupdate.md
var taskUpdateDescription string

const taskUpdateSchema = `{
  "type": "object",
  "properties": {
    "taskId": {"type": "string", "description": "The id of the task to update"},
    "subject": {"type": "string", "description": "New title"},
    "description": {"type": "string", "description": "New description"},
    "activeForm": {"type": "string", "description": "New present-continuous form shown while in progress"},
    "status": {"type": "string", "enum": ["pending", "in_progress", "completed", "deleted"], "description": "New status; deleted removes the task"},
    "addBlocks": {"type": "array", "items": {"type": "string"}, "description": "Ids of tasks that cannot start until this one is completed"},
    "addBlockedBy": {"type": "array", "items": {"type": "string"}, "description": "Ids of tasks that must be completed before this one"},
    "owner": {"type": "string", "description": "New owner (a member name); empty clears it"},
    "metadata": {"type": "object", "description": "Keys to merge into the task's metadata; a null value deletes the key"}
  },
  "required": ["taskId"],
  "additionalProperties": false
}`

// Spec implements tool.Tool.
func (*TaskUpdate) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "TaskUpdate", Description: taskUpdateDescription, InputSchema: json.RawMessage(taskUpdateSchema)}
}

// ReadOnly implements tool.Tool.
func (*TaskUpdate) ReadOnly(json.RawMessage) bool { return false }

type taskUpdateIn struct {
	TaskID       string          `json:"taskId"`
	Subject      *string         `json:"subject"`
	Description  *string         `json:"description"`
	ActiveForm   *string         `json:"activeForm"`
	Status       *string         `json:"status"`
	AddBlocks    []string        `json:"addBlocks"`
	AddBlockedBy []string        `json:"addBlockedBy"`
	Owner        *string         `json:"owner"`
	Metadata     json.RawMessage `json:"metadata"`
}

type statusChange struct {
	From tasklist.Status `json:"from"`
	To   tasklist.Status `json:"to"`
}

type taskUpdateOut struct {
	Success       bool          `json:"success"`
	TaskID        string        `json:"taskId"`
	UpdatedFields []string      `json:"updatedFields"`
	StatusChange  *statusChange `json:"statusChange,omitempty"`
	Warning       string        `json:"warning,omitempty"`
}

// parseUpdate checks a TaskUpdate input without I/O.
func parseUpdate(in taskUpdateIn) (string, tasklist.Update, error) {
	id, err := taskID("TaskUpdate", "taskId", in.TaskID)
	if err != nil {
		return "", tasklist.Update{}, err
	}
	u := tasklist.Update{Subject: in.Subject, Description: in.Description, ActiveForm: in.ActiveForm}
	if in.Subject != nil && strings.TrimSpace(*in.Subject) == "" {
		return "", u, errors.New("TaskUpdate: invalid input: subject may not be empty")
	}
	if in.Status != nil {
		s := tasklist.Status(strings.TrimSpace(*in.Status))
		if !s.Valid() && s != tasklist.StatusDeleted {
			return "", u, fmt.Errorf("TaskUpdate: invalid input: status %q is not one of pending, in_progress, completed, deleted", *in.Status)
		}
		u.Status = &s
	}
	if in.Owner != nil {
		o := strings.TrimSpace(*in.Owner)
		if strings.ContainsAny(o, "\r\n") {
			return "", u, errors.New("TaskUpdate: invalid input: owner must be a single member name")
		}
		u.Owner = &o
	}
	for _, e := range []struct {
		field string
		ids   []string
		dst   *[]string
	}{{"addBlocks", in.AddBlocks, &u.AddBlocks}, {"addBlockedBy", in.AddBlockedBy, &u.AddBlockedBy}} {
		for _, raw := range e.ids {
			x, err := taskID("TaskUpdate", e.field, raw)
			if err != nil {
				return "", u, err
			}
			if x == id {
				return "", u, fmt.Errorf("TaskUpdate: invalid input: %s names task #%s itself", e.field, id)
			}
			*e.dst = append(*e.dst, x)
		}
	}
	if u.Metadata, err = metadataIn("TaskUpdate", in.Metadata); err != nil {
		return "", u, err
	}
	deleting := u.Status != nil && *u.Status == tasklist.StatusDeleted
	others := u.Subject != nil || u.Description != nil || u.ActiveForm != nil || u.Owner != nil ||
		len(u.AddBlocks)+len(u.AddBlockedBy)+len(u.Metadata) > 0
	switch {
	case deleting && others:
		return "", u, errors.New("TaskUpdate: invalid input: status deleted removes the task; do not combine it with other changes")
	case !others && u.Status == nil:
		return "", u, errors.New("TaskUpdate: invalid input: nothing to update; give at least one of subject, description, activeForm, status, owner, addBlocks, addBlockedBy, metadata")
	}
	return id, u, nil
}

// Run implements tool.Tool.
func (tu *TaskUpdate) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	var in taskUpdateIn
	if res, ok := tool.Decode("TaskUpdate", call.Input, &in); !ok {
		return res, nil
	}
	id, u, err := parseUpdate(in)
	if err != nil {
		return tool.Result{Content: err.Error(), IsError: true}, nil
	}
	l, self, res, err := tu.e.list("TaskUpdate")
	if res != nil || err != nil {
		return derefResult(res), err
	}
	if u.Status != nil && *u.Status == tasklist.StatusDeleted {
		if err := l.Delete(ctx, id); err != nil {
			return taskErr(ctx, "TaskUpdate", id, err)
		}
		return jsonResult(taskUpdateOut{Success: true, TaskID: id, UpdatedFields: []string{"deleted"}})
	}
	if u.Owner != nil && *u.Owner != "" && *u.Owner != self.Name {
		if res, ok, err := tu.checkMember(ctx, self, *u.Owner); !ok {
			return res, err
		}
	}
	if u.Owner != nil && *u.Owner == self.Name && u.Status != nil && *u.Status == tasklist.StatusInProgress {
		return tu.claim(ctx, l, self, id, u)
	}
	if gate := tu.e.cfg.Hooks.TaskGate; gate != nil && u.Status != nil && *u.Status == tasklist.StatusCompleted {
		t, err := l.Get(ctx, id)
		if err != nil {
			return taskErr(ctx, "TaskUpdate", id, err)
		}
		if t.Status != tasklist.StatusCompleted {
			if refused, reason := gate(ctx, GateTaskCompleted, self, t); refused {
				return tool.Errorf("TaskUpdate: a TaskCompleted hook refused to complete task %s: %s", id, reason), nil
			}
		}
	}
	r, err := l.Update(ctx, id, u)
	if err != nil {
		return taskErr(ctx, "TaskUpdate", id, err)
	}
	out := taskUpdateOut{Success: true, TaskID: id, UpdatedFields: nonNil(r.Updated)}
	if r.From != "" {
		out.StatusChange = &statusChange{From: r.From, To: r.Task.Status}
	}
	if slices.Contains(r.Updated, "owner") && r.Task.Owner != "" && r.Task.Owner != self.Name {
		if err := tu.assign(ctx, self, r.Task); err != nil {
			if e := ctxErr(ctx); e != nil {
				return tool.Result{}, e
			}
			out.Warning = fmt.Sprintf("the task was assigned, but %s could not be told: %v", r.Task.Owner, err)
		}
	}
	return jsonResult(out)
}

// checkMember reports whether name is on the caller's roster, with the
// error Result listing the members when it is not.
func (tu *TaskUpdate) checkMember(ctx context.Context, self Self, name string) (tool.Result, bool, error) {
	if tu.e.cfg.Teams == nil {
		return tool.Result{}, false, errConfig("Teams")
	}
	c, err := tu.e.cfg.Teams.Get(ctx, self.Team)
	if err != nil {
		if e := ctxErr(ctx); e != nil {
			return tool.Result{}, false, e
		}
		return tool.Errorf("TaskUpdate: could not read team %q: %v", self.Team, err), false, nil
	}
	if _, ok := c.Member(name); !ok {
		return tool.Errorf("TaskUpdate: owner %q is not a member of team %q; members: %s", name, self.Team, strings.Join(rosterNames(c, ""), ", ")), false, nil
	}
	return tool.Result{}, true, nil
}

// claim takes task id for the caller through List.ClaimTask, then applies
// the rest of u.
func (tu *TaskUpdate) claim(ctx context.Context, l *tasklist.List, self Self, id string, u tasklist.Update) (tool.Result, error) {
	before, err := l.Get(ctx, id)
	if err != nil {
		return taskErr(ctx, "TaskUpdate", id, err)
	}
	t, err := l.ClaimTask(ctx, id, self.Name)
	if err != nil {
		return taskErr(ctx, "TaskUpdate", id, err)
	}
	out := taskUpdateOut{Success: true, TaskID: id, UpdatedFields: []string{}}
	if before.Owner != t.Owner {
		out.UpdatedFields = append(out.UpdatedFields, "owner")
	}
	if before.Status != t.Status {
		out.UpdatedFields = append(out.UpdatedFields, "status")
		out.StatusChange = &statusChange{From: before.Status, To: t.Status}
	}
	rest := u
	rest.Owner, rest.Status = nil, nil
	if rest.Subject != nil || rest.Description != nil || rest.ActiveForm != nil || len(rest.AddBlocks)+len(rest.AddBlockedBy)+len(rest.Metadata) > 0 {
		r, err := l.Update(ctx, id, rest)
		if err != nil {
			res, gerr := taskErr(ctx, "TaskUpdate", id, err)
			if gerr == nil {
				res.Content = fmt.Sprintf("%s (task #%s is now claimed by you; the other changes were not applied)", res.Content, id)
			}
			return res, gerr
		}
		out.UpdatedFields = append(out.UpdatedFields, r.Updated...)
	}
	return jsonResult(out)
}

// assign tells the new owner of t that it has the task.
func (tu *TaskUpdate) assign(ctx context.Context, self Self, t tasklist.Task) error {
	if tu.e.cfg.Mail == nil {
		return errConfig("Mail")
	}
	now := tu.e.now()
	text, err := mailbox.Encode(mailbox.TaskAssignment{TaskID: t.ID, Subject: t.Subject, Description: t.Description, AssignedBy: self.Name, Timestamp: stamp(now)})
	if err != nil {
		return err
	}
	_, err = tu.e.cfg.Mail.Send(ctx, self.Team, t.Owner, mailbox.Message{From: self.Name, Text: text, Color: self.Color, Timestamp: now})
	if res, ok := unknownRecipient("TaskUpdate", err); ok {
		return errors.New(res.Content)
	}
	return err
}
