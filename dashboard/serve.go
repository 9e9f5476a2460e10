package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// ShutdownTimeout bounds how long Serve waits for requests in flight once
// its ctx ends.
const ShutdownTimeout = 5 * time.Second

// Serve serves h on ln until ctx ends, then shuts the server down,
// waiting up to ShutdownTimeout. Requests' contexts (the live event
// streams among them) end with ctx, so they do not hold the shutdown.
// A listener that fails is an error; an ended ctx is not.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("dashboard: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		// Requests still in flight (a client that stopped reading) are
		// cut off rather than left running after Serve returns.
		hs.Close()
		if !errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("dashboard: shut down: %w", err)
		}
	}
	<-errc
	return nil
}
