package extract

import (
	"context"
	"math"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// op carries out one operator: the text state, text showing, graphics state saves and
// forms (Do); the others (paths, colours, images) draw nothing we read.
func (t *pdfText) op(ctx context.Context, l *pdfLexer, op string, depth int) error {
	if op == "Tf" || op == "Do" { // may read a font or a form: look at the clock first
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	switch op {
	case "BT":
		t.tm, t.tlm = identity, identity
	case "Tf":
		if len(t.ops) >= 2 {
			t.font = t.fontNamed(string(t.ops[len(t.ops)-2].str))
			t.size = t.ops[len(t.ops)-1].num
		}
	case "Tc", "Tw", "Tz", "TL":
		t.spacing(op)
	case "Td", "TD":
		if v, ok := t.nums(2); ok {
			if op == "TD" {
				t.tl = -v[1]
			}
			t.nextLine(v[0], v[1])
		}
	case "T*":
		t.nextLine(0, -t.tl)
	case "Tm":
		if v, ok := t.nums(6); ok {
			t.tm = matrix(v)
			t.tlm = t.tm
		}
	case "Tj":
		return t.show(t.lastOp().str)
	case "'", "\"":
		if v, ok := t.nums(3); ok && op == "\"" {
			t.tw, t.tc = v[0], v[1]
		}
		t.nextLine(0, -t.tl)
		return t.show(t.lastOp().str)
	case "TJ":
		return t.showArray(t.lastOp().arr)
	case "q":
		if len(t.saved) < 64 {
			t.saved = append(t.saved, t.ctm)
		}
	case "Q":
		if n := len(t.saved); n > 0 {
			t.ctm, t.saved = t.saved[n-1], t.saved[:n-1]
		}
	case "cm":
		if v, ok := t.nums(6); ok {
			t.ctm = matrix(v).mul(t.ctm)
		}
	case "ID":
		l.skipInlineImage()
	case "Do":
		return t.form(ctx, string(t.lastOp().str), depth)
	}
	return nil
}

func (t *pdfText) spacing(op string) {
	v, ok := t.nums(1)
	if !ok {
		return
	}
	switch op {
	case "Tc":
		t.tc = v[0]
	case "Tw":
		t.tw = v[0]
	case "Tz":
		t.th = v[0] / 100
	case "TL":
		t.tl = v[0]
	}
}

func (t *pdfText) nextLine(tx, ty float64) {
	t.tlm = translate(tx, ty).mul(t.tlm)
	t.tm = t.tlm
}

// fontNamed returns the font of the resources' Font entry name.
func (t *pdfText) fontNamed(name string) *pdfFont {
	fonts := t.d.dict(t.res["Font"])
	if fonts == nil {
		return defaultFont
	}
	o, ok := fonts[name]
	if !ok {
		return defaultFont
	}
	return t.d.font(o)
}

// showArray shows the strings of a TJ array; its numbers move the position back by
// thousandths of the font size, so a large negative one is a gap between words.
func (t *pdfText) showArray(arr []operand) error {
	for _, o := range arr {
		if o.tok == tokNum {
			t.tm = translate(-o.num/1000*t.size*t.th, 0).mul(t.tm)
			continue
		}
		if err := t.show(o.str); err != nil {
			return err
		}
	}
	return nil
}

// show writes the text of a string, after a separator when it starts off the end of the
// last string (a gap of a fifth of the size or more) or on another line, and moves the
// position past its glyphs.
func (t *pdfText) show(s []byte) error {
	if len(s) == 0 {
		return nil
	}
	trm := t.tm.mul(t.ctm)
	size := math.Abs(t.size) * math.Sqrt(math.Abs(trm[0]*trm[3]-trm[1]*trm[2]))
	t.separate(trm, size)
	var err error
	t.font.each(s, func(c uint32, n int, text string) {
		if err == nil && text != "" {
			err = t.d.r.out.text(text)
		}
		adv := t.font.width(c)*t.size + t.tc
		if n == 1 && c == ' ' {
			adv += t.tw
		}
		t.tm = translate(adv*t.th, 0).mul(t.tm)
	})
	end := t.tm.mul(t.ctm)
	t.last, t.lastSize = [2]float64{end[4], end[5]}, max(size, 1e-6)
	return err
}

// separate owes the separator between the last string and one starting at trm: a line
// when the baseline moved by half the size, a space when the gap along the line is a
// fifth of the size or the text went back.
func (t *pdfText) separate(trm matrix, size float64) {
	if t.lastSize == 0 {
		return
	}
	dx, dy := trm[4]-t.last[0], trm[5]-t.last[1]
	ax, ay := trm[0], trm[1] // the direction of the baseline
	norm := math.Hypot(ax, ay)
	if norm == 0 || math.IsNaN(norm) || math.IsInf(norm, 0) {
		t.d.r.out.sep(' ')
		return
	}
	along := (dx*ax + dy*ay) / norm
	across := (dy*ax - dx*ay) / norm
	ref := max(size, t.lastSize)
	switch {
	case math.Abs(across) > ref/2:
		t.d.r.out.sep('\n')
	case along > ref/5 || along < -ref:
		t.d.r.out.sep(' ')
	}
}

// form reads the text of a form XObject named in the resources, with its own resources
// and matrix, within the depth bound.
func (t *pdfText) form(ctx context.Context, name string, depth int) error {
	if depth >= pdfMaxDepth/4 {
		return nil
	}
	xobjs := t.d.dict(t.res["XObject"])
	if xobjs == nil {
		return nil
	}
	o := xobjs[name]
	fd := t.d.dict(o)
	if fd == nil || t.d.name(fd["Subtype"]) != "Form" {
		return nil
	}
	b, err := t.d.stream(o)
	if err != nil && !isDamage(err) {
		return err
	}
	res := t.d.dict(fd["Resources"])
	if res == nil {
		res = t.res
	}
	sub := &pdfText{d: t.d, res: res, font: defaultFont, th: 1, tm: identity, tlm: identity, ctm: t.ctm}
	if m, ok := t.d.numbers(fd["Matrix"], 6); ok {
		sub.ctm = matrix(m).mul(t.ctm)
	}
	sub.last, sub.lastSize = t.last, t.lastSize
	if err := sub.run(ctx, b, depth+1); err != nil {
		return err
	}
	t.last, t.lastSize = sub.last, sub.lastSize
	return nil
}

// numbers returns an array of n numbers.
func (d *pdfDoc) numbers(o types.Object, n int) ([]float64, bool) {
	a := d.array(o)
	if len(a) != n {
		return nil, false
	}
	out := make([]float64, n)
	for i, x := range a {
		v, ok := d.number(x)
		if !ok {
			return nil, false
		}
		out[i] = v
	}
	return out, true
}
