package extract

import (
	"bytes"
	"mime"
	"path"
	"strings"
)

// hintOf is the kind an attachment's declared content type or file name suggests, or "".
// The content type wins when both suggest one.
func hintOf(contentType, name string) string {
	if mt, _, err := mime.ParseMediaType(contentType); err == nil {
		if k := hintTypes[strings.ToLower(mt)]; k != "" {
			return k
		}
	}
	return hintExtensions[strings.ToLower(strings.TrimPrefix(path.Ext(name), "."))]
}

var hintTypes = map[string]string{
	"application/pdf": KindPDF,
	"application/vnd.openxmlformats-officedocument.wordprocessingml.document":   KindDOCX,
	"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet":         KindXLSX,
	"application/vnd.openxmlformats-officedocument.presentationml.presentation": KindPPTX,
	"application/vnd.oasis.opendocument.text":                                   KindODT,
	"application/vnd.oasis.opendocument.spreadsheet":                            KindODS,
	"application/vnd.oasis.opendocument.presentation":                           KindODP,
	"application/rtf": KindRTF,
	"text/rtf":        KindRTF,
}

var hintExtensions = map[string]string{
	"pdf": KindPDF, "docx": KindDOCX, "docm": KindDOCX, "dotx": KindDOCX,
	"xlsx": KindXLSX, "xlsm": KindXLSX, "xltx": KindXLSX,
	"pptx": KindPPTX, "pptm": KindPPTX, "ppsx": KindPPTX, "potx": KindPPTX,
	"odt": KindODT, "ott": KindODT, "ods": KindODS, "ots": KindODS, "odp": KindODP, "otp": KindODP,
	"rtf": KindRTF,
}

// sniff returns the kind of data by its content (rule 1), or "" for no document.
func sniff(data []byte, hint string) string {
	head := data[:min(len(data), 1024)]
	switch {
	case bytes.Contains(head, []byte("%PDF-")):
		return KindPDF
	case isRTF(data):
		return KindRTF
	case bytes.HasPrefix(data, []byte("PK\x03\x04")):
		return sniffZip(data, hint)
	case bytes.HasPrefix(data, []byte("\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1")) && isOOXML(hint):
		// A password-protected Word, Excel or PowerPoint file is an OLE compound file
		// holding the encrypted zip: the hint names its kind, its text cannot be read.
		return hint
	}
	return ""
}

// isRTF reports whether data opens with {\rtf, after a byte order mark or white space.
func isRTF(data []byte) bool {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	data = bytes.TrimLeft(data[:min(len(data), 64)], " \t\r\n")
	return bytes.HasPrefix(data, []byte(`{\rtf`))
}

func isOOXML(kind string) bool {
	return kind == KindDOCX || kind == KindXLSX || kind == KindPPTX
}
