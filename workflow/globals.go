package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"
	"github.com/google/jsonschema-go/jsonschema"
)

// prelude defines parallel and pipeline on the native scope helpers.
// parallel calls its functions inside one scope of its own (followed
// through their awaits, so that failFast can cancel every agent they
// started), then settles in order; pipeline is a parallel of one chain per
// item, so that each item moves through the stages on its own.
const prelude = `(function(g){
  const scopeNew = g.__scopeNew, scopeEnter = g.__scopeEnter, scopeCancel = g.__scopeCancel, note = g.__note;
  delete g.__scopeNew; delete g.__scopeEnter; delete g.__scopeCancel; delete g.__note;
  function parallel(thunks, opts) {
    if (!Array.isArray(thunks)) throw new TypeError("parallel(thunks, opts): thunks must be an array of functions");
    const failFast = !!(opts && opts.failFast);
    const results = new Array(thunks.length), errors = new Array(thunks.length);
    Object.defineProperty(results, "errors", {value: errors, enumerable: false});
    return new Promise(function(resolve, reject) {
      let left = thunks.length, done = false;
      if (left === 0) { resolve(results); return; }
      const s = scopeNew();
      thunks.forEach(function(fn, i) {
        const prev = scopeEnter(s);
        let p;
        try { p = Promise.resolve(typeof fn === "function" ? fn() : fn); }
        catch (e) { p = Promise.reject(e); }
        finally { scopeEnter(prev); }
        p.then(function(v) {
          results[i] = v;
          if (--left === 0 && !done) { done = true; resolve(results); }
        }, function(e) {
          if (done) return;
          const msg = (e && e.message !== undefined) ? e.message : String(e);
          if (failFast) { done = true; scopeCancel(s, "parallel slot " + i + " failed (failFast): " + msg); reject(e); return; }
          errors[i] = e; results[i] = undefined;
          note("parallel: slot " + i + " failed: " + msg);
          if (--left === 0) { done = true; resolve(results); }
        });
      });
    });
  }
  function pipeline(items) {
    if (!Array.isArray(items)) throw new TypeError("pipeline(items, ...stages): items must be an array");
    const stages = Array.prototype.slice.call(arguments, 1);
    stages.forEach(function(s, i) { if (typeof s !== "function") throw new TypeError("pipeline: stage " + (i+1) + " is not a function"); });
    return parallel(items.map(function(item, i) {
      return async function() {
        let v = item;
        for (const stage of stages) v = await stage(v, item, i);
        return v;
      };
    }));
  }
  g.parallel = parallel;
  g.pipeline = pipeline;
})(globalThis);`

// install sets up the VM's globals.
func (r *run) install(args json.RawMessage) error {
	vm := r.vm
	jsonObj := vm.Get("JSON").ToObject(vm)
	r.jsonParse, _ = goja.AssertFunction(jsonObj.Get("parse"))
	r.stringify, _ = goja.AssertFunction(jsonObj.Get("stringify"))
	set := func(name string, f func(goja.FunctionCall) goja.Value) {
		vm.Set(name, f)
	}
	// Scopes: the functions of one parallel() share one, which failFast
	// cancels (and with it the agents they started).
	set("__scopeNew", func(goja.FunctionCall) goja.Value {
		ctx, cancel := context.WithCancelCause(r.current().ctx)
		return vm.ToValue(&scope{ctx: ctx, cancel: cancel})
	})
	set("__scopeEnter", func(c goja.FunctionCall) goja.Value {
		var s *scope
		if v := c.Argument(0); !goja.IsNull(v) && !goja.IsUndefined(v) {
			s, _ = v.Export().(*scope)
		}
		prev := r.track.swap(s)
		if prev == nil {
			return goja.Null()
		}
		return vm.ToValue(prev)
	})
	set("__scopeCancel", func(c goja.FunctionCall) goja.Value {
		if sc, ok := c.Argument(0).Export().(*scope); ok {
			sc.cancel(errors.New(c.Argument(1).String()))
		}
		return goja.Undefined()
	})
	set("__note", func(c goja.FunctionCall) goja.Value {
		r.observe(Event{Kind: EventLog, Index: -1, Text: c.Argument(0).String()})
		return goja.Undefined()
	})
	if _, err := vm.RunString(prelude); err != nil {
		return fmt.Errorf("workflow prelude: %w", err)
	}
	set("agent", r.agent)
	set("phase", r.setPhase)
	set("log", r.log)
	set("sleep", r.sleep)
	if len(args) > 0 {
		v, err := r.jsonParse(goja.Undefined(), vm.ToValue(string(args)))
		if err != nil {
			return fmt.Errorf("workflow args are not JSON: %w", err)
		}
		vm.Set("args", v)
	} else {
		vm.Set("args", goja.Undefined())
	}
	for _, name := range []string{"eval", "Function"} { // no code from strings
		vm.GlobalObject().Delete(name)
	}
	return nil
}

