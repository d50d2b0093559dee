package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recorded is `go test -json ./...` of a module with a passing, a skipping and a failing
// test (one of whose subtests skips), and a package that does not build.
const recorded = `{"Action":"start","Package":"m"}
{"ImportPath":"m/b [m/b.test]","Action":"build-output","Output":"# m/b [m/b.test]\n"}
{"ImportPath":"m/b [m/b.test]","Action":"build-output","Output":"b/b_test.go:3:32: declared and not used: x\n"}
{"ImportPath":"m/b [m/b.test]","Action":"build-fail"}
{"Action":"start","Package":"m/b"}
{"Action":"output","Package":"m/b","Output":"FAIL\tm/b [build failed]\n"}
{"Action":"fail","Package":"m/b","Elapsed":0,"FailedBuild":"m/b [m/b.test]"}
{"Action":"run","Package":"m","Test":"TestPass"}
{"Action":"output","Package":"m","Test":"TestPass","Output":"=== RUN   TestPass\n"}
{"Action":"output","Package":"m","Test":"TestPass","Output":"--- PASS: TestPass (0.00s)\n"}
{"Action":"pass","Package":"m","Test":"TestPass","Elapsed":0}
{"Action":"run","Package":"m","Test":"TestSkip"}
{"Action":"output","Package":"m","Test":"TestSkip","Output":"=== RUN   TestSkip\n"}
{"Action":"output","Package":"m","Test":"TestSkip","Output":"    a_test.go:4: before\n"}
{"Action":"output","Package":"m","Test":"TestSkip","Output":"    a_test.go:4: SKIP: TEST_POSTGRES_URL is not set\n"}
{"Action":"output","Package":"m","Test":"TestSkip","Output":"--- SKIP: TestSkip (0.00s)\n"}
{"Action":"skip","Package":"m","Test":"TestSkip","Elapsed":0}
{"Action":"run","Package":"m","Test":"TestSub"}
{"Action":"output","Package":"m","Test":"TestSub","Output":"=== RUN   TestSub\n"}
{"Action":"run","Package":"m","Test":"TestSub/a"}
{"Action":"output","Package":"m","Test":"TestSub/a","Output":"=== RUN   TestSub/a\n"}
{"Action":"output","Package":"m","Test":"TestSub/a","Output":"--- SKIP: TestSub/a (0.00s)\n"}
{"Action":"skip","Package":"m","Test":"TestSub/a","Elapsed":0}
{"Action":"run","Package":"m","Test":"TestSub/b"}
{"Action":"output","Package":"m","Test":"TestSub/b","Output":"=== RUN   TestSub/b\n"}
{"Action":"output","Package":"m","Test":"TestSub/b","Output":"    a_test.go:7: boom\n"}
{"Action":"output","Package":"m","Test":"TestSub/b","Output":"        second line\n"}
{"Action":"output","Package":"m","Test":"TestSub/b","Output":"--- FAIL: TestSub/b (0.00s)\n"}
{"Action":"fail","Package":"m","Test":"TestSub/b","Elapsed":0}
{"Action":"output","Package":"m","Test":"TestSub","Output":"--- FAIL: TestSub (0.00s)\n"}
{"Action":"fail","Package":"m","Test":"TestSub","Elapsed":0}
{"Action":"output","Package":"m","Output":"FAIL\n"}
{"Action":"output","Package":"m","Output":"FAIL\tm\t0.038s\n"}
{"Action":"fail","Package":"m","Elapsed":0.039}
`

func TestSummarizeCountsTestsAndSubtests(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	counts, skips, err := Summarize(strings.NewReader(recorded), &out)
	require.NoError(t, err)
	// TestSub and TestSub/b failed, and m/b failed to build outside any test.
	assert.Equal(t, Counts{Passed: 1, Failed: 3, Skipped: 2}, counts)
	assert.Equal(t, []Skip{
		{Name: "m TestSkip", Reason: "a_test.go:4: SKIP: TEST_POSTGRES_URL is not set"},
		{Name: "m TestSub/a", Reason: ""},
	}, skips)
}

