package webtool

import (
	"fmt"
	"mime"
	"strings"
	"unicode/utf8"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/strikethrough"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
)

// Markdown returns body, of the given Content-Type, as text for the
// model: HTML converted to Markdown (links made absolute against
// pageURL), other text as it is. A body that is not text is an error
// naming its type.
func Markdown(body []byte, contentType, pageURL string) (string, error) {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil || mt == "" {
		mt = sniff(body)
	}
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml":
		conv := converter.NewConverter(converter.WithPlugins(base.NewBasePlugin(), commonmark.NewCommonmarkPlugin(),
			table.NewTablePlugin(), strikethrough.NewStrikethroughPlugin()))
		md, err := conv.ConvertString(string(body), converter.WithDomain(pageURL))
		if err != nil {
			return "", fmt.Errorf("convert HTML to Markdown: %w", err)
		}
		return strings.ToValidUTF8(md, "\uFFFD"), nil
	case strings.HasPrefix(mt, "text/"), mt == "application/json", mt == "application/xml",
		strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"), mt == "application/javascript":
		return strings.ToValidUTF8(string(body), "\uFFFD"), nil
	}
	return "", fmt.Errorf("the content is %s, not text or HTML", mt)
}

// sniff guesses a media type from content for a response without a
// usable Content-Type.
func sniff(body []byte) string {
	head := strings.ToLower(strings.TrimSpace(string(body[:min(len(body), 512)])))
	if strings.HasPrefix(head, "<!doctype html") || strings.HasPrefix(head, "<html") {
		return "text/html"
	}
	if utf8.Valid(body[:min(len(body), 512)]) {
		return "text/plain"
	}
	return "application/octet-stream"
}

// truncate cuts s to at most n bytes at a rune boundary, saying so.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "\n\n[content truncated: the page is longer than WebFetch passes on]"
}
