package task

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// MonitorPoll is how often a monitor looks for new output of a task or
// new bytes of a file.
const MonitorPoll = 200 * time.Millisecond

// monitorRead bounds one read of a followed file or output.
const monitorRead = 256 << 10

// splitter cuts bytes into lines; a line longer than monitorSplitMax is
// handed over in pieces, so memory stays bounded whatever the source.
type splitter struct{ part []byte }

// feed emits the complete lines of data (with what was held before);
// false when emit refused one (the monitor is stopping).
func (sp *splitter) feed(data []byte, emit func(string) bool) bool {
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			sp.part = append(sp.part, data...)
			for len(sp.part) >= monitorSplitMax {
				if !emit(string(sp.part[:monitorSplitMax])) {
					return false
				}
				sp.part = append(sp.part[:0], sp.part[monitorSplitMax:]...)
			}
			return true
		}
		buf := data[:i]
		if len(sp.part) > 0 {
			buf = append(sp.part, buf...)
			sp.part = sp.part[:0]
		}
		data = data[i+1:]
		if len(buf) > 0 && buf[len(buf)-1] == '\r' {
			buf = buf[:len(buf)-1]
		}
		for len(buf) > monitorSplitMax {
			if !emit(string(buf[:monitorSplitMax])) {
				return false
			}
			buf = buf[monitorSplitMax:]
		}
		if !emit(string(buf)) {
			return false
		}
	}
	return true
}

// flush emits a last line without its newline, if one is held.
func (sp *splitter) flush(emit func(string) bool) bool {
	if len(sp.part) == 0 {
		return true
	}
	l := string(sp.part)
	sp.part = sp.part[:0]
	return emit(l)
}

// FollowTask returns a source that follows the output of task id, from its
// current end (fromStart false: what it prints from now on) or its start,
// until the task has ended and its output is read. The source's end says
// how the task ended (a shell's exit code); a shell that failed fails the
// monitor.
func (r *Registry) FollowTask(id ID, fromStart bool) LineSource {
	// The current end is taken now, not when the source starts: what
	// the task prints from the call on is followed.
	var start int64
	if s, ok := r.Get(id); ok && !fromStart && s.OutputFile != "" {
		if fi, err := os.Lstat(s.OutputFile); err == nil {
			start = fi.Size()
		}
	}
	return func(ctx context.Context, emit func(string) bool) (SourceEnd, error) {
		s, ok := r.Get(id)
		if !ok {
			return SourceEnd{}, fmt.Errorf("follow task %s: %w", id, ErrNotFound)
		}
		if s.OutputFile == "" {
			return SourceEnd{}, fmt.Errorf("follow task %s: it has no output to follow", id)
		}
		off := start
		var sp splitter
		t := r.clock.NewTicker(MonitorPoll)
		defer t.Stop()
		for {
			// Look at the status before reading: output written before
			// the end is read by this round or the next.
			cur, ok := r.Get(id)
			ended := !ok || cur.Status.Terminal()
			for {
				rd, err := ReadOutputAt(s.OutputFile, off, monitorRead)
				if err != nil || len(rd.Data) == 0 {
					break
				}
				off = rd.End()
				if !sp.feed(rd.Data, emit) {
					return SourceEnd{}, nil
				}
			}
			if ended {
				sp.flush(emit)
				return taskEnd(cur, ok), nil
			}
			select {
			case <-ctx.Done():
				return SourceEnd{}, nil
			case <-t.C():
			}
		}
	}
}

// taskEnd is how a followed task's end ends its monitor.
func taskEnd(s State, ok bool) SourceEnd {
	if !ok {
		return SourceEnd{Note: "the task it followed is gone"}
	}
	if sh, isShell := s.Detail.(*Shell); isShell {
		switch {
		case s.Status == Killed:
			return SourceEnd{Note: "its command was stopped"}
		case sh.Exited && sh.ExitCode != 0:
			return SourceEnd{Status: Failed, Note: fmt.Sprintf("its command exited with code %d", sh.ExitCode)}
		case sh.Exited:
			return SourceEnd{Note: "its command exited with code 0"}
		case sh.Error != "":
			return SourceEnd{Status: Failed, Note: "its command could not start: " + sh.Error}
		}
	}
	return SourceEnd{Note: fmt.Sprintf("the task it followed is %s", s.Status)}
}

