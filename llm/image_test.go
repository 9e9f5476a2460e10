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

func TestTrimImages(t *testing.T) {
	pic := func(n int) Image { return Image{MediaType: ImagePNG, Data: make([]byte, n)} }
	result := func(id string, ims ...Image) Block {
		b := ToolResult(id, "result "+id, false)
		b.Images = ims
		return b
	}
	msgs := []Message{
		{Role: RoleUser, Content: []Block{result("a", pic(10), pic(20))}},
		{Role: RoleAssistant, Content: []Block{Text("ok")}},
		{Role: RoleUser, Content: []Block{result("b", pic(30)), result("c", pic(40))}},
	}
	if got := TrimImages(msgs, 10, 1000); &got[0] != &msgs[0] {
		t.Error("within the budget: the messages were copied")
	}
	got := TrimImages(msgs, 3, 1000) // a's first picture goes
	if n := len(got[0].Content[0].Images); n != 1 || got[0].Content[0].Images[0].Size() != 20 {
		t.Errorf("a keeps %d pictures; want its newest", n)
	}
	if txt := got[0].Content[0].Text; !strings.HasPrefix(txt, "result a\n[image image/png, 10 bytes]\n[no longer shown") {
		t.Errorf("a's text = %q", txt)
	}
	if len(msgs[0].Content[0].Images) != 2 || msgs[0].Content[0].Text != "result a" {
		t.Error("the original messages changed")
	}
	got = TrimImages(msgs, 10, 75) // c (40) and b (30) fit; a's 20 does not, nor anything older
	if len(got[2].Content[0].Images) != 1 || len(got[2].Content[1].Images) != 1 || len(got[0].Content[0].Images) != 0 {
		t.Errorf("kept %d, %d, %d pictures; want b's and c's only", len(got[0].Content[0].Images), len(got[2].Content[0].Images), len(got[2].Content[1].Images))
	}
	if got[1].Content[0].Text != "ok" {
		t.Error("a message without pictures changed")
	}
}
