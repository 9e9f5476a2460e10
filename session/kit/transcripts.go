package kit

import (
	"fmt"
	"io"
	"time"

	"github.com/troupe-dev/troupe/internal/termtext"
	"github.com/troupe-dev/troupe/transcript"
)

// Transcripts opens the Transcripts of one session's agents
// (<home>/sessions/<session>/<agent>.jsonl).
type Transcripts struct {
	dir, session string
	now          func() time.Time
	warn         io.Writer
}

// NewTranscripts returns the transcripts of session under troupe's
// home; a transcript that cannot be created is said on warn.
func NewTranscripts(home, session string, now func() time.Time, warn io.Writer) *Transcripts {
	return &Transcripts{dir: transcript.Dir(home, session), session: session, now: now, warn: warn}
}

// Writer returns agent's transcript Writer, nil when it cannot be
// created (said on stderr: the run goes on without it).
func (t *Transcripts) Writer(agent, kind, parent string) io.Writer {
	if t == nil {
		return nil
	}
	w, err := transcript.Appender(t.dir, transcript.Header{Agent: agent, Kind: kind, Parent: parent, Session: t.session}, t.now())
	if err != nil {
		fmt.Fprintf(t.warn, "troupe: warning: no transcript for %s: %v\n", termtext.Line(agent), err)
		return nil
	}
	return w
}
