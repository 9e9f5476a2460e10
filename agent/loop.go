package agent

import (
	"context"
	"encoding/json"
	"strings"
	"sync"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/tool"
)

// loop is the body of Run. Only it appends to a.messages.
func (a *Agent) loop(ctx context.Context, prompt string) (Result, error) {
	start := a.now()
	var res Result
	user := llm.Message{Role: llm.RoleUser}
	a.mu.Lock()
	user.Content, a.opening = append([]llm.Block(nil), a.opening...), nil // a fork's placeholder results come first
	a.mu.Unlock()
	if prompt != "" {
		user.Content = append(user.Content, llm.Text(prompt))
		h := a.hook(ctx, HookEvent{Name: HookUserPromptSubmit, Prompt: prompt})
		if h.Block || h.Halt {
			res.StopReason, res.Text = StopHookBlocked, h.Reason
			if !h.Block {
				res.StopReason, res.Text = StopHookHalted, h.HaltReason
			}
			res.Duration = a.now().Sub(start)
			a.emit(Event{Type: EventResult, Result: &res})
			return res, nil
		}
		if h.Context != "" {
			user.Content = append(user.Content, llm.Text(h.Context))
		}
	}
	user.Content = append(user.Content, a.drainPending()...)
	if len(user.Content) == 0 {
		return res, errorf("run: empty prompt and no pending messages")
	}
	user.Content = a.attach(user.Content)
	a.appendMessage(user)
	a.emit(Event{Type: EventUser, Message: &user})

	stopHookActive := false
	for {
		if res.Calls >= a.cfg.MaxTurns {
			res.StopReason = StopMaxTurns
			res.Duration = a.now().Sub(start)
			a.emit(Event{Type: EventResult, Result: &res})
			return res, nil
		}
		if err := a.maybeCompact(ctx); err != nil {
			return a.fail(ctx, res, start, err)
		}
		resp, err := a.callModel(ctx)
		if err != nil {
			return a.fail(ctx, res, start, err)
		}
		res.Calls++
		res.Usage = res.Usage.Add(resp.Usage)
		res.StopReason = resp.StopReason
		a.appendMessage(resp.Message)
		a.noteUsage(resp.Usage)
		a.emit(Event{Type: EventAssistant, Message: &resp.Message, Usage: &resp.Usage})

		calls := resp.Message.ToolUses()
		if len(calls) == 0 {
			if more := a.drainPending(); len(more) > 0 {
				next := llm.Message{Role: llm.RoleUser, Content: a.attach(more)}
				a.appendMessage(next)
				a.emit(Event{Type: EventUser, Message: &next})
				continue
			}
			if halted, _ := a.halt(); !halted {
				h := a.hook(ctx, HookEvent{Name: HookStop, StopHookActive: stopHookActive})
				if h.Block && !h.Halt && ctx.Err() == nil {
					stopHookActive = true
					next := llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.Text("Stop hook feedback:\n" + h.Reason)}}
					a.appendMessage(next)
					a.emit(Event{Type: EventUser, Message: &next})
					continue
				}
			}
			res.Text = resp.Message.Text()
			res.Duration = a.now().Sub(start)
			a.emit(Event{Type: EventResult, Result: &res})
			return res, nil
		}
		results := a.runTools(ctx, calls)
		res.ToolUses += len(calls)
		next := llm.Message{Role: llm.RoleUser, Content: results}
		if ctx.Err() == nil {
			next.Content = a.attach(append(next.Content, a.drainPending()...))
		}
		a.appendMessage(next)
		a.emit(Event{Type: EventUser, Message: &next})
		if ctx.Err() != nil {
			return a.fail(ctx, res, start, context.Cause(ctx))
		}
		if halted, why := a.halt(); halted {
			res.StopReason, res.Text = StopHookHalted, why
			res.Duration = a.now().Sub(start)
			a.emit(Event{Type: EventResult, Result: &res})
			return res, nil
		}
	}
}

