package analyzer

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// HTMLText returns the visible text of an HTML document or fragment, for indexing:
//
//  1. Markup is never text: tags, attributes, comments (Outlook's conditional comments
//     too), doctypes and CDATA sections are dropped; entities are decoded.
//  2. The contents of script, style and template are dropped; title, textarea and the
//     alt text of images are kept (a mail client shows alt text when it blocks images, as
//     most do by default; the title is usually the subject).
//  3. noscript, noembed, noframes and iframe hold markup as raw text: it is read as HTML
//     once more, one level deep (a mail client runs no script, so noscript is what it
//     shows); deeper, their contents are dropped.
//  4. A line break stands for every tag except the inline ones (b, span, a, …), so words in
//     table cells or paragraphs never run together while wo<b>r</b>d stays one word.
//
// NUL bytes are dropped first (the tokenizer would turn some into U+FFFD, three bytes).
// It reads with golang.org/x/net/html's tokenizer, in time linear in len(src), and its
// result is never longer than src by more than a byte.
func HTMLText(src string) string {
	var b strings.Builder
	htmlText(&b, strings.ReplaceAll(src, "\x00", ""), 0)
	return b.String()
}

// htmlText writes the visible text of src to b; depth counts re-read raw-text elements.
func htmlText(b *strings.Builder, src string, depth int) {
	z := html.NewTokenizer(strings.NewReader(src))
	var raw atom.Atom // the element just opened, whose text may come next
	skipping := 0     // depth inside template
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return
		case html.TextToken:
			switch {
			case skipping > 0 || raw == atom.Script || raw == atom.Style:
			case htmlReread(raw):
				if depth == 0 {
					htmlText(b, string(z.Raw()), depth+1)
				}
			default:
				b.Write(z.Text())
			}
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			name, hasAttr := z.TagName()
			a := atom.Lookup(name)
			skipping = max(0, skipping+htmlTemplateDepth(a, tt))
			htmlBreak(b, a)
			if a == atom.Img && hasAttr && skipping == 0 {
				htmlAlt(b, z)
			}
			raw = 0
			if tt == html.StartTagToken {
				raw = a
			}
			continue
		}
		raw = 0
	}
}

// htmlTemplateDepth is the change of template depth a tag makes.
func htmlTemplateDepth(a atom.Atom, tt html.TokenType) int {
	switch {
	case a != atom.Template:
		return 0
	case tt == html.StartTagToken:
		return 1
	case tt == html.EndTagToken:
		return -1
	}
	return 0
}

// htmlReread reports whether the raw text of element a is markup shown to the reader.
func htmlReread(a atom.Atom) bool {
	return a == atom.Noscript || a == atom.Noembed || a == atom.Noframes || a == atom.Iframe
}

// htmlBreak writes a line break for a tag that is not inline, unless one ends b already.
func htmlBreak(b *strings.Builder, a atom.Atom) {
	if htmlInline[a] || b.Len() == 0 {
		return
	}
	if s := b.String(); s[len(s)-1] != '\n' {
		b.WriteByte('\n')
	}
}

// htmlAlt writes the alt text of the current img tag between line breaks.
func htmlAlt(b *strings.Builder, z *html.Tokenizer) {
	for {
		key, val, more := z.TagAttr()
		if string(key) == "alt" {
			b.Write(val)
			b.WriteByte('\n')
		}
		if !more {
			return
		}
	}
}

// htmlInline are the elements that continue a word across their tags.
var htmlInline = map[atom.Atom]bool{
	atom.A: true, atom.Abbr: true, atom.B: true, atom.Bdi: true, atom.Bdo: true, atom.Big: true,
	atom.Cite: true, atom.Code: true, atom.Data: true, atom.Del: true, atom.Dfn: true, atom.Em: true,
	atom.Font: true, atom.I: true, atom.Ins: true, atom.Kbd: true, atom.Label: true, atom.Mark: true,
	atom.Nobr: true, atom.Q: true, atom.S: true, atom.Samp: true, atom.Small: true, atom.Span: true,
	atom.Strike: true, atom.Strong: true, atom.Sub: true, atom.Sup: true, atom.Time: true, atom.Tt: true,
	atom.U: true, atom.Var: true, atom.Wbr: true, atom.Blink: true,
}
