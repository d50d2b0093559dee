package extract

import (
	"context"
	"encoding/xml"
	"io"
)

// readODF reads an OpenDocument text, spreadsheet or presentation: the body of its
// content.xml.
func readODF(ctx context.Context, r *run, data []byte) error {
	d, err := openZip(data)
	if err != nil {
		return err
	}
	return d.readParts(ctx, r, []string{"content.xml"}, func(rd io.Reader) error {
		return walkXML(ctx, r, rd, &odfHandler{out: r.out})
	})
}

// odfHandler writes the text of an OpenDocument body (office:body): all character data
// of its paragraphs; text:s as a space (runs of white space are one separator), text:tab as a tab, text:line-break as a line; a
// line after each paragraph, heading, list item (a space inside a table cell), row,
// frame and page, a tab after each cell. Tracked deletions, note marks, embedded binary data and forms are hidden.
type odfHandler struct {
	out    *textOut
	inBody int // depth inside office:body
	inCell int // depth of table cells: a paragraph in a cell ends with a space
}

func (h *odfHandler) start(e xml.StartElement) (bool, error) {
	l := e.Name.Local
	if h.inBody == 0 {
		if l == "body" {
			h.inBody = 1
		}
		return false, nil
	}
	h.inBody++
	switch l {
	case "tracked-changes", "note-citation", "binary-data", "forms", "sequence-decls",
		"variable-decls", "user-field-decls", "dde-connection-decls", "scripts", "event-listeners":
		h.inBody--
		return true, nil
	case "s":
		h.out.sep(' ')
	case "tab":
		h.out.sep('\t')
	case "table-cell", "covered-table-cell":
		h.inCell++
	case "line-break":
		h.out.sep('\n')
	}
	return false, nil
}

func (h *odfHandler) end(l string) error {
	if h.inBody == 0 {
		return nil
	}
	h.inBody--
	switch l {
	case "p", "h", "list-item":
		h.out.sep(cellOr(h.inCell, '\n'))
	case "table-row", "frame", "page", "table":
		h.out.sep('\n')
	case "table-cell", "covered-table-cell":
		h.inCell = max(0, h.inCell-1)
		h.out.sep('\t')
	}
	return nil
}

func (h *odfHandler) chars(b []byte) error {
	if h.inBody == 0 {
		return nil
	}
	return h.out.text(string(b))
}

// cellOr is the separator after a paragraph: sep, or a space inside a table cell (the
// cell's end owes a tab).
func cellOr(inCell int, sep byte) byte {
	if inCell > 0 {
		return ' '
	}
	return sep
}