// current returns the scope of the code running now.
func (r *run) current() *scope {
	if s := r.track.cur; s != nil {
		return s
	}
	return r.root
}

func (r *run) observe(e Event) {
	if r.opts.Observer != nil {
		r.opts.Observer(e)
	}
}

// throw panics with a JavaScript TypeError (goja turns it into a throw):
// a global called the wrong way.
func (r *run) throw(format string, args ...any) {
	panic(r.vm.NewTypeError(fmt.Sprintf(format, args...)))
}

func (r *run) errorValue(msg string) goja.Value {
	o, err := r.vm.New(r.vm.Get("Error"), r.vm.ToValue(msg))
	if err != nil {
		return r.vm.ToValue(msg)
	}
	return o
}

// callOpts are agent()'s options.
type callOpts struct {
	Label     string          `json:"label"`
	Phase     string          `json:"phase"`
	Schema    json.RawMessage `json:"schema"`
	Model     string          `json:"model"`
	AgentType string          `json:"agentType"`
	Isolation string          `json:"isolation"`
	Tools     []string        `json:"tools"`
	Labels    []string        `json:"labels"`
	Cwd       string          `json:"cwd"`
}

// agent is agent(prompt, opts).
func (r *run) agent(c goja.FunctionCall) goja.Value {
	vm := r.vm
	pv := c.Argument(0)
	if goja.IsUndefined(pv) || goja.IsNull(pv) {
		r.throw("agent(prompt, opts): prompt is required")
	}
	prompt := pv.String()
	var rawOpts json.RawMessage
	var o callOpts
	if ov := c.Argument(1); !goja.IsUndefined(ov) && !goja.IsNull(ov) {
		s, err := r.stringify(goja.Undefined(), ov)
		if err != nil {
			panic(err)
		}
		rawOpts = json.RawMessage(s.String())
		if err := json.Unmarshal(rawOpts, &o); err != nil {
			r.throw("agent(prompt, opts): opts: %v", err)
		}
	}
	if string(o.Schema) == "null" {
		o.Schema = nil
	}
	if o.Phase == "" {
		o.Phase = r.phase
	} else if len(r.script.Meta.Phases) > 0 && !r.script.Meta.HasPhase(o.Phase) {
		r.throw("agent(): phase %q is not one of meta.phases (%s)", o.Phase, strings.Join(r.script.Meta.PhaseTitles(), ", "))
	}
	if len(o.Labels) > 0 && o.Isolation == "" {
		o.Isolation = "remote"
	}
	if o.Isolation != "" && o.Isolation != "worktree" && o.Isolation != "remote" {
		r.throw("agent(): isolation %q: want \"worktree\" or \"remote\"", o.Isolation)
	}
	p, resolve, reject := vm.NewPromise()
	idx := r.calls
	r.calls++
	r.res.Agents++
	label := o.Label
	if label == "" {
		label = fmt.Sprintf("agent %d", idx+1)
	}
	ev := Event{Index: idx, Label: label, Phase: o.Phase}
	fail := func(msg string) goja.Value {
		r.res.Failed++
		e := ev
		e.Kind, e.Err = EventFailed, msg
		r.observe(e)
		reject(r.errorValue(msg))
		return vm.ToValue(p)
	}
	if idx >= r.opts.MaxAgents {
		r.replaying = false
		return fail(fmt.Sprintf("agent cap: a run may make at most %d agent() calls", r.opts.MaxAgents))
	}
	digest := Digest(prompt, rawOpts)
	// Resume: answer from the cache while it matches.
	if r.replaying {
		if e, ok := r.cache[idx]; ok && e.Digest == digest && e.Error == "" && e.Result != nil {
			r.res.Cached++
			r.outstanding++
			q := ev
			q.Kind, q.Cached = EventQueued, true
			r.observe(q)
			r.held[e.Seq] = r.settler(func() error {
				v, err := r.jsonParse(goja.Undefined(), vm.ToValue(string(e.Result)))
				if err != nil {
					return err
				}
				d := ev
				d.Kind, d.Cached, d.Usage, d.Text = EventDone, true, e.Usage, excerpt(string(e.Result))
				r.observe(d)
				r.record(Entry{Index: idx, Digest: digest, Label: label, Phase: o.Phase, Result: e.Result, Usage: e.Usage, Cached: true})
				return resolve(v)
			})
			r.releaseHeld()
			return vm.ToValue(p)
		}
		r.replaying = false
		// Live from here: the held answers go at once, in order.
		for len(r.held) > 0 {
			r.nextSeq = minKey(r.held)
			r.releaseHeld()
		}
	}
	if r.opts.Budget != nil {
		if err := r.opts.Budget(); err != nil {
			r.budgeted = true
			return fail("budget: " + err.Error())
		}
	}
	rs := o.Schema
	var resolved *jsonschema.Resolved
	if rs != nil {
		var err error
		if resolved, err = compileSchema(rs); err != nil {
			return fail(fmt.Sprintf("agent(): opts.%v", err))
		}
	}
	ctx := r.current().ctx
	req := Request{Index: idx, Attempt: 1, Workflow: r.script.Meta.Name, Prompt: prompt, Label: label, Phase: o.Phase, Model: o.Model,
		AgentType: o.AgentType, Isolation: o.Isolation, Cwd: o.Cwd, Tools: o.Tools, Labels: o.Labels, Schema: rs}
	var idMu sync.Mutex
	var agentID string // the agent's id, once its runner said it
	req.Activity = func(a Activity) {
		if a.AgentID != "" {
			idMu.Lock()
			agentID = a.AgentID
			idMu.Unlock()
		}
		r.post(func() {
			e := ev
			e.Kind, e.Text, e.Tokens, e.AgentID = EventActivity, a.Text, a.Tokens, a.AgentID
			r.observe(e)
		})
	}
	q := ev
	q.Kind = EventQueued
	r.observe(q)
	r.outstanding++
	r.wg.Go(func() {
		val, usage, err := r.runAgent(ctx, req, resolved, ev)
		idMu.Lock()
		id := agentID
		idMu.Unlock()
		r.settle(func() error {
			r.res.Usage = r.res.Usage.Add(usage)
			if err != nil {
				msg := err.Error()
				if ctx.Err() != nil {
					msg = "stopped: " + context.Cause(ctx).Error()
				}
				r.res.Failed++
				e := ev
				e.Kind, e.Err, e.Usage = EventFailed, msg, usage
				r.observe(e)
				r.record(Entry{Index: idx, Digest: digest, Label: label, Phase: o.Phase, AgentID: id, Error: msg, Usage: usage})
				return reject(r.errorValue(msg))
			}
			e := ev
			e.Kind, e.Usage, e.Text = EventDone, usage, excerpt(string(val))
			r.observe(e)
			r.record(Entry{Index: idx, Digest: digest, Label: label, Phase: o.Phase, AgentID: id, Result: val, Usage: usage})
			v, err := r.jsonParse(goja.Undefined(), vm.ToValue(string(val)))
			if err != nil {
				return err
			}
			return resolve(v)
		})
	})
	return vm.ToValue(p)
}

