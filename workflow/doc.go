// Package workflow runs workflows: deterministic multi-agent scripts in
// JavaScript, in the dialect of Claude Code's Workflow tool (docs/workflows.md).
//
// A script starts with `export const meta = {name, description, phases}`,
// a pure literal that Parse reads without running anything, then a body
// that may use top-level await and return a value. The body sees only
// these globals: agent, parallel, pipeline, phase, log, sleep and args.
// The agents do the work; the script has no files, network, processes or
// timers of its own.
//
// Concurrency: goja is not goroutine-safe, so Run keeps the VM on one
// goroutine (the loop). Each agent() call runs on a goroutine of its own,
// at most Options.Concurrency at a time, and posts its outcome back to the
// loop, which resolves the call's promise. A watchdog interrupts the VM
// when one stretch of JavaScript runs longer than Options.MaxBusy.
// Run returns once the script's promise settled and every agent it
// started has returned; Options.Observer is called on the loop goroutine
// only, in order.
//
// Resume: every agent() call gets a position (its call order) and a
// digest of its prompt and options. Run reports each finished call
// through Options.Record (a Journal appends it to journal.jsonl in the
// run's folder, see Dir); given the entries of an earlier run in
// Options.Cache, it answers calls from them positionally, up to the first
// call whose digest differs, that failed or that never finished.
package workflow
