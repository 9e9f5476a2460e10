package llm

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Image media types every provider that takes images accepts.
const (
	ImagePNG  = "image/png"
	ImageJPEG = "image/jpeg"
	ImageGIF  = "image/gif"
	ImageWebP = "image/webp"
)

// Image is a picture in a tool result. Data is the encoded file (PNG,
// JPEG, GIF or WebP bytes, not pixels); JSON carries it as base64.
//
// A record that keeps conversations readable (a transcript) may leave
// Data out and say how long it was in Omitted; such an image describes a
// picture but cannot be sent to a model.
type Image struct {
	MediaType string `json:"media_type"`
	Data      []byte `json:"data,omitempty"`
	Omitted   int    `json:"omitted_bytes,omitempty"`
}

// MaxImageBytes is the largest picture a tool should return: its base64
// form is the 5 MB the Anthropic API takes per image.
const MaxImageBytes = 5 << 20 / 4 * 3

// ErrImageOmitted says an image's data was left out of the record it was
// read from.
var ErrImageOmitted = errors.New("image data was omitted from its record")

// Check reports whether im can be sent to a model: a supported media
// type and its data.
func (im Image) Check() error {
	switch im.MediaType {
	case ImagePNG, ImageJPEG, ImageGIF, ImageWebP:
	default:
		return fmt.Errorf("image media type %q: want %s, %s, %s or %s", im.MediaType, ImagePNG, ImageJPEG, ImageGIF, ImageWebP)
	}
	if len(im.Data) == 0 {
		if im.Omitted > 0 {
			return fmt.Errorf("image (%s, %d bytes): %w", im.MediaType, im.Omitted, ErrImageOmitted)
		}
		return fmt.Errorf("image (%s): no data", im.MediaType)
	}
	return nil
}

// Size returns the length of the picture's data, whether held or omitted.
func (im Image) Size() int { return max(len(im.Data), im.Omitted) }

// Stub returns im without its data, recording how long it was.
func (im Image) Stub() Image {
	return Image{MediaType: im.MediaType, Omitted: im.Size()}
}

// String describes im in a line of text: "[image image/png, 2048 bytes]".
// Providers and records that cannot carry the picture use it in its place.
func (im Image) String() string {
	return fmt.Sprintf("[image %s, %d bytes]", im.MediaType, im.Size())
}

// Stubbed returns b with its images' data left out (Image.Stub), and b
// itself when it has none. b is not changed.
func (b Block) Stubbed() Block {
	if len(b.Images) == 0 {
		return b
	}
	imgs := make([]Image, len(b.Images))
	for i, im := range b.Images {
		imgs[i] = im.Stub()
	}
	b.Images = imgs
	return b
}

// Stubbed returns m with the data of its images left out, sharing m's
// content when it has no images. m is not changed.
func (m Message) Stubbed() Message {
	for i, b := range m.Content {
		if len(b.Images) == 0 {
			continue
		}
		content := append([]Block(nil), m.Content...)
		for j := i; j < len(content); j++ {
			content[j] = content[j].Stubbed()
		}
		m.Content = content
		return m
	}
	return m
}

// The image budget of one request. The Messages API takes at most 100
// images and 32 MB a request; a long conversation with many screenshots
// would pass that and fail every later request. TrimImages keeps the
// newest pictures within it.
const (
	MaxRequestImages     = 100
	MaxRequestImageBytes = 16 << 20 // 21.3 MiB as base64
)

// TrimImages returns msgs keeping the newest pictures, at most maxCount
// of at most maxBytes in all, up to the first that does not fit: each
// older picture leaves its tool result, whose text then ends with the picture's description and a note
// that it is no longer shown. msgs is not changed; the messages and blocks
// left as they were are shared.
func TrimImages(msgs []Message, maxCount, maxBytes int) []Message {
	count, bytes, full := 0, 0, false
	var out []Message // copied on the first picture dropped
	for i := len(msgs) - 1; i >= 0; i-- {
		for j := len(msgs[i].Content) - 1; j >= 0; j-- {
			b := msgs[i].Content[j]
			var kept []Image
			var dropped []string
			for k := len(b.Images) - 1; k >= 0; k-- {
				im := b.Images[k]
				full = full || count >= maxCount || bytes+im.Size() > maxBytes
				if !full {
					count, bytes = count+1, bytes+im.Size()
					kept = append(kept, im)
					continue
				}
				dropped = append(dropped, im.String())
			}
			if len(dropped) == 0 {
				continue
			}
			if out == nil {
				out = append([]Message(nil), msgs...)
			}
			if &out[i].Content[0] == &msgs[i].Content[0] {
				out[i].Content = append([]Block(nil), msgs[i].Content...)
			}
			slices.Reverse(kept)
			slices.Reverse(dropped)
			b.Images = kept
			note := strings.Join(dropped, "\n") + "\n[no longer shown: older pictures leave the conversation to keep each request within the API's image limits]"
			if b.Text != "" {
				note = b.Text + "\n" + note
			}
			b.Text = note
			out[i].Content[j] = b
		}
	}
	if out == nil {
		return msgs
	}
	return out
}