func (r *run) record(e Entry) {
	if r.opts.Record != nil {
		r.opts.Record(e)
	}
}

// runAgent runs one call on its own goroutine: it waits for a slot, runs
// the agent, and with a schema validates its answer, retrying once. It
// returns the call's value as JSON.
func (r *run) runAgent(ctx context.Context, req Request, resolved *jsonschema.Resolved, ev Event) (json.RawMessage, Usage, error) {
	select {
	case r.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, Usage{}, context.Cause(ctx)
	}
	defer func() { <-r.sem }()
	if err := ctx.Err(); err != nil {
		return nil, Usage{}, context.Cause(ctx)
	}
	r.post(func() {
		e := ev
		e.Kind = EventStarted
		r.observe(e)
	})
	base := req.Prompt
	if req.Schema != nil {
		req.Prompt = base + schemaNote(req.Schema)
	}
	reply, err := r.runner.RunAgent(ctx, req)
	usage := reply.Usage
	if err != nil {
		return nil, usage, err
	}
	if req.Schema == nil {
		b, _ := json.Marshal(reply.Text)
		return b, usage, nil
	}
	val, verr := decodeAnswer(reply.Text, resolved)
	if verr == nil {
		return val, usage, nil
	}
	req.Attempt = 2
	req.Prompt = base + retryNote(req.Schema, reply.Text, verr)
	reply, err = r.runner.RunAgent(ctx, req)
	usage = usage.Add(reply.Usage)
	if err != nil {
		return nil, usage, err
	}
	val, verr = decodeAnswer(reply.Text, resolved)
	if verr != nil {
		return nil, usage, fmt.Errorf("schema: the answer did not validate, twice: %v", verr)
	}
	return val, usage, nil
}