// drainPending returns the queued messages as text blocks and empties the
// queue.
func (a *Agent) drainPending() []llm.Block {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.takePendingLocked()
}

// takePendingLocked is drainPending with a.mu held.
func (a *Agent) takePendingLocked() []llm.Block {
	out := make([]llm.Block, len(a.pending))
	for i, s := range a.pending {
		out[i] = llm.Text(s)
	}
	a.pending = nil
	return out
}

func (a *Agent) appendMessage(m llm.Message) {
	a.mu.Lock()
	a.messages = append(a.messages, m)
	a.mu.Unlock()
}

// request builds the next model request from the conversation.
func (a *Agent) request() llm.Request {
	a.mu.Lock()
	msgs := cloneMessages(a.messages)
	volatile := a.volatile
	a.mu.Unlock()
	system := a.cfg.System
	if note := a.cfg.Tools.DeferredNote(); note != "" { // the deferred tools, by name only (tool.Deferrer)
		system += "\n\n" + note
	}
	return llm.Request{Model: a.cfg.ModelName, System: system, SystemVolatile: volatile, Messages: msgs,
		Tools: a.cfg.Tools.Specs(), MaxTokens: a.cfg.MaxTokens}
}

// callModel streams one model call, forwarding deltas as events.
func (a *Agent) callModel(ctx context.Context) (llm.Response, error) {
	return a.stream(ctx, a.request())
}

func (a *Agent) stream(ctx context.Context, req llm.Request) (llm.Response, error) {
	for ev, err := range a.cfg.Model.Stream(ctx, req) {
		if err != nil {
			return llm.Response{}, err
		}
		switch ev.Type {
		case llm.EventText, llm.EventThinking:
			a.emit(Event{Type: EventDelta, Text: ev.Text, Thinking: ev.Type == llm.EventThinking})
		case llm.EventRetry:
			a.emit(Event{Type: EventRetry, Err: ev.Err})
		case llm.EventDone:
			if ev.Response == nil {
				return llm.Response{}, llm.ErrNoResponse
			}
			return *ev.Response, nil
		}
	}
	if err := ctx.Err(); err != nil {
		return llm.Response{}, context.Cause(ctx)
	}
	return llm.Response{}, llm.ErrNoResponse
}

// runTools runs calls and returns one tool_result block per call, in the
// model's order. Consecutive read-only calls run in parallel; a writing
// call runs alone. Once ctx is done, the remaining calls are not started
// and get an "interrupted" result, so the conversation stays well formed.
func (a *Agent) runTools(ctx context.Context, calls []llm.Block) []llm.Block {
	out := make([]llm.Block, len(calls))
	for i := 0; i < len(calls); {
		j := i + 1
		if a.readOnly(calls[i]) {
			for j < len(calls) && a.readOnly(calls[j]) {
				j++
			}
		}
		var wg sync.WaitGroup
		for k := i; k < j; k++ {
			wg.Go(func() { out[k] = a.runTool(ctx, calls[k]) })
		}
		wg.Wait()
		i = j
	}
	return out
}

func (a *Agent) readOnly(call llm.Block) bool {
	t, ok := a.cfg.Tools.Get(call.Name)
	return ok && t.ReadOnly(call.Input)
}

// runTool checks permission for one call and runs it.
func (a *Agent) runTool(ctx context.Context, call llm.Block) llm.Block {
	started := a.now()
	a.noteActivity(call)
	a.emit(Event{Type: EventToolUse, Call: &call})
	res, denied := a.execute(ctx, call)
	blk := llm.ToolResult(call.ToolUseID, res.Content, res.IsError)
	blk.Images = res.Images
	a.emit(Event{Type: EventToolResult, Call: &call, ToolResult: &blk, Elapsed: a.now().Sub(started), Denied: denied})
	return blk
}

