//go:build unix

package lockfile

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// peerHold is how long each side holds the lock in the interop test: more
// than the 10 s stale time, so only mtime refreshes keep the lock alive.
const peerHold = 12 * time.Second

// nodeLockOptions are the proper-lockfile options Claude Code passes for an
// inbox (docs/protocol.md section 5); stale and update are left at their
// defaults (10 s, 5 s).
const nodeLockOptions = `{
  lockfilePath: target + '.lock',
  retries: { retries: 10, minTimeout: 5, maxTimeout: 100 },
  onCompromised: (err) => { console.log('compromised ' + err.message); process.exit(3); },
}`

// nodeHolder takes the lock, holds it for holdMs, writes the marker file,
// then releases.
const nodeHolder = `
const lockfile = require('proper-lockfile');
const fs = require('fs');
const [target, holdMs, marker] = process.argv.slice(2);
const opts = ` + nodeLockOptions + `;
(async () => {
  const release = await lockfile.lock(target, opts);
  console.log('held');
  await new Promise((r) => setTimeout(r, +holdMs));
  fs.writeFileSync(marker, 'releasing');
  await release();
  console.log('released');
})().catch((e) => { console.log('error ' + (e.code || '') + ' ' + e.message); process.exit(1); });
`

// nodeContender tries lock() with Claude Code's retry budget again and
// again until it succeeds or untilMs passes. Taking the lock before the
// holder wrote the marker file is stealing it.
const nodeContender = `
const lockfile = require('proper-lockfile');
const fs = require('fs');
const [target, untilMs, marker] = process.argv.slice(2);
const opts = ` + nodeLockOptions + `;
const deadline = Date.now() + +untilMs;
(async () => {
  console.log('trying');
  for (let attempts = 1; ; attempts++) {
    try {
      const release = await lockfile.lock(target, opts);
      const stole = !fs.existsSync(marker);
      await release();
      console.log(stole ? 'stole' : 'acquired');
      process.exit(stole ? 4 : 0);
    } catch (e) {
      if (e.code !== 'ELOCKED') throw e;
      if (Date.now() > deadline) { console.log('gave up after ' + attempts + ' attempts'); process.exit(5); }
    }
  }
})().catch((e) => { console.log('error ' + (e.code || '') + ' ' + e.message); process.exit(1); });
`

// TestNodeInterop checks R10 of docs/benchmarks.md against the real proper-lockfile
// with Claude Code's options, both ways: a Go waiter never steals a live
// Node lock held past the stale time, and a Node contender never steals a
// live Go lock held past it.
func TestNodeInterop(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: holds locks for 12 s")
	}
	t.Parallel()
	nodeModules := properLockfile(t)
	scripts := t.TempDir()
	for name, src := range map[string]string{"holder.js": nodeHolder, "contender.js": nodeContender} {
		if err := os.WriteFile(filepath.Join(scripts, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	node := func(script string, args ...string) *exec.Cmd {
		return exec.Command("node", append([]string{filepath.Join(scripts, script)}, args...)...)
	}
	env := "NODE_PATH=" + nodeModules

	t.Run("go waits for node", func(t *testing.T) {
		t.Parallel()
		base := t.TempDir()
		target, marker := filepath.Join(base, "inbox.json"), filepath.Join(base, "node-releasing")
		if err := os.WriteFile(target, []byte("[]"), 0o644); err != nil {
			t.Fatal(err)
		}
		holder := startProcess(t, node("holder.js", target, ms(peerHold), marker), env)
		holder.expect("held")
		ctx, cancel := context.WithTimeout(t.Context(), peerHold+waitFor)
		defer cancel()
		l, err := Acquire(ctx, target+".lock", Options{Watcher: newWatcher(t)})
		if err != nil {
			t.Fatalf("Go Acquire of a Node-held lock = %v; want nil after Node's release", err)
		}
		if _, err := os.Stat(marker); err != nil {
			t.Errorf("Go acquired the lock before Node released it (a steal): %v", err)
		}
		if err := l.Release(); err != nil {
			t.Errorf("Release() = %v; want nil", err)
		}
		holder.expect("released")
		holder.wait()
	})

	t.Run("node waits for go", func(t *testing.T) {
		t.Parallel()
		base := t.TempDir()
		target, marker := filepath.Join(base, "inbox.json"), filepath.Join(base, "go-releasing")
		if err := os.WriteFile(target, []byte("[]"), 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := TryAcquire(target+".lock", Options{})
		if err != nil {
			t.Fatal(err)
		}
		contender := startProcess(t, node("contender.js", target, ms(peerHold+waitFor), marker), env)
		contender.expect("trying")
		select {
		case line := <-contender.lines:
			t.Fatalf("Node contender said %q while Go held the lock; want it to keep trying", line)
		case <-time.After(peerHold): // the hold itself
		}
		if err := l.Verify(); err != nil {
			t.Errorf("Go Verify() after holding %v = %v; want nil", peerHold, err)
		}
		if err := os.WriteFile(marker, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := l.Release(); err != nil {
			t.Errorf("Go Release() = %v; want nil", err)
		}
		contender.expect("acquired")
		contender.wait()
	})
}

func ms(d time.Duration) string { return strconv.Itoa(int(d / time.Millisecond)) }
