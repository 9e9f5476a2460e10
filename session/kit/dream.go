package kit

import (
	"path/filepath"
	"time"

	"github.com/troupe-dev/troupe/dream"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/memory"
	"github.com/troupe-dev/troupe/session/record"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/tool/filetool"
)

// Dream returns the configuration of a dream of the project in cwd: its
// memory folder under troupe's home, the transcripts of the sessions
// recorded there for cwd (but current, still running), file tools
// confined to the memory folder and an approver that lets them read the
// sessions and write only memory files.
func Dream(home, cwd, current string, model llm.Model, modelName string) dream.Config {
	memDir, sessions := memory.Dir(home, cwd), filepath.Join(home, "sessions")
	return dream.Config{Model: model, ModelName: modelName, MemoryDir: memDir, SessionsDir: sessions, Current: current,
		Approver: dream.Approver{MemoryDir: memDir, SessionsDir: sessions},
		Filter:   func(id string) bool { return record.Cwd(sessions, id) == cwd },
		Tools: func(dir string) (*tool.Registry, error) {
			return tool.NewRegistry(filetool.All(filetool.Config{Root: dir, Guard: memory.Guard(dir)})...)
		}}
}

// DreamDue reports whether a dream of the project in cwd is due at now:
// at least every since the last dream (or none yet) and at least
// sessions sessions recorded for cwd since then, the current one not
// counted.
func DreamDue(home, cwd, current string, now time.Time, every time.Duration, sessions int) (bool, error) {
	memDir, dir := memory.Dir(home, cwd), filepath.Join(home, "sessions")
	last, err := memory.Lock{Dir: memDir}.Last()
	if err != nil {
		return false, err
	}
	ids, _ := memory.SessionsSince(dir, last, current)
	n := 0
	for _, id := range ids {
		if record.Cwd(dir, id) == cwd {
			n++
		}
	}
	return memory.Due(now, last, n, every, sessions), nil
}
