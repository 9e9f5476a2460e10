package dream

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/troupe-dev/troupe/agent"
)

// Approver keeps a dream's tools to its folders: Read, Glob and Grep
// inside the memory folder or the sessions folder, Write and Edit inside
// the memory folder (memory.Guard checks them again at the file), and
// nothing else.
type Approver struct {
	MemoryDir, SessionsDir string
}

var _ agent.Approver = Approver{}

// Approve implements agent.Approver.
func (a Approver) Approve(_ context.Context, r agent.Request) (agent.Verdict, error) {
	var in struct {
		FilePath string `json:"file_path"`
		Path     string `json:"path"`
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
	switch r.Tool {
	case "Read", "Glob", "Grep":
		if within(a.MemoryDir, p) || within(a.SessionsDir, p) {
			return agent.Verdict{Allow: true}, nil
		}
		return agent.Verdict{Reason: "a dream reads only the memory folder and the session transcripts"}, nil
	case "Write", "Edit":
		if within(a.MemoryDir, p) {
			return agent.Verdict{Allow: true}, nil
		}
		return agent.Verdict{Reason: "a dream writes only in the memory folder " + a.MemoryDir}, nil
	}
	return agent.Verdict{Reason: "a dream has only the file tools"}, nil
}

func within(dir, p string) bool {
	rel, err := filepath.Rel(filepath.Clean(dir), filepath.Clean(p))
	return err == nil && !strings.HasPrefix(rel, "..") && !filepath.IsAbs(rel)
}
