package extract

import (
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/korean"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/traditionalchinese"
	"golang.org/x/text/encoding/unicode"
)

// rtfCodePages are the Windows code pages RTF names (\ansicpgN, or through a font's
// \fcharsetN) that golang.org/x/text can decode. Any other is read as windows-1252.
var rtfCodePages = map[int]encoding.Encoding{
	437: charmap.CodePage437, 850: charmap.CodePage850, 852: charmap.CodePage852,
	855: charmap.CodePage855, 858: charmap.CodePage858, 860: charmap.CodePage860,
	862: charmap.CodePage862, 863: charmap.CodePage863, 865: charmap.CodePage865,
	866: charmap.CodePage866, 874: charmap.Windows874,
	932: japanese.ShiftJIS, 936: simplifiedchinese.GBK, 949: korean.EUCKR, 950: traditionalchinese.Big5,
	1250: charmap.Windows1250, 1251: charmap.Windows1251, 1252: charmap.Windows1252,
	1253: charmap.Windows1253, 1254: charmap.Windows1254, 1255: charmap.Windows1255,
	1256: charmap.Windows1256, 1257: charmap.Windows1257, 1258: charmap.Windows1258,
	10000: charmap.Macintosh, 10007: charmap.MacintoshCyrillic,
	20866: charmap.KOI8R, 21866: charmap.KOI8U,
	28591: charmap.ISO8859_1, 28592: charmap.ISO8859_2, 28595: charmap.ISO8859_5,
	65001: unicode.UTF8,
}

// rtfCharsets maps a font's \fcharsetN to its code page (0 for "the document's").
var rtfCharsets = map[int]int{
	0: 1252, 1: 0, 2: 0, 77: 10000, 128: 932, 129: 949, 134: 936, 136: 950,
	161: 1253, 162: 1254, 163: 1258, 177: 1255, 178: 1256, 186: 1257,
	204: 1251, 222: 874, 238: 1250, 254: 437, 255: 850,
}

// rtfEncoding returns the encoding of a code page, windows-1252 when it is unknown.
func rtfEncoding(cp int) encoding.Encoding {
	if e, ok := rtfCodePages[cp]; ok {
		return e
	}
	return charmap.Windows1252
}

// rtfSkipped are the destinations whose content is never text a reader sees: tables
// of fonts, colours, styles and lists, document properties, pictures and embedded
// objects' data, field instructions, bookmarks, index and table-of-contents entries,
// and the numbering templates of lists.
var rtfSkipped = map[string]bool{
	"colortbl": true, "stylesheet": true, "info": true, "pict": true,
	"objdata": true, "objclass": true, "objname": true, "themedata": true, "colorschememapping": true,
	"datastore": true, "latentstyles": true, "listtable": true, "listoverridetable": true,
	"rsidtbl": true, "generator": true, "xmlnstbl": true, "filetbl": true, "revtbl": true,
	"userprops": true, "fldinst": true, "bkmkstart": true, "bkmkend": true, "xe": true,
	"tc": true, "txe": true, "pntxta": true, "pntxtb": true, "pgdsctbl": true, "private": true,
	"mmathPr": true, "wgrffmtfilter": true, "defchp": true, "defpap": true, "protusertbl": true,
	"docvar": true, "nonshppict": true, "blipuid": true, "shpinst": true, "sp": true, "sn": true, "sv": true,
	"template": true, "listpicture": true, "fchars": true, "lchars": true, "ftnsep": true,
	"ftnsepc": true, "aftnsep": true, "aftnsepc": true, "panose": true, "falt": true,
}

// rtfSymbols are the control words that stand for a character or a separator.
var rtfSymbols = map[string]string{
	"par": "\n", "line": "\n", "sect": "\n", "page": "\n", "row": "\n", "softline": "\n",
	"cell": "\t", "nestcell": "\t", "tab": "\t",
	"emdash": "\u2014", "endash": "\u2013", "bullet": "\u2022", "lquote": "\u2018",
	"rquote": "\u2019", "ldblquote": "\u201c", "rdblquote": "\u201d",
	"emspace": " ", "enspace": " ", "qmspace": " ",
}