// FollowFile returns a source that follows the file at path as it grows,
// from its end at the call (a file not there yet is followed
// from its start once it appears), like tail -F: a file truncated in place
// is read again from its start, and a file replaced by another (a log
// rotated) is read to its end and then the new one from its start. The
// source ends only with the monitor.
func FollowFile(path string, clock Clock) LineSource {
	if clock == nil {
		clock = RealClock{}
	}
	// The end is taken now, not when the source starts: what is written
	// from the call on is followed.
	first, _ := os.Stat(path)
	return func(ctx context.Context, emit func(string) bool) (SourceEnd, error) {
		var (
			f   *os.File
			off int64
			sp  splitter
			buf = make([]byte, monitorRead)
		)
		defer func() {
			if f != nil {
				f.Close()
			}
		}()
		open := func(fromEnd bool) error {
			nf, err := os.Open(path)
			if err != nil {
				return err
			}
			fi, err := nf.Stat()
			if err != nil {
				nf.Close()
				return err
			}
			if !fi.Mode().IsRegular() {
				nf.Close()
				return fmt.Errorf("monitor %s: not a regular file", path)
			}
			if f != nil {
				f.Close()
			}
			f, off = nf, 0
			if fromEnd && first != nil && sameFile(first, fi) {
				off = first.Size() // shorter now: the truncation check reads it again
			}
			return nil
		}
		// readAll reads f from off to its end; false when emit refused.
		readAll := func() bool {
			for {
				n, err := f.ReadAt(buf, off)
				if n > 0 {
					off += int64(n)
					if !sp.feed(buf[:n], emit) {
						return false
					}
				}
				if err != nil || n < len(buf) {
					return true
				}
			}
		}
		if err := open(true); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return SourceEnd{}, err
		}
		t := clock.NewTicker(MonitorPoll)
		defer t.Stop()
		for {
			if f == nil {
				if err := open(false); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return SourceEnd{}, err
				}
			}
			if f != nil {
				if !readAll() {
					return SourceEnd{}, nil
				}
				cur, err := f.Stat()
				now, nerr := os.Stat(path)
				switch {
				case err == nil && cur.Size() < off:
					// Truncated in place: what is there now is new.
					off = 0
					sp.part = sp.part[:0]
					if !readAll() {
						return SourceEnd{}, nil
					}
				case nerr == nil && !sameFile(cur, now):
					// Rotated: the old file is read to its end above;
					// the new one from its start.
					if !sp.flush(emit) {
						return SourceEnd{}, nil
					}
					if err := open(false); err == nil && !readAll() {
						return SourceEnd{}, nil
					}
				}
			}
			select {
			case <-ctx.Done():
				return SourceEnd{}, nil
			case <-t.C():
			}
		}
	}
}

// sameFile reports whether a and b are the same file (device and inode).
func sameFile(a, b fs.FileInfo) bool { return os.SameFile(a, b) }

// CommandSource starts spec as a background shell of kind "monitor" whose
// end tells the model nothing (the monitor following it does), and
// returns the source that follows its output from the start, the shell's
// id, and the function that stops the shell (for MonitorSpec.Stop).
func (r *Registry) CommandSource(spec ShellSpec) (LineSource, ID, func(), error) {
	spec.Kind, spec.Quiet = "monitor", true
	st, err := r.StartShell(spec)
	if err != nil {
		return nil, st.ID, nil, err
	}
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), killWait+time.Second)
		defer cancel()
		r.Stop(ctx, st.ID) // ended already: nothing to stop
	}
	return r.FollowTask(st.ID, true), st.ID, stop, nil
}
