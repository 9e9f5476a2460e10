// Package llmtest provides fake model servers (real HTTP, real SSE framing) for tests.
package llmtest
