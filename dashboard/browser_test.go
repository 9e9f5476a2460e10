package dashboard_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// browser starts a fresh headless Chromium for one test and returns its
// context. It skips when Chromium is absent, unless $CI is "true": there
// .ci/run installs it, so its absence is a failure.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := os.Getenv("TROUPE_CHROMIUM")
	if path == "" {
		for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
			if p, err := exec.LookPath(name); err == nil {
				path = p
				break
			}
		}
	}
	if path == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("Chromium is not installed but CI=true: .ci/run should have installed the Debian package chromium")
		}
		t.Skip("Chromium is not installed (apt-get install chromium, or set $TROUPE_CHROMIUM): the browser tests need it")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 1000),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	// Start the browser now, so a failure to start is reported here.
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		cancelAlloc()
		t.Fatalf("start Chromium at %s: %v", path, err)
	}
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	return ctx
}

// run runs browser actions with a deadline, failing the test on error.
func run(t *testing.T, ctx context.Context, what string, timeout time.Duration, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	get(t, ctx, what, timeout, chromedp.Steps(steps...))
}

// get runs one browser action with a deadline and returns its value.
func get[T any](t *testing.T, ctx context.Context, what string, timeout time.Duration, action chromedp.Action[T]) T {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	v, err := chromedp.Run(tctx, action)
	if err != nil {
		hctx, hcancel := context.WithTimeout(ctx, 5*time.Second)
		defer hcancel()
		html, _ := chromedp.Run(hctx, chromedp.OuterHTML("body"))
		t.Fatalf("%s: %v\npage body:\n%s", what, err, html)
	}
	return v
}

// until waits for a JavaScript condition to hold, for at most timeout,
// and returns how long it took.
func until(t *testing.T, ctx context.Context, what, cond string, timeout time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	get(t, ctx, what, timeout+time.Second, chromedp.Poll[chromedp.Void](cond, chromedp.WithPollingInterval(10*time.Millisecond), chromedp.WithPollingTimeout(timeout)))
	return time.Since(start)
}

// screenshot writes the page as a PNG into dir and names it in the log.
// With $TROUPE_DASHBOARD_SHOTS set, a copy goes there too (docs/images).
func screenshot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	png := get(t, ctx, "screenshot "+name, 10*time.Second, chromedp.FullScreenshot(100))
	for _, d := range []string{dir, os.Getenv("TROUPE_DASHBOARD_SHOTS")} {
		if d == "" {
			continue
		}
		p := filepath.Join(d, name+".png")
		if err := os.WriteFile(p, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", p)
	}
}
