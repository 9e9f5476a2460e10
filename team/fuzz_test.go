package team_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/troupe-dev/troupe/team"
)

// FuzzTeamConfigDecode decodes arbitrary team files. Decoding must never
// panic; a file that decodes re-encodes, decodes again to the same Config,
// and then encodes to the same bytes.
func FuzzTeamConfigDecode(f *testing.F) {
	f.Add([]byte(`{"name":"crew","createdAt":1,"leadAgentId":"team-lead@crew","members":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var c1 team.Config
		if err := json.Unmarshal(data, &c1); err != nil {
			return
		}
		if k, ok := configShadowKey(c1); ok {
			t.Fatalf("unknown key %q shadows a field (differs only in case); a rewrite would let it override the field", k)
		}
		b1, err := json.Marshal(c1)
		if err != nil {
			t.Fatalf("encode decoded team file %q: %v", data, err)
		}
		var c2 team.Config
		if err := json.Unmarshal(b1, &c2); err != nil {
			t.Fatalf("decode re-encoded team file %s (from %q): %v", b1, data, err)
		}
		if diff := cmp.Diff(c1, c2, cmp.Comparer(jsonEqual), equateEmpty); diff != "" {
			t.Fatalf("decode(encode(decode(%q))) mismatch (-want +got):\n%s", data, diff)
		}
		b2, err := json.Marshal(c2)
		if err != nil || !bytes.Equal(b1, b2) {
			t.Fatalf("encoding not stable:\n%s\n%s (%v)", b1, b2, err)
		}
	})
}

// configShadowKey reports an unknown key of c or of a member that differs
// only in case from a modelled JSON field.
func configShadowKey(c team.Config) (string, bool) {
	if k, ok := shadowKey(c.Extra, reflect.TypeFor[team.Config]()); ok {
		return k, true
	}
	for _, m := range c.Members {
		if k, ok := shadowKey(m.Extra, reflect.TypeFor[team.Member]()); ok {
			return k, true
		}
	}
	return "", false
}

func shadowKey[M ~map[string]json.RawMessage](extra M, typ reflect.Type) (string, bool) {
	for k := range extra {
		for i := range typ.NumField() {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			if name != "" && name != "-" && name != k && strings.EqualFold(name, k) {
				return k, true
			}
		}
	}
	return "", false
}

// FuzzValidateName checks what the name validators let through: no path
// separator, NUL, "..", control character or invalid UTF-8, at most
// MaxNameLen bytes, and a non-empty folder name. An accepted team name has
// a canonical form that is itself accepted and canonical.
func FuzzValidateName(f *testing.F) {
	f.Add("alpha")
	f.Fuzz(func(t *testing.T, name string) {
		safe := func(kind string) {
			switch {
			case strings.ContainsAny(name, "/\\\x00"):
				t.Fatalf("%s name %q accepted; it holds a path separator or NUL", kind, name)
			case strings.Contains(name, ".."):
				t.Fatalf("%s name %q accepted; it holds ..", kind, name)
			case len(name) > team.MaxNameLen || name == "":
				t.Fatalf("%s name %q (%d bytes) accepted; want 1-%d bytes", kind, name, len(name), team.MaxNameLen)
			case !utf8.ValidString(name):
				t.Fatalf("%s name %q accepted; it is not valid UTF-8", kind, name)
			case strings.IndexFunc(name, unicode.IsControl) >= 0:
				t.Fatalf("%s name %q accepted; it holds a control character", kind, name)
			case team.Sanitize(name) == "" || team.SanitizePath(name) == "":
				t.Fatalf("%s name %q accepted; its folder name is empty", kind, name)
			}
		}
		if team.ValidateTeamName(name) == nil {
			safe("team")
			canon, err := team.CanonicalName(name)
			if err != nil || team.ValidateTeamName(canon) != nil || team.Sanitize(canon) != canon {
				t.Fatalf("CanonicalName(%q) = %q, %v; want a valid canonical name", name, canon, err)
			}
		}
		for _, lead := range []bool{false, true} {
			if team.ValidateAgentName(name, lead) != nil {
				continue
			}
			safe("agent")
			if team.SanitizePath(name) != name {
				t.Fatalf("agent name %q accepted, but its inbox file would be %q", name, team.SanitizePath(name))
			}
			if !lead && strings.EqualFold(name, team.LeadName) {
				t.Fatalf("agent name %q accepted for a teammate; it is the lead's", name)
			}
		}
	})
}

var equateEmpty = cmpopts.EquateEmpty()
