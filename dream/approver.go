package dream

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"

	"github.com/troupe-dev/troupe/agent"
)

// Approver keeps a dream's tools to its folders: Read, Glob and Grep
// inside the memory folder or the records of the sessions under review
// (SessionsDir/<id>.jsonl and the folder SessionsDir/<id>), Write and Edit
// inside the memory folder (memory.Guard checks them again at the file),
// and nothing else. The sessions folder holds every project's sessions: a
// dream reads only its own project's, those Start reviews (it sets
// Sessions).
type Approver struct {
	MemoryDir, SessionsDir string
	Sessions               []string // ids of the sessions under review
}

var _ agent.Approver = Approver{}

// Approve implements agent.Approver.
func (a Approver) Approve(_ context.Context, r agent.Request) (agent.Verdict, error) {
	var in struct {
		FilePath string `json:"file_path"`
		Path     string `json:"path"`
		Pattern  string `json:"pattern"`
	}
	_ = json.Unmarshal(r.Input, &in)
	p := in.FilePath
	if p == "" {
		p = in.Path
	}
	if p == "" {
		p = a.MemoryDir // Glob and Grep default to their root, the memory folder
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(a.MemoryDir, p)
	}
	if r.Tool == "Glob" && (filepath.IsAbs(in.Pattern) || slices.Contains(strings.Split(filepath.ToSlash(in.Pattern), "/"), "..")) {
		return agent.Verdict{Reason: "a dream globs only inside its folders: give the folder as path, not in the pattern"}, nil
	}
	switch r.Tool {
	case "Read", "Glob", "Grep":
		if within(a.MemoryDir, p) || a.reviewing(p) {
			return agent.Verdict{Allow: true}, nil
		}
		return agent.Verdict{Reason: "a dream reads only the memory folder and the transcripts of this project's sessions under review (" + strings.Join(a.folders(), ", ") + "), not the other projects' in " + a.SessionsDir}, nil
	case "Write", "Edit":
		if within(a.MemoryDir, p) {
			return agent.Verdict{Allow: true}, nil
		}
		return agent.Verdict{Reason: "a dream writes only in the memory folder " + a.MemoryDir}, nil
	}
	return agent.Verdict{Reason: "a dream has only the file tools"}, nil
}

// folders are the transcripts' folders of the sessions under review.
func (a Approver) folders() []string {
	out := []string{}
	for _, id := range a.Sessions {
		out = append(out, filepath.Join(a.SessionsDir, id))
	}
	return out
}

// reviewing reports whether p is the record or in the transcripts' folder
// of a session under review.
func (a Approver) reviewing(p string) bool {
	for _, id := range a.Sessions {
		if id == "" || id != filepath.Base(id) || id == "." || id == ".." {
			continue
		}
		if filepath.Clean(p) == filepath.Join(a.SessionsDir, id+".jsonl") || within(filepath.Join(a.SessionsDir, id), p) {
			return true
		}
	}
	return false
}

func within(dir, p string) bool {
	rel, err := filepath.Rel(filepath.Clean(dir), filepath.Clean(p))
	return err == nil && !strings.HasPrefix(rel, "..") && !filepath.IsAbs(rel)
}
