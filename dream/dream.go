// Package dream runs memory consolidation: a background agent (a task of
// type dream, id prefix d) that reads the transcripts of the sessions
// since the last dream and merges, updates and prunes a project's memory
// folder (package github.com/troupe-dev/troupe/memory) through tools that
// can write only there. A dream holds the folder's lock: two sessions
// never dream at once, and a dream that fails or is stopped restores the
// previous dream's time so that it runs again.
package dream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/memory"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tool"
)

// Phases shown in the task's detail.
const (
	PhaseStarting = "starting"
	PhaseUpdating = "updating"
)

// ErrBusy: another session is dreaming (memory.ErrBusy).
var ErrBusy = memory.ErrBusy

// Config configures a dream.
type Config struct {
	Model     llm.Model
	ModelName string
	// MemoryDir is the project's memory folder; SessionsDir holds one
	// folder of transcripts per session; Current is this session's id
	// (its transcripts are not reviewed: it is still going).
	MemoryDir, SessionsDir, Current string
	// Tools returns the dream agent's tools: Read, Glob and Grep, and
	// Write and Edit guarded by memory.Guard(MemoryDir). Required.
	Tools func(memoryDir string) (*tool.Registry, error)
	// Approver judges the agent's calls; nil allows what the tools allow.
	Approver agent.Approver
	// Lock overrides the folder's lock (tests: its clock).
	Lock *memory.Lock
	// Filter, when set, keeps only the sessions it accepts (those of
	// this project).
	Filter func(session string) bool
}

// Start starts a dream as a task of reg and returns its id. It fails with
// ErrBusy while another session dreams, and when there is nothing to
// review (no session since the last dream) with ErrNothing.
func Start(reg *task.Registry, cfg Config) (task.ID, error) {
	if cfg.Tools == nil || cfg.Model == nil {
		return "", errors.New("dream: no model or tools")
	}
	lock := memory.Lock{Dir: cfg.MemoryDir}
	if cfg.Lock != nil {
		lock = *cfg.Lock
	}
	held, err := lock.Acquire()
	if err != nil {
		return "", err
	}
	sessions, err := memory.SessionsSince(cfg.SessionsDir, held.Prior, cfg.Current)
	if cfg.Filter != nil {
		sessions = slices.DeleteFunc(sessions, func(s string) bool { return !cfg.Filter(s) })
	}
	if err == nil && len(sessions) == 0 {
		err = ErrNothing
	}
	var tools *tool.Registry
	if err == nil {
		tools, err = cfg.Tools(cfg.MemoryDir)
	}
	if err != nil {
		_ = held.Rollback()
		return "", err
	}
	slices.Sort(sessions)
	// The approver lets the agent read these sessions only, not the other
	// projects' beside them.
	switch a := cfg.Approver.(type) {
	case Approver:
		a.Sessions = sessions
		cfg.Approver = a
	case *Approver:
		c := *a
		c.Sessions = sessions
		cfg.Approver = c
	}
	detail := &task.DreamDetail{Phase: PhaseStarting, SessionsReviewing: len(sessions), PriorMtime: held.Prior}
	st := task.State{ID: task.NewID(task.Dream), Type: task.Dream, Description: "dreaming: consolidating memory", Detail: detail}
	var touchedMu sync.Mutex
	var touched []string
	s, err := reg.Go(st, func(ctx context.Context, id task.ID) task.Outcome {
		ag, err := agent.New(agent.Config{Model: cfg.Model, ModelName: cfg.ModelName, Tools: tools, Approver: cfg.Approver,
			System: systemPrompt(cfg.MemoryDir), MaxTurns: 60,
			OnEvent: func(e agent.Event) {
				if e.Type != agent.EventToolResult || e.Call == nil || (e.Call.Name != "Write" && e.Call.Name != "Edit") ||
					e.ToolResult == nil || e.ToolResult.IsError {
					return
				}
				touchedMu.Lock()
				if p := filePath(e.Call.Input); p != "" && !slices.Contains(touched, p) {
					touched = append(touched, p)
				}
				files := slices.Clone(touched)
				touchedMu.Unlock()
				reg.Update(id, func(s task.State) task.State {
					s.Detail = &task.DreamDetail{Phase: PhaseUpdating, SessionsReviewing: len(sessions), FilesTouched: files, PriorMtime: held.Prior}
					return s
				})
			}})
		if err != nil {
			_ = held.Rollback()
			return task.Outcome{Status: task.Failed}
		}
		defer ag.Kill()
		res, err := ag.Run(ctx, prompt(cfg, sessions))
		if err != nil || res.Interrupted {
			_ = held.Rollback() // due again next time
			return task.Outcome{Status: task.Failed, Record: func(s task.State) task.State {
				s.Description = fmt.Sprintf("dream failed: %v", err)
				return s
			}}
		}
		if err := held.Release(); err != nil {
			return task.Outcome{Status: task.Failed}
		}
		return task.Outcome{Status: task.Completed, Record: func(s task.State) task.State {
			touchedMu.Lock()
			s.Description = fmt.Sprintf("memory consolidated from %d session(s); files: %s", len(sessions), strings.Join(touched, ", "))
			touchedMu.Unlock()
			return s
		}}
	})
	if err != nil {
		_ = held.Rollback()
		return "", err
	}
	return s.ID, nil
}

// ErrNothing: no session since the last dream to consolidate.
var ErrNothing = errors.New("no session since the last dream: nothing to consolidate")

func filePath(input []byte) string {
	var in struct {
		FilePath string `json:"file_path"`
	}
	if json.Unmarshal(input, &in) != nil || in.FilePath == "" {
		return ""
	}
	return filepath.Base(in.FilePath)
}

func systemPrompt(dir string) string {
	return "You are troupe's memory consolidation agent (a dream). You maintain the memory folder " + dir + ": MEMORY.md, an index of one line per topic file with a link, and topic files (*.md) holding what future sessions of this project should know: decisions, conventions, pitfalls, where things are, the user's preferences. " +
		"You can write only Markdown files directly in that folder. Merge new facts into existing files, update what changed, delete what is wrong or stale (write the file without it), keep every file short and factual, and keep MEMORY.md under 200 lines. Never record secrets."
}

func prompt(cfg Config, sessions []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Consolidate memory from %d session(s) since the last dream. Their transcripts (JSON lines, one event a line) are in:\n", len(sessions))
	for _, s := range sessions {
		fmt.Fprintf(&b, "- %s\n", filepath.Join(cfg.SessionsDir, s))
	}
	fmt.Fprintf(&b, "\nRead the memory folder %s first (it may be empty), then the transcripts (Glob, Grep, Read), then update the memory files. End with a one-paragraph summary of what you changed.", cfg.MemoryDir)
	return b.String()
}
