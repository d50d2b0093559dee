package production

import (
	"bufio"
	"crypto/md5"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"mime"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mailledger/mailledger/archive"
)

// LoadFileColumns are the columns of both load files, in order (docs/api.md).
var LoadFileColumns = []string{
	"DOCID", "BEGBATES", "ENDBATES", "BEGATTACH", "ENDATTACH", "PARENTID", "ATTACHNUM",
	"FROM", "TO", "CC", "BCC", "SUBJECT", "DATESENT", "DATERECEIVED", "HASATTACH",
	"ATTACHCOUNT", "ATTACHNAMES", "ATTACHPATH", "NATIVEPATH", "TEXTPATH", "CUSTODIAN",
	"FILETYPE", "FILEEXT", "FILESIZE", "MD5HASH", "SHA256HASH", "MESSAGEID", "INREPLYTO",
	"REFERENCES", "EMAILID",
}

// MultiValueSeparator joins the values of a multi-value field.
const MultiValueSeparator = "; "

// dateLayouts are the load files' date formats (docs/api.md), all in UTC.
var dateLayouts = map[string]string{
	"iso8601": "2006-01-02T15:04:05Z",
	"us":      "01/02/2006 15:04:05",
	"eu":      "02/01/2006 15:04:05",
}

// EmailFileType is the FILETYPE of an email row.
const EmailFileType = "message/rfc822"

// entry is one produced email, with the paths of its files relative to the job directory.
type entry struct {
	docID       string
	doc         *archive.Document
	nativePath  string
	textPath    string
	attachPaths []string // of the separated attachments, in sequence order
}

// rows returns the email's load-file row, then one row per separated attachment. An
// attachment's DOCID is the parent's with its three-digit sequence; it carries the
// family's range, custodian and dates, its own name, type, size and hashes, and the
// parent's DOCID and email id.
func (e entry) rows(cfg Config) [][]string {
	m := e.doc.Msg
	endAttach := e.docID
	if n := len(e.attachPaths); n > 0 {
		endAttach = attachmentID(e.docID, m.Attachments[n-1].Seq)
	}
	date := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format(dateLayouts[cfg.DateFormat])
	}
	names := make([]string, len(m.Attachments))
	for i, a := range m.Attachments {
		names[i] = a.Name
	}
	emailID := strconv.FormatInt(e.doc.EmailID, 10)
	out := [][]string{{
		e.docID, e.docID, e.docID, e.docID, endAttach, "", "",
		m.From, join(m.To), join(m.Cc), join(m.Bcc), m.Subject, date(m.Sent), date(e.doc.Arrived), yesNo(len(m.Attachments) > 0),
		strconv.Itoa(len(m.Attachments)), join(names), join(e.attachPaths), e.nativePath, e.textPath, m.From,
		EmailFileType, "eml", strconv.Itoa(len(e.doc.Raw)), hex.EncodeToString(e.doc.MD5[:]), hex.EncodeToString(e.doc.SHA256[:]),
		m.MessageID, m.InReplyTo, m.References, emailID,
	}}
	for i, p := range e.attachPaths {
		a := m.Attachments[i]
		id := attachmentID(e.docID, a.Seq)
		out = append(out, []string{
			id, id, id, e.docID, endAttach, e.docID, strconv.Itoa(a.Seq),
			"", "", "", "", "", date(m.Sent), date(e.doc.Arrived), "N",
			"0", a.Name, "", p, "", m.From,
			a.Type, strings.TrimPrefix(path.Ext(p), "."), strconv.Itoa(len(a.Content)), hex.EncodeToString(attachmentMD5(e.doc, i)), hex.EncodeToString(a.Digest[:]),
			"", "", "", emailID,
		})
	}
	return out
}

func attachmentID(docID string, seq int) string { return docID + "_" + threeDigits(seq) }

func threeDigits(n int) string {
	s := strconv.Itoa(n)
	return strings.Repeat("0", max(0, 3-len(s))) + s
}

// attachmentMD5 is the MD5 of attachment i of d, from the reading worker when it
// computed it.
func attachmentMD5(d *archive.Document, i int) []byte {
	if i < len(d.AttachmentMD5) {
		return d.AttachmentMD5[i][:]
	}
	sum := md5.Sum(d.Msg.Attachments[i].Content)
	return sum[:]
}

func join(list []string) string { return strings.Join(list, MultiValueSeparator) }

func yesNo(b bool) string {
	if b {
		return "Y"
	}
	return "N"
}

// extensions maps common MIME types to an extension, before the system's table is asked,
// so that the usual types get the same extension on every machine.
var extensions = map[string]string{
	"application/pdf": "pdf", "application/zip": "zip", "application/msword": "doc",
	"application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
	"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet":       "xlsx",
	"application/vnd.ms-excel": "xls", "application/octet-stream": "bin", "image/jpeg": "jpg",
	"image/png": "png", "image/gif": "gif", "text/plain": "txt", "text/html": "html",
	"text/calendar": "ics", "text/csv": "csv", "message/rfc822": "eml", "application/pgp-signature": "asc",
	"application/pkcs7-signature": "p7s",
}

// AttachmentExt picks an attachment file's extension: the one of its name, else one for
// its MIME type, else "bin"; always 1 to 10 characters of a-z and 0-9.
func AttachmentExt(name, mimeType string) string {
	if ext := cleanExt(path.Ext(strings.ReplaceAll(name, "\\", "/"))); ext != "" {
		return ext
	}
	mimeType = strings.ToLower(strings.TrimSpace(mimeType))
	if ext, ok := extensions[mimeType]; ok {
		return ext
	}
	if exts, err := mime.ExtensionsByType(mimeType); err == nil && len(exts) > 0 {
		if ext := cleanExt(exts[0]); ext != "" {
			return ext
		}
	}
	return "bin"
}

