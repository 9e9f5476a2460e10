package filetool

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"path/filepath"
	"strings"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/tool"
)

// maxImageSide is the longest side, in pixels, of a picture the model
// takes.
const maxImageSide = 8000

// imageType returns the media type of the picture whose file starts with
// head, when it is one the model can be shown, or "".
func imageType(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return llm.ImagePNG
	case bytes.HasPrefix(head, []byte("\xff\xd8\xff")):
		return llm.ImageJPEG
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return llm.ImageGIF
	case len(head) >= 12 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WEBP":
		return llm.ImageWebP
	}
	return ""
}

// imageExt reports whether name has the extension of a picture type the
// model takes.
func imageExt(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".png", ".jpg", ".jpeg", ".gif", ".webp":
		return true
	}
	return false
}

// errWebPHeader says a WebP file's first chunk is not one that gives its
// size.
var errWebPHeader = errors.New("not a VP8, VP8L or VP8X chunk")

// imageSize returns the width and height of the picture data of type
// mediaType, read from its header.
func imageSize(mediaType string, data []byte) (w, h int, err error) {
	var cfg image.Config
	switch mediaType {
	case llm.ImagePNG:
		cfg, err = png.DecodeConfig(bytes.NewReader(data))
	case llm.ImageJPEG:
		cfg, err = jpeg.DecodeConfig(bytes.NewReader(data))
	case llm.ImageGIF:
		cfg, err = gif.DecodeConfig(bytes.NewReader(data))
	case llm.ImageWebP:
		return webpSize(data)
	default:
		return 0, 0, fmt.Errorf("media type %q", mediaType)
	}
	return cfg.Width, cfg.Height, err
}

// webpSize reads the canvas size from a WebP file's first chunk (the
// standard library has no WebP decoder): VP8X holds it as 24-bit values
// less one, VP8L as 14-bit values less one after its signature, VP8 as
// 14-bit values after a key frame's start code.
func webpSize(b []byte) (w, h int, err error) {
	if len(b) < 30 {
		return 0, 0, io.ErrUnexpectedEOF
	}
	u24 := func(p []byte) int { return int(p[0]) | int(p[1])<<8 | int(p[2])<<16 }
	switch string(b[12:16]) {
	case "VP8X":
		return u24(b[24:27]) + 1, u24(b[27:30]) + 1, nil
	case "VP8L":
		if b[20] != 0x2f {
			return 0, 0, errors.New("VP8L chunk without its signature")
		}
		bits := binary.LittleEndian.Uint32(b[21:25])
		return int(bits&0x3fff) + 1, int(bits>>14&0x3fff) + 1, nil
	case "VP8 ":
		if !bytes.Equal(b[23:26], []byte{0x9d, 0x01, 0x2a}) {
			return 0, 0, errors.New("VP8 chunk without a key frame's start code")
		}
		return int(binary.LittleEndian.Uint16(b[26:28]) & 0x3fff), int(binary.LittleEndian.Uint16(b[28:30]) & 0x3fff), nil
	}
	return 0, 0, errWebPHeader
}

// readImage returns the picture of type mediaType in f (of size n bytes)
// as a Result the model sees, or an error Result saying why it cannot be
// shown: larger than limit bytes, a side past maxImageSide pixels, or a
// header that does not decode.
func readImage(abs string, f io.Reader, n, limit int64, mediaType string) tool.Result {
	kind := strings.ToUpper(strings.TrimPrefix(mediaType, "image/"))
	if n > limit {
		return tool.Errorf("Read: %s is a %s image of %s; Read shows images up to %s (what a model takes). Make a smaller copy (fewer pixels, or JPEG) with Bash and read that", abs, kind, size(n), size(limit))
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return tool.Errorf("Read: cannot read %s: %v", abs, unwrapPath(err))
	}
	if int64(len(data)) > limit { // it grew since the stat
		return tool.Errorf("Read: %s is a %s image larger than %s; Read shows images up to that size", abs, kind, size(limit))
	}
	w, h, err := imageSize(mediaType, data)
	if err == nil && (w <= 0 || h <= 0) {
		err = fmt.Errorf("it says %dx%d pixels", w, h)
	}
	if err != nil {
		return tool.Errorf("Read: %s starts like a %s image but its header does not decode (%v); it may be damaged", abs, kind, err)
	}
	if w > maxImageSide || h > maxImageSide {
		return tool.Errorf("Read: %s is a %dx%d %s image; a model takes at most %d pixels a side. Make a smaller copy with Bash and read that", abs, w, h, kind, maxImageSide)
	}
	return tool.Result{
		Content: fmt.Sprintf("%s: %s image, %dx%d pixels, %s", abs, kind, w, h, size(int64(len(data)))),
		Images:  []llm.Image{{MediaType: mediaType, Data: data}},
	}
}
