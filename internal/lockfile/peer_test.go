//go:build unix

package lockfile

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// properLockfile returns a node_modules directory holding proper-lockfile
// 4.1.2 (the version Claude Code's lock follows), or skips the test. It
// uses $TROUPE_PEER_NODE_MODULES if set, else a cache under
// os.UserCacheDir()/troupe-test/peer, installing into it with npm once.
func properLockfile(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not on PATH; skipping the proper-lockfile interop test")
	}
	has := func(nm string) bool {
		_, err := os.Stat(filepath.Join(nm, "proper-lockfile", "package.json"))
		return err == nil
	}
	if nm := os.Getenv("TROUPE_PEER_NODE_MODULES"); nm != "" {
		if !has(nm) {
			t.Skipf("TROUPE_PEER_NODE_MODULES=%s holds no proper-lockfile", nm)
		}
		return nm
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Skipf("no user cache dir for proper-lockfile: %v", err)
	}
	prefix := filepath.Join(cache, "troupe-test", "peer")
	nm := filepath.Join(prefix, "node_modules")
	if has(nm) {
		return nm
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("proper-lockfile is not installed and npm is not on PATH; set TROUPE_PEER_NODE_MODULES")
	}
	if err := os.MkdirAll(prefix, 0o755); err != nil {
		t.Skipf("cannot create %s: %v", prefix, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "install", "--prefix", prefix, "--no-audit", "--no-fund", "proper-lockfile@4.1.2")
	if out, err := cmd.CombinedOutput(); err != nil || !has(nm) {
		t.Skipf("cannot install proper-lockfile@4.1.2 with npm into %s (%v); set TROUPE_PEER_NODE_MODULES\n%s", prefix, err, out)
	}
	return nm
}
