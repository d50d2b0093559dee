package analyzer

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestHTMLText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, html string
		want       []string // the words of the visible text
	}{
		{"tags are not words", `<p class="x">Hello <b>big</b> world</p>`, []string{"hello", "big", "world"}},
		{"inline markup does not split a word", `wo<b>r</b>d <span>a</span>nd`, []string{"word", "and"}},
		{"blocks split words", `<td>one</td><td>two</td><br>three<div>four</div>`, []string{"one", "two", "three", "four"}},
		{"script and style skipped", `<script>var secret = "x";</script><style>.hidden{color:red}</style>shown`, []string{"shown"}},
		{"comments skipped", `a<!-- hidden comment -->b <!--[if mso]>mso<![endif]-->c`, []string{"ab", "c"}},
		{"entities decoded", `caf&eacute; &amp; cr&#232;me&nbsp;br&#xFB;l&eacute;e &lt;tag&gt;`, []string{"cafe", "creme", "brulee", "tag"}},
		{"title included", `<html><head><title>Quarterly report</title><meta name="x" content="meta words"></head><body>body</body></html>`, []string{"quarterly", "report", "body"}},
		{"alt text included", `<img src="logo.png" alt="Company logo">text`, []string{"company", "logo", "text"}},
		{"attributes are not words", `<a href="https://tracker.example/click?id=secret" title="tooltip">link</a>`, []string{"link"}},
		{"noscript content is visible, its markup is not", `<noscript><p>enable <b>images</b></p></noscript>`, []string{"enable", "images"}},
		{"template skipped", `<template><p>inert</p></template>live`, []string{"live"}},
		{"textarea text", `<textarea>typed &amp; kept</textarea>`, []string{"typed", "kept"}},
		{"broken markup", `<p>open <b unclosed text <i>more`, []string{"open", "more"}},
		{"doctype and cdata", `<!DOCTYPE html><![CDATA[raw]]>after`, []string{"after"}},
		{"cjk in html", `<p>東京</p><p>大阪</p>`, []string{"東京", "大阪"}},
		{"plain text unchanged", `just text`, []string{"just", "text"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			text := HTMLText(tt.html)
			got := wordsOf(text)
			assert.Equal(t, tt.want, got, "words of HTMLText(%q) = %q: got %q; want %q", tt.html, text, got, tt.want)
		})
	}
}

// Hostile HTML is read in time linear in its size: nested raw-text elements, endless
// tags and unterminated constructs.
func TestHTMLTextIsLinearOnHostileInput(t *testing.T) {
	t.Parallel()
	const n = 200_000
	for name, html := range map[string]string{
		"nested noscript":     strings.Repeat("<noscript>", n),
		"open angle brackets": strings.Repeat("<", n),
		"unterminated tag":    "<a " + strings.Repeat(`b="c" `, n),
		"nested divs":         strings.Repeat("<div>", n) + "deep" + strings.Repeat("</div>", n),
		"entities":            strings.Repeat("&amp;&#xFFFFFF;&bogus;", n),
		"comments":            strings.Repeat("<!--", n),
		"nul in title":        "<title>" + strings.Repeat("\x00", n),
	} {
		start := time.Now()
		text := HTMLText(html)
		elapsed := time.Since(start)
		assert.Less(t, elapsed, 5*time.Second, "%s: took %s", name, elapsed)
		assert.LessOrEqual(t, len(text), len(html)+1, "%s: output larger than input", name)
	}
}
