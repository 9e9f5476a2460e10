package file

import (
	"bytes"
	"encoding/json"

	"github.com/troupe-dev/troupe/team"
)

// decodeTeamFile decodes a team file as json.Unmarshal into a team.Config
// does, decoding only the members whose bytes differ from prev's canonical
// encodings (team.DecodeReusing): every host of a team read the file after
// each change another host made, and decoded the whole roster. It also
// returns the members' bytes in data that are known to be their canonical
// encoding (those equal to prev's; nil for the others), for the next
// update and the next decode; nil when it decoded data whole.
func decodeTeamFile(data []byte, prev *teamSnap) (c team.Config, members [][]byte, err error) {
	if prev == nil || len(prev.members) == 0 {
		err = json.Unmarshal(data, &c)
		return c, nil, err
	}
	c, spans, reused, err := team.DecodeReusing(data, prev.cfg.Members, func(i int, b []byte) bool {
		return i < len(prev.members) && prev.members[i] != nil && bytes.Equal(prev.members[i], b)
	})
	if err != nil || spans == nil {
		return c, nil, err
	}
	members = make([][]byte, len(spans))
	for i, sp := range spans {
		if reused[i] {
			members[i] = data[sp[0]:sp[1]:sp[1]]
		}
	}
	return c, members, nil
}
