package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json), with the build events that
// go test adds (Action "build-output" and "build-fail", keyed by ImportPath).
type event struct {
	Action      string
	Package     string
	Test        string
	Output      string
	ImportPath  string
	FailedBuild string
}

// Counts are the tests that ended in each way. Failed also counts each package that
// failed outside any test (a build error, a panic in TestMain, a timeout), so that Failed
// is zero exactly when everything passed.
type Counts struct {
	Passed, Failed, Skipped int
}

// Line is the closing line of `make test`: "N passed, N failed, N skipped".
func (c Counts) Line() string {
	return fmt.Sprintf("%d passed, %d failed, %d skipped", c.Passed, c.Failed, c.Skipped)
}

// Skip is a test that skipped, with the line that says why.
type Skip struct {
	Name, Reason string
}

// summary reads the events and keeps what the closing lines need.
type summary struct {
	out    io.Writer
	counts Counts
	skips  []Skip
	// output holds each running test's lines until it ends: they are printed if it fails.
	output map[string][]string
	// failedTests is how many tests of each package failed.
	failedTests map[string]int
}

// Summarize reads `go test -json` output from r and writes to w what plain `go test`
// prints (each package's ok or FAIL line, build errors, the whole output of every failed
// test), then the skipped tests with their reasons, and returns the counts. Lines of r
// that are not JSON are copied to w as they are.
func Summarize(r io.Reader, w io.Writer) (Counts, []Skip, error) {
	s := &summary{out: w, output: map[string][]string{}, failedTests: map[string]int{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		var ev event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil {
			fmt.Fprintf(w, "%s\n", line)
			continue
		}
		s.handle(ev)
	}
	if err := sc.Err(); err != nil {
		return s.counts, s.skips, fmt.Errorf("reading go test -json output: %w", err)
	}
	return s.counts, s.skips, nil
}

func (s *summary) handle(ev event) {
	switch {
	case ev.Action == "build-output":
		fmt.Fprint(s.out, ev.Output)
	case ev.Test == "":
		s.packageEvent(ev)
	default:
		s.testEvent(ev)
	}
}

// packageEvent prints the package's own lines (ok, FAIL, output outside any test) and
// counts a failed package that no failed test explains.
func (s *summary) packageEvent(ev event) {
	switch ev.Action {
	case "output":
		if ev.Output != "PASS\n" && ev.Output != "FAIL\n" {
			fmt.Fprint(s.out, ev.Output)
		}
	case "fail":
		if s.failedTests[ev.Package] == 0 {
			s.counts.Failed++
		}
		s.printUnfinished(ev.Package)
	}
}

// printUnfinished prints the output of the package's tests that never ended (a panic or
// a timeout stopped the test binary): it is where the cause shows.
func (s *summary) printUnfinished(pkg string) {
	var keys []string
	for key := range s.output {
		if strings.HasPrefix(key, pkg+" ") {
			keys = append(keys, key)
		}
	}
	sort.Strings(keys)
	for _, key := range keys {
		fmt.Fprint(s.out, strings.Join(s.output[key], ""))
		delete(s.output, key)
	}
}

// testEvent buffers a test's output and, when it ends, counts it; a failed test's
// output is printed.
func (s *summary) testEvent(ev event) {
	key := ev.Package + " " + ev.Test
	switch ev.Action {
	case "output":
		s.output[key] = append(s.output[key], ev.Output)
		return
	case "pass":
		s.counts.Passed++
	case "skip":
		s.counts.Skipped++
		s.skips = append(s.skips, Skip{Name: ev.Package + " " + ev.Test, Reason: skipReason(s.output[key])})
	case "fail":
		s.counts.Failed++
		s.failedTests[ev.Package]++
		fmt.Fprint(s.out, strings.Join(s.output[key], ""))
	default:
		return
	}
	delete(s.output, key)
}

// logLine is the first line of a t.Log, t.Skip or t.Error entry: "    file_test.go:12: text".
var logLine = regexp.MustCompile(`^\s+\S+\.go:\d+: `)

// skipReason is the first line of the test's last log entry, which for a skipped test is
// the message given to t.Skip ("" when it gave none).
func skipReason(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		if logLine.MatchString(lines[i]) {
			return strings.TrimSpace(lines[i])
		}
	}
	return ""
}

// WriteSkips lists the skipped tests, one a line, under a heading.
func WriteSkips(w io.Writer, skips []Skip) {
	if len(skips) == 0 {
		return
	}
	fmt.Fprintf(w, "skipped (%d):\n", len(skips))
	for _, sk := range skips {
		if sk.Reason == "" {
			fmt.Fprintf(w, "  %s\n", sk.Name)
			continue
		}
		fmt.Fprintf(w, "  %s: %s\n", sk.Name, sk.Reason)
	}
}
