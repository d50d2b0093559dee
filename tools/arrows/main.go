// Command arrows checks the module's import graph against the table of allowed arrows in
// docs/architecture.md ("Import arrows"): every package of the module has a row, every
// import of another package of the module is one its row allows, and every row names a
// package that exists. `make lint` runs it; it prints each violation and exits 1.
//
// Only the imports of a package's own (non-test) files count: tests may reach further
// (a handlers test opening a database), the code they test may not.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
)

func main() {
	doc := "docs/architecture.md"
	if len(os.Args) > 1 {
		doc = os.Args[1]
	}
	problems, err := run(doc)
	if err != nil {
		fmt.Fprintln(os.Stderr, "arrows:", err)
		os.Exit(2)
	}
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, "arrows:", p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(os.Stderr, "arrows: %d import(s) the table in %s does not allow\n", len(problems), doc)
		os.Exit(1)
	}
}

func run(doc string) ([]string, error) {
	f, err := os.Open(doc)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rules, err := parseTable(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", doc, err)
	}
	module, pkgs, err := listPackages()
	if err != nil {
		return nil, err
	}
	return check(module, pkgs, rules), nil
}

// pkg is one package of the module with its imports, as `go list` gives them.
type pkg struct {
	ImportPath string
	Imports    []string
}

// listPackages runs `go list` over the module.
func listPackages() (string, []pkg, error) {
	out, err := exec.Command("go", "list", "-m").Output()
	if err != nil {
		return "", nil, fmt.Errorf("go list -m: %w", err)
	}
	module := strings.TrimSpace(string(out))
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports", "./...")
	cmd.Stderr = os.Stderr
	out, err = cmd.Output()
	if err != nil {
		return "", nil, fmt.Errorf("go list: %w", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return "", nil, err
		}
		pkgs = append(pkgs, p)
	}
	return module, pkgs, nil
}

// rule is one row of the table: the packages it is about (a path relative to the module,
// or a pattern ending in /... for a subtree) and what they may import.
type rule struct {
	pattern string
	allowed []string // paths and patterns; empty: nothing of the module
	line    int
}

// parseTable reads the rows of the first Markdown table after the heading "## Import
// arrows": | `pattern` | `a`, `b/...` | why |, "—" for nothing.
func parseTable(r io.Reader) ([]rule, error) {
	sc := bufio.NewScanner(r)
	var rules []rule
	in, seenHeader := false, false
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "## "):
			if in && len(rules) > 0 {
				return rules, nil
			}
			in = line == "## Import arrows"
			continue
		case !in || !strings.HasPrefix(line, "|"):
			if in && len(rules) > 0 {
				return rules, nil
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if !seenHeader || strings.Trim(cells[0], " -:") == "" { // the header and its rule line
			seenHeader = true
			continue
		}
		if len(cells) < 2 {
			return nil, fmt.Errorf("line %d: a row needs a package and what it may import", n)
		}
		pattern := strings.Trim(strings.TrimSpace(cells[0]), "`")
		rules = append(rules, rule{pattern: pattern, allowed: codeSpans(cells[1]), line: n})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(rules) == 0 {
		return nil, errors.New(`no table after "## Import arrows"`)
	}
	return rules, nil
}

// codeSpans returns the `code` spans of a cell.
func codeSpans(cell string) []string {
	var out []string
	parts := strings.Split(cell, "`")
	for i := 1; i < len(parts); i += 2 {
		out = append(out, parts[i])
	}
	return out
}

// matches says whether path (relative to the module) is pattern or, for a pattern ending
// in /..., in its subtree.
func matches(pattern, path string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return path == base || strings.HasPrefix(path, base+"/")
	}
	return pattern == path
}

// ruleFor is the row of path: the exact one, else the longest pattern that covers it.
func ruleFor(rules []rule, path string) (rule, bool) {
	best, found := rule{}, false
	for _, r := range rules {
		switch {
		case r.pattern == path:
			return r, true
		case matches(r.pattern, path) && (!found || len(r.pattern) > len(best.pattern)):
			best, found = r, true
		}
	}
	return best, found
}

// check returns every violation: a package without a row, an import its row does not
// allow, a row that covers no package.
func check(module string, pkgs []pkg, rules []rule) []string {
	var problems []string
	used := map[int]bool{}
	for _, p := range pkgs {
		path, ok := relative(module, p.ImportPath)
		if !ok {
			continue
		}
		r, ok := ruleFor(rules, path)
		if !ok {
			problems = append(problems, fmt.Sprintf("%s has no row in the table", path))
			continue
		}
		used[r.line] = true
		for _, imp := range p.Imports {
			target, internal := relative(module, imp)
			if !internal || target == path {
				continue
			}
			if !slices.ContainsFunc(r.allowed, func(a string) bool { return matches(a, target) }) {
				problems = append(problems, fmt.Sprintf("%s imports %s: its row (line %d) does not allow it", path, target, r.line))
			}
		}
	}
	for _, r := range rules {
		if !used[r.line] {
			problems = append(problems, fmt.Sprintf("the row of %s (line %d) covers no package", r.pattern, r.line))
		}
	}
	return problems
}

// relative is path inside module ("." for the module's root package).
func relative(module, path string) (string, bool) {
	if path == module {
		return ".", true
	}
	rest, ok := strings.CutPrefix(path, module+"/")
	return rest, ok
}
