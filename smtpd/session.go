package smtpd

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/emersion/go-smtp"

	"github.com/mailledger/mailledger/archive"
)

// readChunk is the step in which a message is read and charged to the in-flight budget.
const readChunk = 64 << 10

// The replies of the receiver's own refusals.
var (
	errBusy = &smtp.SMTPError{Code: 452, EnhancedCode: smtp.EnhancedCode{4, 3, 1},
		Message: "Too much mail in flight, try again later"}
	errCommit = &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0},
		Message: "Could not store the message, try again later"}
	errClosing = &smtp.SMTPError{Code: 421, EnhancedCode: smtp.EnhancedCode{4, 3, 2},
		Message: "Shutting down, try again later"}
)

// session is one client's SMTP transaction state; go-smtp calls it from the
// connection's goroutine (Data, for BDAT, from one more).
type session struct {
	srv    *Server
	tc     *trackedConn
	source string // "smtp [ip] helo=name", for Incoming.Source and the logs
	from   string
	rcpts  []string
	ended  atomic.Bool // Logout ran: the session is no longer counted by the committer
}

var _ smtp.Session = (*session)(nil)

func (s *session) Reset() { s.from, s.rcpts = "", nil }
func (s *session) Logout() error {
	if s.ended.CompareAndSwap(false, true) {
		s.srv.commits.sessionEnded()
	}
	return nil
}

// Mail starts a message.
func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	if s.tc.draining.Load() {
		return errClosing
	}
	s.from, s.rcpts = from, nil
	return nil
}

// Rcpt accepts a recipient that has a tenant; go-smtp enforces SMTP_MAX_RECIPIENTS.
func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if _, ok := s.srv.cfg.Tenants.For(to); !ok {
		s.srv.metrics.refuse(refusedRecipient)
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 2},
			Message: fmt.Sprintf("No archive tenant for domain %q: mail for it is not accepted here", domainOf(to))}
	}
	s.rcpts = append(s.rcpts, to)
	return nil
}

// Data reads the message (bounded in size, time and memory), prepares one copy per
// tenant of its recipients and answers 250 only once the group commit that stored them
// has returned.
func (s *session) Data(r io.Reader) error {
	s.tc.beginData(s.srv.cfg.IdleTimeout, s.srv.cfg.DataTimeout)
	defer s.tc.endData()
	raw, held, err := s.read(r)
	defer s.srv.budget.Release(held)
	if err != nil {
		return s.readFailed(err)
	}
	s.srv.metrics.received.Inc()
	job, err := s.prepare(raw)
	if err != nil {
		return s.refuseUnparsable(raw, err)
	}
	results, err := s.srv.commits.submit(job)
	if err != nil {
		s.srv.metrics.refuse(refusedCommit)
		s.srv.logger.Error("smtp commit failed: answered 451", "source", s.source, "size", len(raw), "error", err.Error())
		return errCommit
	}
	return s.archived(job, results, len(raw))
}

// read reads the whole message, charging what it holds to the in-flight budget; held is
// what the caller gives back once the message is committed. The message is read in chunks
// of readChunk kept from one message to the next (readChunks) and copied once into a
// slice of its size: a buffer grown by doubling zeroed and copied a 2 MB message three
// times over (a tenth of the receiver's CPU in smtpbench).
func (s *session) read(r io.Reader) (raw []byte, held int64, err error) {
	var chunks []*[]byte // full but the last
	defer func() {
		for _, c := range chunks {
			readChunks.Put(c)
		}
	}()
	for {
		if !s.srv.budget.TryAcquire(readChunk) {
			return nil, held, errBusy
		}
		c := readChunks.Get().(*[]byte)
		chunks = append(chunks, c)
		n := 0
		var err error
		for n < readChunk && err == nil {
			var k int
			k, err = r.Read((*c)[n:])
			n += k
		}
		s.srv.budget.Release(int64(readChunk - n))
		held += int64(n)
		if errors.Is(err, io.EOF) { // the end-of-data line (a dropped connection is ErrUnexpectedEOF)
			raw = make([]byte, 0, held)
			for _, c := range chunks[:len(chunks)-1] {
				raw = append(raw, *c...)
			}
			return append(raw, (*c)[:n]...), held, nil
		}
		if err != nil {
			return nil, held, err
		}
	}
}

// readChunks are the chunks messages are read in.
var readChunks = sync.Pool{New: func() any { b := make([]byte, readChunk); return &b }}

// readFailed is the reply to a message that could not be read whole.
func (s *session) readFailed(err error) error {
	var smtpErr *smtp.SMTPError
	switch {
	case errors.Is(err, smtp.ErrDataTooLarge):
		s.srv.metrics.refuse(refusedSize)
		return smtp.ErrDataTooLarge
	case errors.Is(err, errBusy):
		s.srv.metrics.refuse(refusedBusy)
		return errBusy
	case errors.As(err, &smtpErr):
		return smtpErr
	}
	return fmt.Errorf("read message: %w", err) // the connection is gone or timed out
}

// prepare parses and seals one copy of raw per tenant of the recipients, each with the
// envelope recipients of that tenant's domains.
func (s *session) prepare(raw []byte) (*commitJob, error) {
	tenants, byTenant := s.srv.cfg.Tenants.split(s.rcpts)
	arrived := s.srv.now()
	job := &commitJob{size: len(raw) * len(tenants)}
	for _, tenant := range tenants {
		p, err := s.srv.arc.Prepare(archive.Incoming{Tenant: tenant, Raw: raw, Envelope: byTenant[tenant],
			Arrived: arrived, Source: s.source})
		if err != nil {
			return nil, err
		}
		job.batch = append(job.batch, p)
	}
	return job, nil
}

// refuseUnparsable answers 554 to a message the archive will not take, and logs it
// without its content (its size and SHA-256 only).
func (s *session) refuseUnparsable(raw []byte, err error) error {
	s.srv.metrics.refuse(refusedUnparsable)
	reason := "the message cannot be read"
	if errors.Is(err, archive.ErrNotMessage) {
		reason = "not an email message"
	}
	sum := sha256.Sum256(raw)
	s.srv.logger.Warn("smtp message refused: answered 554", "source", s.source, "reason", reason,
		"size", len(raw), "sha256", hex.EncodeToString(sum[:]))
	return &smtp.SMTPError{Code: 554, EnhancedCode: smtp.EnhancedCode{5, 6, 0}, Message: "Refused by the archive: " + reason}
}

// archived counts the outcome and is the 250 reply.
func (s *session) archived(job *commitJob, results []archive.Result, size int) error {
	ids := make([]string, len(results))
	for i, r := range results {
		ids[i] = fmt.Sprintf("%s/%d", job.batch[i].In.Tenant, r.ID)
		switch {
		case r.Discarded:
			s.srv.metrics.discarded.Inc()
			ids[i] = job.batch[i].In.Tenant + " (spam, discarded by SPAM_POLICY)"
		case r.Duplicate:
			s.srv.metrics.duplicates.Inc()
			ids[i] += " (already archived)"
		default:
			s.srv.metrics.stored.Inc()
		}
	}
	s.srv.logger.Debug("smtp message archived", "source", s.source, "size", size, "ids", ids)
	return &smtp.SMTPError{Code: 250, EnhancedCode: smtp.EnhancedCode{2, 0, 0}, Message: "Archived " + strings.Join(ids, ", ")}
}
