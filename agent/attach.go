package agent

import "github.com/troupe-dev/troupe/llm"

// attach appends Config.Attach's text to the blocks of a user message
// about to go to the model, when it has any.
func (a *Agent) attach(blocks []llm.Block) []llm.Block {
	if a.cfg.Attach == nil {
		return blocks
	}
	if t := a.cfg.Attach(); t != "" {
		blocks = append(blocks, llm.Text(t))
	}
	return blocks
}
