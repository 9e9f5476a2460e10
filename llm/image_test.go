package llm

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestImageCheck(t *testing.T) {
	for _, tc := range []struct {
		im   Image
		want string
	}{
		{Image{MediaType: ImagePNG, Data: []byte("x")}, ""},
		{Image{MediaType: "image/bmp", Data: []byte("x")}, `media type "image/bmp"`},
		{Image{MediaType: ImageJPEG}, "no data"},
		{Image{MediaType: ImageGIF, Omitted: 9}, "omitted"},
	} {
		err := tc.im.Check()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("Check(%v) = %v; want %q", tc.im, err, tc.want)
		}
	}
	if err := (Image{MediaType: ImagePNG, Omitted: 3}).Check(); !errors.Is(err, ErrImageOmitted) {
		t.Errorf("Check of an omitted image = %v; want ErrImageOmitted", err)
	}
}

// Stubbed leaves the original message, which the conversation still
// holds, untouched, and its JSON has no data.
func TestMessageStubbed(t *testing.T) {
	res := ToolResult("t1", "shot", false)
	res.Images = []Image{{MediaType: ImagePNG, Data: []byte("PICTURE")}}
	m := Message{Role: RoleUser, Content: []Block{Text("before"), res}}
	s := m.Stubbed()
	if got := m.Content[1].Images[0]; string(got.Data) != "PICTURE" || got.Omitted != 0 {
		t.Fatalf("the original changed: %+v", got)
	}
	b, _ := json.Marshal(s)
	if strings.Contains(string(b), `"data"`) || !strings.Contains(string(b), `"images":[{"media_type":"image/png","omitted_bytes":7}]`) {
		t.Errorf("stubbed JSON = %s", b)
	}
	if got := s.Content[1].Images[0].String(); got != "[image image/png, 7 bytes]" {
		t.Errorf("String = %q", got)
	}
	plain := UserText("no pictures")
	if ps := plain.Stubbed(); &ps.Content[0] != &plain.Content[0] {
		t.Error("a message without images was copied")
	}
	// Data round-trips through JSON as base64.
	var back Message
	full, _ := json.Marshal(m)
	if err := json.Unmarshal(full, &back); err != nil || string(back.Content[1].Images[0].Data) != "PICTURE" {
		t.Errorf("round trip = %+v, %v", back, err)
	}
}
