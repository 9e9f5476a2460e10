package kit

import (
	"path/filepath"

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
