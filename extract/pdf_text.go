package extract

import (
	"cmp"
	"context"
	"math"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// matrix is a PDF transformation [a b c d e f].
type matrix [6]float64

var identity = matrix{1, 0, 0, 1, 0, 0}

// mul returns m × n (m applied first).
func (m matrix) mul(n matrix) matrix {
	return matrix{
		m[0]*n[0] + m[1]*n[2], m[0]*n[1] + m[1]*n[3],
		m[2]*n[0] + m[3]*n[2], m[2]*n[1] + m[3]*n[3],
		m[4]*n[0] + m[5]*n[2] + n[4], m[4]*n[1] + m[5]*n[3] + n[5],
	}
}

func translate(x, y float64) matrix { return matrix{1, 0, 0, 1, x, y} }

// operand is one operand of a content stream operator.
type operand struct {
	tok pdfTok
	num float64
	str []byte
	arr []operand // the elements of a TJ array
}

// pdfText interprets one content stream for its text: the text state and position
// (Tm, CTM, font, spacing), and where the last string shown ended, to separate the next
// one by a space (a gap) or a line (another baseline).
type pdfText struct {
	d        *pdfDoc
	res      types.Dict
	font     *pdfFont
	size     float64 // Tf size
	tc, tw   float64 // character and word spacing
	th, tl   float64 // horizontal scaling (1 = 100 %) and leading
	tm, tlm  matrix
	ctm      matrix
	saved    []matrix // the q/Q stack of CTMs
	last     [2]float64
	lastSize float64 // device size of the last string shown; 0: nothing shown yet
	ops      []operand
}

// maxOperands bounds the operands kept before an operator; malformed content that
// piles more is cut from the start.
const maxOperands = 32

// runContent reads the text of a content stream (a page's or a form's) with its
// resources; depth counts forms inside forms.
func (d *pdfDoc) runContent(ctx context.Context, content []byte, res types.Dict, depth int) error {
	t := &pdfText{d: d, res: res, font: defaultFont, th: 1, tm: identity, tlm: identity, ctm: identity}
	return t.run(ctx, content, depth)
}

func (t *pdfText) run(ctx context.Context, content []byte, depth int) error {
	l := &pdfLexer{b: content}
	for {
		if err := cmp.Or(t.d.r.check(ctx), t.d.stop); err != nil {
			return err
		}
		tok, w, num := l.next()
		switch tok {
		case tokEOF:
			return nil
		case tokOp:
			if err := t.op(ctx, l, string(w), depth); err != nil {
				return err
			}
			t.ops = t.ops[:0]
		case tokArrOpen:
			t.push(operand{tok: tokArrOpen, arr: readArray(l)})
		case tokDictOpen:
			skipDict(l)
		default:
			t.push(operand{tok: tok, num: num, str: append([]byte(nil), w...)})
		}
	}
}

func (t *pdfText) push(o operand) {
	if len(t.ops) == maxOperands {
		t.ops = append(t.ops[:0], t.ops[1:]...)
	}
	t.ops = append(t.ops, o)
}

// readArray reads the elements of an array up to its ], strings and numbers only
// (a TJ array); nested arrays and dictionaries are skipped.
func readArray(l *pdfLexer) []operand {
	var arr []operand
	depth := 0
	for {
		tok, w, num := l.next()
		switch tok {
		case tokEOF:
			return arr
		case tokArrOpen:
			depth++
		case tokArrClose:
			if depth == 0 {
				return arr
			}
			depth--
		case tokStr, tokNum:
			if depth == 0 {
				arr = append(arr, operand{tok: tok, num: num, str: append([]byte(nil), w...)})
			}
		case tokOp:
			if depth == 0 { // an operator inside an array: the ] is missing
				return arr
			}
		}
	}
}

// skipDict skips a dictionary operand (of BDC, DP, or an inline image's parameters).
func skipDict(l *pdfLexer) {
	depth := 1
	for depth > 0 {
		switch tok, _, _ := l.next(); tok {
		case tokEOF:
			return
		case tokDictOpen:
			depth++
		case tokDictClose:
			depth--
		}
	}
}

// nums returns the last n operands as numbers, ok=false when they are not.
func (t *pdfText) nums(n int) ([]float64, bool) {
	if len(t.ops) < n {
		return nil, false
	}
	out := make([]float64, n)
	for i, o := range t.ops[len(t.ops)-n:] {
		if o.tok != tokNum || math.IsNaN(o.num) || math.IsInf(o.num, 0) {
			return nil, false
		}
		out[i] = o.num
	}
	return out, true
}

// lastOp returns the last operand, or an empty one.
func (t *pdfText) lastOp() operand {
	if len(t.ops) == 0 {
		return operand{}
	}
	return t.ops[len(t.ops)-1]
}
