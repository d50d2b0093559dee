package extract

import (
	"context"
	"errors"

	"golang.org/x/text/encoding"
	"golang.org/x/text/transform"
)

// maxRTFDepth bounds the group stack kept; deeper groups are counted, not kept, and
// take their parent's state.
const maxRTFDepth = 512

// rtfGroup is the state a group inherits and may change.
type rtfGroup struct {
	uc     int  // characters after \uN that stand in for it (\ucN)
	skip   bool // a destination that is not text
	hidden bool // \v: hidden text
	fonts  bool // inside the font table
	cp     int  // code page of the current font, 0 for the document's
}

// rtfReader reads RTF: control words, groups, \'hh bytes in the document's or the font's
// code page, \uN characters and their \ucN stand-ins. It is linear in its input.
type rtfReader struct {
	data     []byte
	pos      int
	out      *textOut
	stack    []rtfGroup
	deep     int // groups opened past maxRTFDepth
	g        rtfGroup
	docCP    int
	fontCP   map[int]int // \fN → code page, from the font table
	curFont  int         // the font being defined in the font table
	ucLeft   int         // stand-in characters still to skip after \uN
	high     rune        // a pending high surrogate from \uN
	pending  []byte      // 8-bit text not yet decoded
	pendCP   int
	decoders map[int]*encoding.Decoder
	buf      []byte // decoded text, reused
}

// readRTF reads an RTF document.
func readRTF(ctx context.Context, r *run, data []byte) error {
	p := &rtfReader{data: data, out: r.out, g: rtfGroup{uc: 1}, docCP: 1252, fontCP: map[int]int{}, decoders: map[int]*encoding.Decoder{}}
	for p.pos < len(p.data) {
		if err := r.check(ctx); err != nil {
			return err
		}
		if err := p.step(); err != nil {
			return err
		}
	}
	if err := p.flush(true); err != nil {
		return err
	}
	if len(p.stack) > 0 || p.deep > 0 {
		return damaged("RTF ends inside %d open groups", len(p.stack)+p.deep)
	}
	return nil
}

// step reads one token: a brace, a control word or symbol, or a text byte.
func (p *rtfReader) step() error {
	c := p.data[p.pos]
	p.pos++
	switch c {
	case '{':
		p.ucLeft = 0
		return p.open()
	case '}':
		p.ucLeft = 0
		return p.close()
	case '\\':
		return p.control()
	case '\r', '\n':
		return nil
	}
	return p.char(c)
}

func (p *rtfReader) open() error {
	if err := p.flush(true); err != nil {
		return err
	}
	if len(p.stack) >= maxRTFDepth {
		p.deep++
		return nil
	}
	p.stack = append(p.stack, p.g)
	return nil
}

func (p *rtfReader) close() error {
	if err := p.flush(true); err != nil {
		return err
	}
	switch {
	case p.deep > 0:
		p.deep--
	case len(p.stack) > 0:
		p.g = p.stack[len(p.stack)-1]
		p.stack = p.stack[:len(p.stack)-1]
	}
	return nil
}

// char handles one byte of text (or of an \'hh escape).
func (p *rtfReader) char(c byte) error {
	if p.ucLeft > 0 {
		p.ucLeft--
		return nil
	}
	if p.g.skip || p.g.hidden || p.g.fonts {
		return nil
	}
	cp := p.codePage()
	if cp != p.pendCP {
		if err := p.flush(true); err != nil {
			return err
		}
		p.pendCP = cp
	}
	p.pending = append(p.pending, c)
	if len(p.pending) >= 4096 {
		return p.flush(false)
	}
	return nil
}

func (p *rtfReader) codePage() int {
	if p.g.cp != 0 {
		return p.g.cp
	}
	return p.docCP
}

// flush decodes the pending bytes; unless final, an incomplete multi-byte character at
// the end waits for its next byte.
func (p *rtfReader) flush(final bool) error {
	if len(p.pending) == 0 {
		return nil
	}
	dec := p.decoders[p.pendCP]
	if dec == nil {
		dec = rtfEncoding(p.pendCP).NewDecoder()
		p.decoders[p.pendCP] = dec
	}
	dec.Reset()
	if p.buf == nil {
		p.buf = make([]byte, 8192)
	}
	src := p.pending
	for len(src) > 0 {
		nDst, nSrc, err := dec.Transform(p.buf, src, final)
		if werr := p.out.text(string(p.buf[:nDst])); werr != nil {
			return werr
		}
		src = src[nSrc:]
		if err == nil || errors.Is(err, transform.ErrShortSrc) && !final {
			break
		}
		if !errors.Is(err, transform.ErrShortDst) {
			src = nil // undecodable: dropped
		}
	}
	p.pending = append(p.pending[:0], src...)
	return nil
}

// text writes decoded text after the pending bytes.
func (p *rtfReader) text(s string) error {
	if p.g.skip || p.g.hidden || p.g.fonts {
		return nil
	}
	if err := p.flush(true); err != nil {
		return err
	}
	if s == "\n" || s == "\t" || s == " " {
		p.out.sep(s[0])
		return nil
	}
	return p.out.text(s)
}
