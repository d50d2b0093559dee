package extract

import (
	"context"
	"encoding/xml"
	"errors"
	"io"
	"strings"

	"golang.org/x/text/encoding/htmlindex"
)

// xmlHandler receives the elements and character data of an XML part. Names are local
// names (prefixes vary between writers). start returns skip=true to drop the element
// with everything inside it (hidden markup: properties, deleted text, fallbacks).
type xmlHandler interface {
	start(e xml.StartElement) (skip bool, err error)
	end(local string) error
	chars(b []byte) error
}

// walkXML streams the XML of rd through h, in time linear in its size and memory bounded
// by its largest token. A syntax error is damage: what was read before it stays.
func walkXML(ctx context.Context, r *run, rd io.Reader, h xmlHandler) error {
	d := xml.NewDecoder(rd)
	d.Strict = false
	d.CharsetReader = xmlCharset
	skip := 0 // depth inside a skipped element
	for {
		if err := r.check(ctx); err != nil {
			return err
		}
		tok, err := d.RawToken()
		if err != nil {
			return xmlEnd(err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if skip > 0 {
				skip++
				continue
			}
			s, err := h.start(t)
			if err != nil {
				return err
			}
			if s {
				skip = 1
			}
		case xml.EndElement:
			if skip > 0 {
				skip--
				continue
			}
			if err := h.end(t.Name.Local); err != nil {
				return err
			}
		case xml.CharData:
			if skip == 0 {
				if err := h.chars(t); err != nil {
					return err
				}
			}
		}
	}
}

// xmlEnd turns the decoder's last error into the walk's: nil at the end of the part.
func xmlEnd(err error) error {
	var syn *xml.SyntaxError
	switch {
	case errors.Is(err, io.EOF):
		return nil
	case errors.As(err, &syn):
		return damaged("XML line %d: %s", syn.Line, syn.Msg)
	}
	return err
}

// xmlCharset decodes a part declared in another encoding than UTF-8.
func xmlCharset(label string, in io.Reader) (io.Reader, error) {
	enc, err := htmlindex.Get(label)
	if err != nil {
		return nil, damaged("XML encoding %q unknown", label)
	}
	return enc.NewDecoder().Reader(in), nil
}

// attr returns the value of the attribute with the local name, or "".
func attr(e xml.StartElement, local string) string {
	for _, a := range e.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

// isProperties reports whether an OOXML element holds formatting only (w:rPr, w:pPr,
// a:bodyPr, w:sectPr …): its children (tab stops, fonts) are never text.
func isProperties(local string) bool {
	return strings.HasSuffix(local, "Pr") || strings.HasSuffix(local, "PrChange")
}