func TestSummarizePrintsFailuresAndBuildErrors(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	_, _, err := Summarize(strings.NewReader(recorded), &out)
	require.NoError(t, err)
	got := out.String()
	for _, want := range []string{
		"b/b_test.go:3:32: declared and not used: x\n", "FAIL\tm/b [build failed]\n",
		"    a_test.go:7: boom\n        second line\n--- FAIL: TestSub/b", "--- FAIL: TestSub (0.00s)\n",
		"FAIL\tm\t0.038s\n",
	} {
		assert.Contains(t, got, want)
	}
	assert.NotContains(t, got, "TestPass", "a passing test's output is not printed")
	assert.NotContains(t, got, "before", "a skipped test's output is not printed")
}

// TestSummarizePrintsTestsThatNeverEnded: a test binary that dies (a timeout, a panic
// the test runner could not attribute) leaves tests without an end; their output is
// printed when the package fails, and the package counts as one failure.
func TestSummarizePrintsTestsThatNeverEnded(t *testing.T) {
	t.Parallel()
	const died = `{"Action":"run","Package":"m","Test":"TestSlow"}
{"Action":"output","Package":"m","Test":"TestSlow","Output":"=== RUN   TestSlow\n"}
{"Action":"output","Package":"m","Test":"TestSlow","Output":"    slow_test.go:9: waiting for the database\n"}
{"Action":"output","Package":"m","Output":"panic: test timed out after 1s\n"}
{"Action":"output","Package":"m","Output":"FAIL\tm\t1.005s\n"}
{"Action":"fail","Package":"m","Elapsed":1.005}
`
	var out bytes.Buffer
	counts, _, err := Summarize(strings.NewReader(died), &out)
	require.NoError(t, err)
	assert.Equal(t, Counts{Failed: 1}, counts)
	assert.Contains(t, out.String(), "panic: test timed out after 1s\n")
	assert.Contains(t, out.String(), "    slow_test.go:9: waiting for the database\n")
}

func TestSummarizeCopiesLinesThatAreNotJSON(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	counts, _, err := Summarize(strings.NewReader("go: no packages to test\n{broken\n"), &out)
	require.NoError(t, err)
	assert.Equal(t, "go: no packages to test\n{broken\n", out.String())
	assert.Equal(t, Counts{}, counts)
}

// TestRunEndsWithTheCountsLine runs go test on two small modules: the closing line is the
// last one, the skipped tests come before it with their reasons, and the exit code is 1
// when a test fails or a package does not build.
func TestRunEndsWithTheCountsLine(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP: builds test binaries; not with -short")
	}
	cases := []struct {
		name     string
		files    map[string]string
		wantLast string
		wantCode int
		want     []string
	}{
		{"passing", map[string]string{"a_test.go": passingTests}, "1 passed, 0 failed, 2 skipped", 0,
			[]string{"skipped (2):\n  m TestSkip: a_test.go:5: SKIP: TEST_X is not set\n  m TestSub/a: a_test.go:7: sub 1\n"}},
		{"failing", map[string]string{"a_test.go": passingTests, "b/b_test.go": failingTest, "c/c_test.go": brokenBuild},
			"1 passed, 2 failed, 2 skipped", 1,
			[]string{"b_test.go:5: want 2; got 1", "declared and not used"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.files["go.mod"] = "module m\n\ngo 1.26\n"
			for name, text := range c.files {
				require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
			}
			var stdout, stderr bytes.Buffer
			t.Chdir(dir)
			code := run([]string{"./..."}, "", &stdout, &stderr)
			lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
			assert.Equal(t, c.wantLast, lines[len(lines)-1], "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
			assert.Equal(t, c.wantCode, code)
			for _, want := range c.want {
				assert.Contains(t, stdout.String(), want)
			}
		})
	}
}

const passingTests = `package m

import "testing"

func TestSkip(t *testing.T) { t.Skip("SKIP: TEST_X is not set") }
func TestSub(t *testing.T) {
	t.Run("a", func(t *testing.T) { t.Skipf("sub %d", 1) })
}
`

const failingTest = `package b

import "testing"

func TestAdd(t *testing.T) { t.Errorf("want 2; got %d", 1) }
`

const brokenBuild = `package c

import "testing"

func TestBroken(t *testing.T) { x := 1 }
`