// excerpt is the start of a result, for events.
func excerpt(s string) string {
	const max = 200
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}

// setPhase is phase(title).
func (r *run) setPhase(c goja.FunctionCall) goja.Value {
	t := c.Argument(0).String()
	if len(r.script.Meta.Phases) > 0 && !r.script.Meta.HasPhase(t) {
		r.throw("phase(%q): not one of meta.phases (%s)", t, strings.Join(r.script.Meta.PhaseTitles(), ", "))
	}
	r.phase = t
	r.observe(Event{Kind: EventPhase, Index: -1, Phase: t, Text: t})
	return goja.Undefined()
}

// log is log(...): its arguments, strings as they are and other values
// as JSON, joined by spaces.
func (r *run) log(c goja.FunctionCall) goja.Value {
	parts := make([]string, 0, len(c.Arguments))
	for _, a := range c.Arguments {
		if s, ok := a.Export().(string); ok {
			parts = append(parts, s)
			continue
		}
		if s, err := r.stringify(goja.Undefined(), a); err == nil && !goja.IsUndefined(s) {
			parts = append(parts, s.String())
		} else {
			parts = append(parts, a.String())
		}
	}
	r.observe(Event{Kind: EventLog, Index: -1, Phase: r.phase, Text: strings.Join(parts, " ")})
	return goja.Undefined()
}

// sleep is sleep(ms).
func (r *run) sleep(c goja.FunctionCall) goja.Value {
	ms := c.Argument(0).ToInteger()
	if ms < 0 {
		ms = 0
	}
	p, resolve, reject := r.vm.NewPromise()
	ctx := r.current().ctx
	r.outstanding++
	r.wg.Go(func() {
		t := time.NewTimer(time.Duration(ms) * time.Millisecond)
		defer t.Stop()
		select {
		case <-t.C:
			r.settle(func() error { return resolve(goja.Undefined()) })
		case <-ctx.Done():
			msg := "stopped: " + context.Cause(ctx).Error()
			r.settle(func() error { return reject(r.errorValue(msg)) })
		}
	})
	return r.vm.ToValue(p)
}