// execute runs call; denied is why its permission was refused, "" when
// it was not.
func (a *Agent) execute(ctx context.Context, call llm.Block) (res tool.Result, denied string) {
	res = a.run(ctx, call, &denied)
	return res, denied
}

func (a *Agent) run(ctx context.Context, call llm.Block, denied *string) tool.Result {
	if ctx.Err() != nil {
		return tool.Errorf("not run: the turn was interrupted")
	}
	t, ok := a.cfg.Tools.Get(call.Name)
	if !ok {
		return a.cfg.Tools.Unknown(call.Name)
	}
	if a.cfg.Tools.Pending(call.Name) {
		return tool.NotLoaded(call.Name)
	}
	input := call.Input
	if !json.Valid(input) {
		return tool.Errorf("%s: the input is not valid JSON", call.Name)
	}
	h := a.hook(ctx, HookEvent{Name: HookPreToolUse, Tool: call.Name, ToolUseID: call.ToolUseID, Input: input})
	if h.Block {
		return tool.Errorf("%s%s", HookBlocked, h.Reason)
	}
	if len(h.UpdatedInput) > 0 {
		input = h.UpdatedInput
	}
	v, err := a.cfg.Approver.Approve(ctx, Request{Tool: call.Name, ToolUseID: call.ToolUseID, Input: input, ReadOnly: t.ReadOnly(input), Hook: h.Permission})
	if err != nil {
		if ctx.Err() != nil {
			return tool.Errorf("not run: the turn was interrupted")
		}
		return tool.Errorf("permission check failed: %v", err)
	}
	if !v.Allow {
		reason := v.Reason
		if reason == "" {
			reason = "permission denied"
		}
		*denied = reason
		return tool.Errorf("Permission to use %s was denied: %s", call.Name, reason)
	}
	if len(v.UpdatedInput) > 0 {
		input = v.UpdatedInput
	}
	r, err := t.Run(tool.WithRegistry(context.WithValue(ctx, callerKey{}, a), a.cfg.Tools), tool.Call{ID: call.ToolUseID, Name: call.Name, Input: input})
	if err != nil {
		if ctx.Err() != nil {
			return tool.Errorf("interrupted: %v", context.Cause(ctx))
		}
		r = tool.Errorf("%s failed: %v", call.Name, err)
	}
	if a.cfg.Hooks != nil && ctx.Err() == nil {
		name := HookPostToolUse
		if r.IsError {
			name = HookPostToolUseFailure
		}
		post := a.hook(ctx, HookEvent{Name: name, Tool: call.Name, ToolUseID: call.ToolUseID, Input: input, Result: r})
		if post.Block {
			r.Content += "\n\n" + name + " hook feedback:\n" + post.Reason
		}
		if post.Context != "" {
			r.Content += "\n\n" + post.Context
		}
	}
	return r
}

// maybeCompact summarizes the conversation when the last call's tokens
// passed the threshold.
func (a *Agent) maybeCompact(ctx context.Context) error {
	a.mu.Lock()
	over := a.cfg.CompactAt > 0 && a.progress.LatestInputTokens+a.progress.lastOutput > int64(a.cfg.CompactAt)
	n := len(a.messages)
	a.mu.Unlock()
	if !over || n <= a.cfg.KeepRecent+1 {
		return nil
	}
	return a.compact(ctx, "auto")
}

// compactPrompt asks the model for the summary.
const compactPrompt = `Summarize the conversation so far for your own later use: the task, decisions made, files and commands involved, what is done, what remains, and any facts you will need. Be complete but concise; do not call tools.`

// Compact replaces the conversation by a model-written summary plus the
// most recent messages. It is called automatically above CompactAt.
func (a *Agent) Compact(ctx context.Context) error { return a.compact(ctx, "manual") }

