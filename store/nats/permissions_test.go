package nats_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/remote"
	natsstore "github.com/troupe-dev/troupe/store/nats"
	"github.com/troupe-dev/troupe/tasklist"
)

// docPermissions are the permissions docs/nats.md gives troupe's user in
// an account it shares ("An existing NATS cluster"), for namespace troupe:
// per stream, because subject wildcards match whole tokens only.
func docPermissions() *server.Permissions {
	pub := []string{"$JS.API.INFO", "$JS.FC.>", "$JS.ACK.troupe_v1_jobs.>", "troupe.v1.>"}
	for _, b := range []string{"teams", "tasks", "mailread", "jobruns", "workers"} {
		pub = append(pub, "$KV.troupe_v1_"+b+".>")
	}
	for _, st := range []string{"troupe_v1_mail", "troupe_v1_jobs", "troupe_v1_jobevents",
		"KV_troupe_v1_teams", "KV_troupe_v1_tasks", "KV_troupe_v1_mailread", "KV_troupe_v1_jobruns", "KV_troupe_v1_workers"} {
		pub = append(pub,
			"$JS.API.STREAM.*."+st,
			"$JS.API.STREAM.MSG.*."+st,
			"$JS.API.DIRECT.GET."+st, "$JS.API.DIRECT.GET."+st+".>",
			"$JS.API.CONSUMER.*."+st, "$JS.API.CONSUMER.*."+st+".>",
			"$JS.API.CONSUMER.MSG.NEXT."+st+".>",
		)
	}
	return &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: pub},
		Subscribe: &server.SubjectPermission{Allow: []string{"_INBOX.>"}},
	}
}

// TestDocumentedPermissions runs every kind of store operation as a user
// with only the documented permissions: none is refused.
func TestDocumentedPermissions(t *testing.T) {
	opts := &server.Options{
		Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true,
		Users: []*server.User{{Username: "troupe", Password: "pw", Permissions: docPermissions()}},
	}
	url := fmt.Sprintf("nats://troupe:pw@127.0.0.1:%d", natsstore.StartEmbedded(t, opts))
	logs := &lockedBuffer{}
	s, err := natsstore.Open(t.Context(), url, natsstore.Options{RequestTimeout: 5 * time.Second, Logger: slogTo(logs)})
	if err != nil {
		t.Fatalf("Open as the documented user: %v\n%s", err, logs.String())
	}
	defer s.Close()
	ctx := t.Context()
	newCrew(t, s)

	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	kicks, err := s.Mail().Watch(wctx, "crew", "bob")
	if err != nil {
		t.Fatalf("Watch: %v", err)
	}
	d, err := s.Mail().Send(ctx, "crew", "bob", mailbox.Message{From: "alice", Text: "hi"})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	waitKick(t, kicks, "inbox watch")
	if got, err := s.Mail().Read(ctx, "crew", "bob", true); err != nil || len(got) != 1 {
		t.Fatalf("Read = %d messages, %v; want 1", len(got), err)
	}
	if _, err := s.Mail().MarkRead(ctx, "crew", "bob", []string{d[0].ID}); err != nil {
		t.Fatalf("MarkRead: %v", err)
	}
	tkicks, err := s.Tasks().Watch(wctx, "crew")
	if err != nil {
		t.Fatalf("Tasks.Watch: %v", err)
	}
	l := tasklist.New(s.Tasks(), "crew")
	if _, err := l.Create(ctx, tasklist.Draft{Subject: "x"}); err != nil {
		t.Fatalf("Create task: %v", err)
	}
	waitKick(t, tkicks, "task list watch")
	if _, err := l.Claim(ctx, "bob"); err != nil {
		t.Fatalf("Claim: %v", err)
	}

	j, err := s.Jobs(ctx, jobOpts)
	if err != nil {
		t.Fatalf("Jobs: %v", err)
	}
	startWorker(t, j, remote.WorkerConfig{Name: "w1", Capacity: 1,
		Run: func(context.Context, remote.Job, func(string, remote.Usage)) remote.Result {
			return remote.Result{Text: "done"}
		}})
	c, sub := leadClient(t, j, remote.OnLostFail)
	st, err := c.Submit(ctx, remote.Request{Description: "q", Prompt: "p"})
	if err != nil {
		t.Fatalf("Submit: %v", err)
	}
	if ev := waitNotification(t, sub, st.ID); !strings.Contains(ev.Notification, "done") {
		t.Errorf("job notification = %s; want the result", ev.Notification)
	}
	if strings.Contains(logs.String(), "ermissions") {
		t.Errorf("permission violations logged:\n%s", logs.String())
	}
}

func slogTo(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
