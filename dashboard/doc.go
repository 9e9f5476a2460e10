// Package dashboard serves a local web view of agent teams over any store
// (file, NATS, memory): the teams, each team's members, task board and
// message timeline, kept live through Server-Sent Events fed by the
// stores' watches, and, when enabled, control of the team through the same
// mailbox protocol the lead uses (send a message, ask a teammate to shut
// down, answer a pending permission request).
//
// Pages are rendered by html/template, which escapes everything agents
// wrote; control characters are further shown as visible escapes
// (internal/termtext). The embedded CSS and JavaScript need no build step.
//
// A Server is safe for concurrent use. Every goroutine it starts belongs to
// one request and ends before that request's handler returns.
package dashboard