func cleanExt(ext string) string {
	ext = strings.ToLower(strings.TrimPrefix(ext, "."))
	if len(ext) == 0 || len(ext) > 10 {
		return ""
	}
	for _, c := range ext {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return ""
		}
	}
	return ext
}

// loadWriter writes one load file and hashes what it writes.
type loadWriter struct {
	name  string
	file  *os.File
	sum   hash.Hash
	size  int64
	write func(row []string) error
	flush func() error
}

func openLoadWriter(dir *os.File, name string) (*loadWriter, io.Writer, error) {
	f, err := createFile(dir, name, 0o640)
	if err != nil {
		return nil, nil, err
	}
	w := &loadWriter{name: name, file: f, sum: sha256.New()}
	return w, io.MultiWriter(f, w.sum, sizeCounter{&w.size}), nil
}

// utf8BOM opens the CSV load file (docs/api.md: UTF-8 with a byte-order mark).
const utf8BOM = "\uFEFF"

// newCSVWriter writes RFC 4180 CSV with CRLF line ends after a byte-order mark, and the
// header row.
func newCSVWriter(dir *os.File, name string) (*loadWriter, error) {
	w, out, err := openLoadWriter(dir, name)
	if err != nil {
		return nil, err
	}
	buf := bufio.NewWriterSize(out, 64<<10)
	if _, err := buf.WriteString(utf8BOM); err != nil {
		return nil, errors.Join(err, w.file.Close())
	}
	cw := csv.NewWriter(buf)
	cw.UseCRLF = true
	w.write = func(row []string) error { return cw.Write(neutraliseFormulas(row)) }
	w.flush = func() error {
		cw.Flush()
		return errors.Join(cw.Error(), buf.Flush())
	}
	return w.withHeader()
}

// formulaStarts are the first characters that make a spreadsheet read a CSV cell as a
// formula (OWASP's CSV injection list: = + - @, tab and carriage return).
const formulaStarts = "=+-@\t\r"

// CSVTextMark is put before a CSV cell that starts with one of formulaStarts, or with the
// mark itself: a spreadsheet then shows the cell as text instead of running it, and a
// reader gets the exact value back by dropping one leading mark. The DAT load file is
// not changed.
const CSVTextMark = '\''

// neutraliseFormulas returns row with CSVTextMark before each cell that needs it; row
// itself is not changed (a copy is made only when a cell needs the mark).
func neutraliseFormulas(row []string) []string {
	out := row
	for i, v := range row {
		if v == "" || (v[0] != CSVTextMark && strings.IndexByte(formulaStarts, v[0]) < 0) {
			continue
		}
		if &out[0] == &row[0] {
			out = slices.Clone(row)
		}
		out[i] = string(CSVTextMark) + v
	}
	return out
}

// withHeader writes the header row; on failure the file is closed.
func (w *loadWriter) withHeader() (*loadWriter, error) {
	if err := w.write(LoadFileColumns); err != nil {
		return nil, errors.Join(err, w.file.Close())
	}
	return w, nil
}

// datDelimiters are a DAT load file's special characters.
type datDelimiters struct {
	field, qualifier, newline string
}

var (
	// specDAT is the default set (dat_delimiters "spec"): þ (U+00FE) between fields,
	// ¶ (U+00B6) around them, ® (U+00AE) for a line break inside a value.
	specDAT = datDelimiters{field: "\u00FE", qualifier: "\u00B6", newline: "\u00AE"}
	// concordanceDAT is the classic Concordance set: DC4 (0x14) between fields, þ around
	// them, ® for a line break.
	concordanceDAT = datDelimiters{field: "\x14", qualifier: "\u00FE", newline: "\u00AE"}
)

// newDATWriter writes a DAT load file in UTF-8 with CRLF line ends, and the header row.
// Every value is enclosed in the qualifier; a qualifier inside a value is doubled, and
// each line break inside a value (CRLF, LF or CR) becomes the newline replacement.
func newDATWriter(dir *os.File, name string, d datDelimiters) (*loadWriter, error) {
	w, out, err := openLoadWriter(dir, name)
	if err != nil {
		return nil, err
	}
	buf := bufio.NewWriterSize(out, 64<<10)
	escape := strings.NewReplacer("\r\n", d.newline, "\n", d.newline, "\r", d.newline, d.qualifier, d.qualifier+d.qualifier)
	w.write = func(row []string) error {
		for i, v := range row {
			if i > 0 {
				buf.WriteString(d.field)
			}
			buf.WriteString(d.qualifier)
			if _, err := escape.WriteString(buf, v); err != nil {
				return err
			}
			buf.WriteString(d.qualifier)
		}
		_, err := buf.WriteString("\r\n")
		return err
	}
	w.flush = buf.Flush
	return w.withHeader()
}

// close flushes and closes the file and returns the SHA-256 of its bytes, in hex.
// close finishes the file and returns its SHA-256.
func (w *loadWriter) close() ([32]byte, error) {
	err := errors.Join(w.flush(), w.file.Close())
	return [32]byte(w.sum.Sum(nil)), err
}

// sizeCounter counts the bytes written through it.
type sizeCounter struct{ n *int64 }

func (c sizeCounter) Write(b []byte) (int, error) {
	*c.n += int64(len(b))
	return len(b), nil
}
