package file_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/store/file"
	"github.com/troupe-dev/troupe/team"
)

// BenchmarkTeamSize measures the per-operation cost of the operations a
// teammate makes, in a team of 10 and of 1,000 members (issue 18: flat in
// team size is the target): a Send (its roster check, then the inbox
// write), a Read of an inbox (also checking the roster), and an active
// flag flipped (a rewrite of the whole team file, which does grow with the
// team: the file lists every member). Messages go to the same nine members
// in both teams, so that only the team's size differs.
//
//	go test -run '^$' -bench BenchmarkTeamSize -benchtime 200x ./store/file/
func BenchmarkTeamSize(b *testing.B) {
	for _, n := range []int{10, 1000} {
		s, err := file.Open(b.TempDir(), file.Options{})
		if err != nil {
			b.Fatal(err)
		}
		ctx := b.Context()
		if _, err := team.Create(ctx, s.Teams(), team.CreateOptions{Name: "crew", Now: time.Now(), Pick: ftPick}); err != nil {
			b.Fatal(err)
		}
		for i := range n - 1 {
			if _, err := team.AddMember(ctx, s.Teams(), "crew", team.Member{Name: fmt.Sprintf("m%d", i), Cwd: "/work"}, time.Now()); err != nil {
				b.Fatal(err)
			}
		}
		time.Sleep(60 * time.Millisecond) // the team file settles (racySlack)
		b.Run(fmt.Sprintf("members=%d/send", n), func(b *testing.B) {
			for i := range b.N {
				to := fmt.Sprintf("m%d", i%9)
				if _, err := s.Mail().Send(ctx, "crew", to, mailbox.Message{From: team.LeadName, Text: "hello"}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("members=%d/read", n), func(b *testing.B) {
			for i := range b.N {
				if _, err := s.Mail().Read(ctx, "crew", fmt.Sprintf("m%d", i%9), true); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("members=%d/set-active", n), func(b *testing.B) {
			for i := range b.N {
				if err := team.SetActive(ctx, s.Teams(), "crew", "m0", i%2 == 0); err != nil {
					b.Fatal(err)
				}
			}
		})
		s.Close()
	}
}

// BenchmarkTeamWrite measures one write of a team file of 10, 100 and
// 1,000 members: a member's active flag flipped (team.SetActive), each a
// whole locked, atomic rewrite of the file (issue 18 item 7: a spawn
// writes the team twice, and the cost of a write followed the roster).
//
//	go test -run '^$' -bench BenchmarkTeamWrite -benchmem ./store/file/
func BenchmarkTeamWrite(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("members=%d", n), func(b *testing.B) {
			s, err := file.Open(b.TempDir(), file.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ctx := b.Context()
			if _, err := team.Create(ctx, s.Teams(), team.CreateOptions{Name: "crew", Now: time.Now(), Pick: ftPick}); err != nil {
				b.Fatal(err)
			}
			for i := range n - 1 {
				if _, err := team.AddMember(ctx, s.Teams(), "crew", team.Member{Name: fmt.Sprintf("m%d", i), Cwd: "/work"}, time.Now()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if err := team.SetActive(ctx, s.Teams(), "crew", fmt.Sprintf("m%d", n/2), i%2 == 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