// compact is Compact; trigger ("auto" or "manual") is told to the
// PreCompact hooks, which run first and cannot prevent it.
func (a *Agent) compact(ctx context.Context, trigger string) error {
	a.mu.Lock()
	msgs := cloneMessages(a.messages)
	volatile := a.volatile
	a.mu.Unlock()
	keepFrom := splitPoint(msgs, a.cfg.KeepRecent)
	if keepFrom <= 0 {
		return nil
	}
	a.hook(ctx, HookEvent{Name: HookPreCompact, Trigger: trigger})
	old := msgs[:keepFrom]
	req := llm.Request{Model: a.cfg.ModelName, System: a.cfg.System, SystemVolatile: volatile, MaxTokens: a.cfg.MaxTokens,
		Messages: append(cloneMessages(old), llm.UserText(compactPrompt))}
	if old[len(old)-1].Role == llm.RoleUser {
		// Keep user/assistant alternation: fold the request into the
		// last user message.
		last := &req.Messages[len(old)-1]
		last.Content = append(last.Content, llm.Text(compactPrompt))
		req.Messages = req.Messages[:len(old)]
	}
	resp, err := a.stream(ctx, req)
	if err != nil {
		return errorf("compact: %w", err)
	}
	summary := strings.TrimSpace(resp.Message.Text())
	if summary == "" {
		return errorf("compact: the model returned an empty summary")
	}
	head := llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.Text(
		"This conversation was compacted. Summary of the earlier part:\n\n" + summary)}}
	kept := msgs[keepFrom:]
	kept[0].Content = append(head.Content, kept[0].Content...)
	a.mu.Lock()
	// The loop is the only writer and it is here, so nothing was appended.
	a.messages = kept
	a.progress.Compactions++
	a.progress.LatestInputTokens, a.progress.lastOutput = 0, 0
	a.mu.Unlock()
	a.emit(Event{Type: EventCompact, Text: summary, Usage: &resp.Usage})
	return nil
}

// splitPoint returns the index of the first kept message: at most keep
// messages from the end, moved earlier until it starts at a user message
// that carries no tool results (so no tool_use loses its result).
func splitPoint(msgs []llm.Message, keep int) int {
	i := max(len(msgs)-keep, 0)
	for ; i > 0; i-- {
		m := msgs[i]
		if m.Role != llm.RoleUser {
			continue
		}
		clean := true
		for _, b := range m.Content {
			if b.Type == llm.BlockToolResult {
				clean = false
				break
			}
		}
		if clean {
			return i
		}
	}
	return 0
}

func (a *Agent) noteUsage(u llm.Usage) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.progress.LatestInputTokens = u.TotalInput()
	a.progress.lastOutput = u.OutputTokens
	a.progress.OutputTokens += u.OutputTokens
}

func (a *Agent) noteActivity(call llm.Block) {
	act := Activity{Tool: call.Name, Input: describeInput(call.Input), At: a.now()}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.progress.ToolUses++
	a.progress.Recent = append(a.progress.Recent, act)
	if len(a.progress.Recent) > MaxRecent {
		a.progress.Recent = a.progress.Recent[len(a.progress.Recent)-MaxRecent:]
	}
}

// describeInput returns a short one-line form of a tool input.
func describeInput(in json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(in, &m) != nil {
		return ""
	}
	for _, k := range []string{"command", "file_path", "notebook_path", "pattern", "path", "query", "description", "prompt", "to", "action"} {
		if v, ok := m[k].(string); ok {
			v = strings.ReplaceAll(v, "\n", " ")
			if len(v) > 80 {
				v = v[:77] + "..."
			}
			return v
		}
	}
	if qs, ok := m["questions"].([]any); ok && len(qs) > 0 { // AskUserQuestion: its first question
		if q, ok := qs[0].(map[string]any); ok {
			if v, ok := q["question"].(string); ok {
				return describeInput(mustJSON(map[string]string{"description": v}))
			}
		}
	}
	return ""
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

func (a *Agent) emit(e Event) {
	if e.At.IsZero() {
		e.At = a.now()
	}
	a.trans.write(e)
	if a.cfg.OnEvent != nil {
		a.cfg.OnEvent(e)
	}
}
