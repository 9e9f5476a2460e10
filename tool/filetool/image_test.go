package filetool

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/tool"
)

func encoded(t testing.TB, w, h int, enc func(*bytes.Buffer, image.Image) error) string {
	t.Helper()
	var buf bytes.Buffer
	if err := enc(&buf, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func pngOf(w, h int) func(t testing.TB) string {
	return func(t testing.TB) string {
		return encoded(t, w, h, func(b *bytes.Buffer, m image.Image) error { return png.Encode(b, m) })
	}
}

// webpHeader returns the first bytes of a WebP file whose first chunk is
// kind ("VP8X", "VP8L" or "VP8 ") for a w x h picture: all Read looks at.
func webpHeader(kind string, w, h int) string {
	b := make([]byte, 40)
	copy(b, "RIFF")
	binary.LittleEndian.PutUint32(b[4:], 32)
	copy(b[8:], "WEBP")
	copy(b[12:], kind)
	put24 := func(p []byte, v int) { p[0], p[1], p[2] = byte(v), byte(v>>8), byte(v>>16) }
	switch kind {
	case "VP8X":
		put24(b[24:], w-1)
		put24(b[27:], h-1)
	case "VP8L":
		b[20] = 0x2f
		binary.LittleEndian.PutUint32(b[21:], uint32(w-1)|uint32(h-1)<<14)
	case "VP8 ":
		copy(b[23:], []byte{0x9d, 0x01, 0x2a})
		binary.LittleEndian.PutUint16(b[26:], uint16(w))
		binary.LittleEndian.PutUint16(b[28:], uint16(h))
	}
	return string(b)
}

func TestReadImage(t *testing.T) {
	jpg := encoded(t, 5, 4, func(b *bytes.Buffer, m image.Image) error { return jpeg.Encode(b, m, nil) })
	gf := encoded(t, 2, 7, func(b *bytes.Buffer, m image.Image) error { return gif.Encode(b, m, nil) })
	root := tree(t,
		file{path: "shot.png", content: pngOf(3, 2)(t)},
		file{path: "photo.jpg", content: jpg},
		file{path: "anim.gif", content: gf},
		file{path: "x.webp", content: webpHeader("VP8X", 640, 480)},
		file{path: "l.webp", content: webpHeader("VP8L", 16, 9)},
		file{path: "v.webp", content: webpHeader("VP8 ", 300, 200)},
		file{path: "noext", content: pngOf(1, 1)(t)},
		file{path: "wide.png", content: pngOf(maxImageSide+1, 1)(t)},
		file{path: "big.png", content: pngOf(3, 2)(t) + strings.Repeat("\x00", 2048)},
		file{path: "broken.png", content: "\x89PNG\r\n\x1a\n\x00\x00garbage"},
		file{path: "fake.png", content: "BM\x00\x00binary"},
		file{path: "empty.webp", content: webpHeader("VP8 ", 0, 0)},
	)
	r := NewRead(Config{Root: root, MaxImageBytes: 1024})
	for _, tc := range []struct {
		path, mediaType string
		want            []string
	}{
		{"shot.png", llm.ImagePNG, []string{"PNG image, 3x2 pixels"}},
		{"photo.jpg", llm.ImageJPEG, []string{"JPEG image, 5x4 pixels"}},
		{"anim.gif", llm.ImageGIF, []string{"GIF image, 2x7 pixels"}},
		{"x.webp", llm.ImageWebP, []string{"WEBP image, 640x480 pixels"}},
		{"l.webp", llm.ImageWebP, []string{"16x9 pixels"}},
		{"v.webp", llm.ImageWebP, []string{"300x200 pixels"}},
		{"noext", llm.ImagePNG, []string{"1x1 pixels"}}, // by content, not name
	} {
		res := run(t, r, js(map[string]string{"file_path": tc.path}))
		check(t, tc.path, res, false, tc.want...)
		if len(res.Images) != 1 || res.Images[0].MediaType != tc.mediaType || res.Images[0].Check() != nil {
			t.Errorf("Read %s images = %v; want one %s", tc.path, res.Images, tc.mediaType)
		}
	}
	for _, tc := range []struct{ path, want string }{
		{"wide.png", "8001x1 PNG image; a model takes at most 8000 pixels a side"},
		{"big.png", "Read shows images up to 1 KiB"},
		{"broken.png", "starts like a PNG image but its header does not decode"},
		{"fake.png", "has the name of an image but is not a PNG, JPEG, GIF or WebP picture"},
		{"empty.webp", "its header does not decode (it says 0x0 pixels)"},
	} {
		res := run(t, r, js(map[string]string{"file_path": tc.path}))
		check(t, tc.path, res, true, tc.want)
		if len(res.Images) != 0 {
			t.Errorf("Read %s returned an image with its error", tc.path)
		}
	}
}

// FuzzImageSize: the header readers never panic, and a size they report
// for a picture they accept is positive.
func FuzzImageSize(f *testing.F) {
	f.Add(pngOf(3, 2)(f))
	f.Add(encoded(f, 2, 2, func(b *bytes.Buffer, m image.Image) error { return gif.Encode(b, m, nil) }))
	f.Add(encoded(f, 2, 2, func(b *bytes.Buffer, m image.Image) error { return jpeg.Encode(b, m, nil) }))
	for _, k := range []string{"VP8X", "VP8L", "VP8 "} {
		f.Add(webpHeader(k, 10, 20))
	}
	f.Add("RIFF\x00\x00\x00\x00WEBPVP8X")
	f.Fuzz(func(t *testing.T, data string) {
		mt := imageType([]byte(data))
		if mt == "" {
			return
		}
		w, h, err := imageSize(mt, []byte(data))
		if err == nil && (w < 0 || h < 0) {
			t.Errorf("imageSize = %dx%d; want a non-negative size", w, h)
		}
	})
}

// BenchmarkReadImage reads a 1 MiB PNG as a picture.
func BenchmarkReadImage(b *testing.B) {
	data := pngOf(512, 512)(b)
	data += strings.Repeat("\x00", 1<<20-len(data)) // trailing bytes after IEND: still a PNG by its header
	root := b.TempDir()
	if err := os.WriteFile(filepath.Join(root, "big.png"), []byte(data), 0o644); err != nil {
		b.Fatal(err)
	}
	r := NewRead(Config{Root: root})
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		res, err := r.Run(b.Context(), tool.Call{Name: "Read", Input: []byte(`{"file_path":"big.png"}`)})
		if err != nil || res.IsError || len(res.Images) != 1 {
			b.Fatalf("Read = %+v, %v", res.Content, err)
		}
	}
}
