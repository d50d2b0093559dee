package extract

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// The reasons a reader stops before the end of a document.
var (
	errTextFull   = errors.New("text limit reached")
	errUnzipLimit = errors.New("decompression limit reached")
	errEncrypted  = errors.New("encrypted")
)

// errDamaged wraps what a reader found wrong in a document.
type errDamaged struct{ what string }

func (e *errDamaged) Error() string { return "damaged: " + e.what }

// damaged returns an error saying what is wrong with the document.
func damaged(format string, args ...any) error {
	return &errDamaged{what: fmt.Sprintf(format, args...)}
}

// run is the state of one extraction: its limits, the text written so far and the
// decompressed bytes read so far. The context (with the time limit) is passed beside it.
type run struct {
	lim   Limits
	out   *textOut
	unzip int64 // decompressed bytes read so far, against lim.MaxUnzip
	steps int
}

// check returns the context's error once it has ended; it looks at the context every
// 256 calls, so loops may call it per token.
func (r *run) check(ctx context.Context) error {
	r.steps++
	if r.steps&255 != 0 {
		return nil
	}
	return ctx.Err()
}

// unzipLeft is how many decompressed bytes may still be read.
func (r *run) unzipLeft() int64 { return max(0, r.lim.MaxUnzip-r.unzip) }

// note says why the text is partial or empty, or "" when the whole document was read;
// caller is the context Extract was given (without the time limit).
func (r *run) note(caller context.Context, err error) string {
	var notes []string
	var dmg *errDamaged
	switch {
	case err == nil, errors.Is(err, errTextFull):
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		notes = append(notes, r.timeNote(caller, err))
	case errors.Is(err, errUnzipLimit):
		notes = append(notes, fmt.Sprintf("decompression stopped at the %s limit", sizeText(r.lim.MaxUnzip)))
	case errors.Is(err, errEncrypted):
		notes = append(notes, err.Error())
	case errors.As(err, &dmg):
		notes = append(notes, cutNote(dmg.Error()))
	default:
		notes = append(notes, cutNote("damaged: "+err.Error()))
	}
	if r.out.cut {
		notes = append(notes, "text cut at "+sizeText(int64(r.lim.MaxText)))
	}
	return strings.Join(notes, "; ")
}

// timeNote tells the time limit from an end of the caller's context.
func (r *run) timeNote(caller context.Context, err error) string {
	if cerr := caller.Err(); cerr != nil {
		return "stopped: " + cerr.Error()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("time limit %s reached", r.lim.Timeout)
	}
	return "stopped: " + err.Error()
}

// cutNote bounds a note's length (an error can quote document bytes), keeping it UTF-8.
func cutNote(s string) string {
	const most = 200
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= most {
		return s
	}
	i := most
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// sizeText writes a byte count as people read it: 1 MiB, 64 KiB, 1500 bytes.
func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}

// isDamage reports whether err is damage found in the document (reading may go on),
// rather than a limit or the end of the context (reading stops).
func isDamage(err error) bool {
	var dmg *errDamaged
	return errors.As(err, &dmg)
}
