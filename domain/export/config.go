package export

import (
	"fmt"
	"regexp"
	"strconv"
	"unicode/utf8"

	"github.com/mailledger/mailledger/domain"
)

// Config is the export configuration object (docs/api.md), as stored in config_json.
type Config struct {
	BatesPrefix         string  `json:"bates_prefix"`
	BatesStartNumber    int64   `json:"bates_start_number"`
	BatesDigits         int     `json:"bates_digits"`
	IncludeNatives      bool    `json:"include_natives"`
	IncludeText         bool    `json:"include_text"`
	IncludeAttachments  bool    `json:"include_attachments"`
	OrganizeByCustodian bool    `json:"organize_by_custodian"`
	LoadFileFormat      string  `json:"load_file_format"`
	DateFormat          string  `json:"date_format"`
	DatDelimiters       string  `json:"dat_delimiters"`
	EmailIDs            []int64 `json:"email_ids"`
	Workers             int     `json:"workers"`
}

// Request is a configuration as a client sends it: pointers tell an absent field (take
// the default) from a false or zero one.
type Request struct {
	BatesPrefix         *string `json:"bates_prefix"`
	BatesStartNumber    *int64  `json:"bates_start_number"`
	BatesDigits         *int    `json:"bates_digits"`
	IncludeNatives      *bool   `json:"include_natives"`
	IncludeText         *bool   `json:"include_text"`
	IncludeAttachments  *bool   `json:"include_attachments"`
	OrganizeByCustodian *bool   `json:"organize_by_custodian"`
	LoadFileFormat      *string `json:"load_file_format"`
	DateFormat          *string `json:"date_format"`
	DatDelimiters       *string `json:"dat_delimiters"`
	EmailIDs            []int64 `json:"email_ids"`
	Workers             *int    `json:"workers"`
}

// Limits of a configuration. MaxEmailID is 2^53-1, the largest integer that JSON readers
// and the ledger's canonical JSON (RFC 8785, IEEE-754 numbers) keep exactly: a larger id
// would be stored as another number.
const (
	MaxEmailID     = 1<<53 - 1
	MaxEmails      = 100000
	MaxWorkers     = 32
	DefaultWorkers = 4
	DefaultDigits  = 6
	MaxDigits      = 10
)

// Load file formats, date formats and DAT delimiter sets.
const (
	FormatCSV  = "csv"
	FormatDAT  = "dat"
	FormatBoth = "both"

	DateISO8601 = "iso8601"
	DateUS      = "us"
	DateEU      = "eu"

	DelimitersSpec        = "spec"
	DelimitersConcordance = "concordance"
)

var prefixPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$`)

// Normalize applies the defaults and checks every field (rule 1), reporting every problem
// at once. workerCap is EDISCOVERY_WORKERS: a larger workers value is lowered to it.
func (r Request) Normalize(workerCap int) (Config, error) {
	var v domain.ValidationError
	c := Config{BatesDigits: DefaultDigits, IncludeNatives: true, LoadFileFormat: FormatCSV,
		DateFormat: DateISO8601, DatDelimiters: DelimitersSpec, Workers: DefaultWorkers}
	if r.BatesPrefix == nil {
		v.Add("bates_prefix", "required: "+prefixRule)
	} else if problem := prefixProblem(*r.BatesPrefix); problem != "" {
		v.Add("bates_prefix", problem)
	} else {
		c.BatesPrefix = *r.BatesPrefix
	}
	setInt64(&c.BatesStartNumber, r.BatesStartNumber)
	if c.BatesStartNumber < 0 {
		v.Add("bates_start_number", "must be 0 (continue) or a positive number")
	}
	setInt(&c.BatesDigits, r.BatesDigits)
	if c.BatesDigits < 1 || c.BatesDigits > MaxDigits {
		v.Add("bates_digits", "must be 1 to "+strconv.Itoa(MaxDigits))
	}
	setBool(&c.IncludeNatives, r.IncludeNatives)
	setBool(&c.IncludeText, r.IncludeText)
	setBool(&c.IncludeAttachments, r.IncludeAttachments)
	setBool(&c.OrganizeByCustodian, r.OrganizeByCustodian)
	oneOf(&v, "load_file_format", &c.LoadFileFormat, r.LoadFileFormat, FormatCSV, FormatDAT, FormatBoth)
	oneOf(&v, "date_format", &c.DateFormat, r.DateFormat, DateISO8601, DateUS, DateEU)
	oneOf(&v, "dat_delimiters", &c.DatDelimiters, r.DatDelimiters, DelimitersSpec, DelimitersConcordance)
	c.EmailIDs = normalizeIDs(&v, r.EmailIDs)
	setInt(&c.Workers, r.Workers)
	if c.Workers < 1 || c.Workers > MaxWorkers {
		v.Add("workers", "must be 1 to 32")
	} else if workerCap > 0 && c.Workers > workerCap {
		c.Workers = workerCap
	}
	return c, v.Err()
}

// CheckPrefix reports what is wrong with a Bates prefix (rule 1) as a
// *domain.ValidationError of the field bates_prefix; nil when it is valid.
func CheckPrefix(p string) error {
	var v domain.ValidationError
	if problem := prefixProblem(p); problem != "" {
		v.Add("bates_prefix", problem)
	}
	return v.Err()
}

// prefixRule is what a Bates prefix must be.
const prefixRule = "1 to 32 of A-Z a-z 0-9 _ -, starting with a letter or digit"

// prefixProblem says what is wrong with the Bates prefix p, "" when nothing is.
func prefixProblem(p string) string {
	if prefixPattern.MatchString(p) {
		return ""
	}
	if p == "" {
		return "is empty; want " + prefixRule
	}
	if n := utf8.RuneCountInString(p); n > 32 {
		return fmt.Sprintf("is %d characters long; at most 32 are allowed", n)
	}
	for i, r := range p {
		ok := r < utf8.RuneSelf && (r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
		if i == 0 && !ok {
			return fmt.Sprintf("starts with %q; the first character must be a letter (A-Z, a-z) or a digit", r)
		}
		if !ok && r != '_' && r != '-' {
			return fmt.Sprintf("character %q at position %d is not allowed; use A-Z a-z 0-9 _ -", r, utf8.RuneCountInString(p[:i])+1)
		}
	}
	return "want " + prefixRule
}

func normalizeIDs(v *domain.ValidationError, ids []int64) []int64 {
	if len(ids) == 0 {
		v.Add("email_ids", "required: at least one email id")
		return nil
	}
	if len(ids) > MaxEmails {
		v.Add("email_ids", "at most 100000 email ids")
		return nil
	}
	seen := make(map[int64]bool, len(ids))
	out := make([]int64, 0, len(ids))
	for _, id := range ids {
		if id <= 0 || id > MaxEmailID {
			v.Add("email_ids", "ids are integers from 1 to 9007199254740991 (2^53-1)")
			return nil
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

func oneOf(v *domain.ValidationError, field string, dst *string, src *string, allowed ...string) {
	if src == nil {
		return
	}
	for _, a := range allowed {
		if *src == a {
			*dst = a
			return
		}
	}
	msg := "must be one of"
	for _, a := range allowed {
		msg += " " + a
	}
	v.Add(field, msg)
}

func setInt(dst *int, src *int) {
	if src != nil {
		*dst = *src
	}
}

func setInt64(dst *int64, src *int64) {
	if src != nil {
		*dst = *src
	}
}

func setBool(dst *bool, src *bool) {
	if src != nil {
		*dst = *src
	}
}
