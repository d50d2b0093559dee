package app_test

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// loadFileHeader is docs/api.md's load-file column list, written out here rather than taken from
// the code under test.
var loadFileHeader = strings.Split("DOCID,BEGBATES,ENDBATES,BEGATTACH,ENDATTACH,PARENTID,ATTACHNUM,FROM,TO,CC,BCC,SUBJECT,"+
	"DATESENT,DATERECEIVED,HASATTACH,ATTACHCOUNT,ATTACHNAMES,ATTACHPATH,NATIVEPATH,TEXTPATH,CUSTODIAN,FILETYPE,FILEEXT,"+
	"FILESIZE,MD5HASH,SHA256HASH,MESSAGEID,INREPLYTO,REFERENCES,EMAILID", ",")

// readCSV checks the CSV properties of docs/api.md (UTF-8 byte-order mark, CRLF line ends, the
// exact header row) and parses the rest with encoding/csv, returning one map per row.
func readCSV(t *testing.T, data []byte) []map[string]string {
	t.Helper()
	require.True(t, bytes.HasPrefix(data, []byte("\xEF\xBB\xBF")), "CSV starts with a UTF-8 byte-order mark")
	body := data[3:]
	wantHeader := strings.Join(loadFileHeader, ",") + "\r\n"
	require.True(t, bytes.HasPrefix(body, []byte(wantHeader)), "CSV header row; got %q", firstLine(body))
	require.True(t, bytes.HasSuffix(body, []byte("\r\n")), "CSV ends with CRLF")
	require.NotContains(t, string(bytes.ReplaceAll(body, []byte("\r\n"), nil)), "\n", "every LF belongs to a CRLF")
	r := csv.NewReader(bytes.NewReader(body))
	r.FieldsPerRecord = len(loadFileHeader)
	records, err := r.ReadAll()
	require.NoError(t, err, "encoding/csv reads the load file")
	return toMaps(t, records)
}

func firstLine(b []byte) string {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	return string(line)
}

// datSet is a DAT delimiter set as docs/api.md names it.
type datSet struct{ field, qualifier, newline string }

var specDelimiters = datSet{field: "\u00FE", qualifier: "\u00B6", newline: "\u00AE"}

// readDAT reads a DAT load file as docs/api.md describes it: UTF-8 without a byte-order mark,
// CRLF line ends, every value between two qualifiers (a doubled qualifier inside stands
// for one), values separated by the field delimiter, and no line break inside a value
// (the newline replacement stands for one). The header row must be docs/api.md's.
func readDAT(t *testing.T, data []byte, d datSet) []map[string]string {
	t.Helper()
	text := string(data)
	require.False(t, strings.HasPrefix(text, "\uFEFF"), "DAT has no byte-order mark")
	require.True(t, strings.HasSuffix(text, "\r\n"), "DAT ends with CRLF")
	lines := strings.Split(strings.TrimSuffix(text, "\r\n"), "\r\n")
	var records [][]string
	for n, line := range lines {
		require.NotContains(t, line, "\n", "line %d holds a bare LF", n+1)
		require.NotContains(t, line, "\r", "line %d holds a bare CR", n+1)
		fields, err := splitDAT(line, d)
		require.NoError(t, err, "line %d", n+1)
		require.Len(t, fields, len(loadFileHeader), "fields of line %d", n+1)
		records = append(records, fields)
	}
	return toMaps(t, records)
}

func splitDAT(line string, d datSet) ([]string, error) {
	var out []string
	for {
		rest, ok := strings.CutPrefix(line, d.qualifier)
		if !ok {
			return nil, fmt.Errorf("value %d does not start with the qualifier: %q", len(out)+1, line)
		}
		var value strings.Builder
		for {
			i := strings.Index(rest, d.qualifier)
			if i < 0 {
				return nil, fmt.Errorf("value %d has no closing qualifier", len(out)+1)
			}
			value.WriteString(rest[:i])
			rest = rest[i+len(d.qualifier):]
			if !strings.HasPrefix(rest, d.qualifier) {
				break
			}
			value.WriteString(d.qualifier)
			rest = rest[len(d.qualifier):]
		}
		out = append(out, value.String())
		if rest == "" {
			return out, nil
		}
		if line, ok = strings.CutPrefix(rest, d.field); !ok {
			return nil, fmt.Errorf("value %d is not followed by the field delimiter: %q", len(out), rest)
		}
	}
}

// toMaps checks the header row and turns the other rows into column → value maps.
func toMaps(t *testing.T, records [][]string) []map[string]string {
	t.Helper()
	require.NotEmpty(t, records)
	require.Equal(t, loadFileHeader, records[0], "header row")
	out := make([]map[string]string, 0, len(records)-1)
	for _, rec := range records[1:] {
		m := make(map[string]string, len(rec))
		for i, v := range rec {
			m[loadFileHeader[i]] = v
		}
		out = append(out, m)
	}
	return out
}
