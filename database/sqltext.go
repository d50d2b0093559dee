package database

import "strings"

// InList returns "?, ?, …" with n placeholders, for an IN (…) list.
func InList(n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat("?, ", n-1) + "?"
}

// Placeholders returns "(?, …), (?, …)…": rows groups of cols placeholders, for a
// multi-row VALUES list.
func Placeholders(rows, cols int) string {
	return Rows(rows, "("+InList(cols)+")")
}

// Rows returns rows copies of the row template, comma-separated: a multi-row VALUES list
// whose rows are expressions rather than bare placeholders.
func Rows(rows int, row string) string {
	if rows <= 0 {
		return ""
	}
	return strings.Repeat(row+", ", rows-1) + row
}

// IsUniqueViolation recognises a duplicate-key error of any of the three drivers.
func IsUniqueViolation(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	for _, s := range []string{"UNIQUE constraint failed", "SQLSTATE 23505", "Error 1062", "Duplicate entry"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
