package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"go/build"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mailledger/mailledger/bench/internal/benchenv"
)

// s3server is the S3 server of the run, and how to stop it (nothing to stop for one
// given with -endpoint).
type s3server struct {
	endpoint, accessKey, secretKey string
	prefix                         string // the run's bucket prefix: buckets never collide with an earlier run's
	pid                            int    // versitygw's process, when the run started it
	stop                           func()
}

// cpu is the server's CPU time so far, read from /proc (zero for a server the run did
// not start, or where /proc cannot be read).
func (s *s3server) cpu() benchenv.CPUTime {
	if s.pid <= 0 {
		return benchenv.CPUTime{}
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.pid))
	if err != nil {
		return benchenv.CPUTime{}
	}
	// the fields after the command name (which may hold spaces) start at state, field 3
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return benchenv.CPUTime{}
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	const tick = 10 * time.Millisecond // USER_HZ = 100 on Linux
	return benchenv.CPUTime{User: time.Duration(utime) * tick, Sys: time.Duration(stime) * tick}
}

// defaultVersitygw is versitygw on PATH, else under GOPATH/bin (where .ci/run installs it).
func defaultVersitygw() string {
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p
	}
	return filepath.Join(build.Default.GOPATH, "bin", "versitygw")
}

// s3Server returns the server of -endpoint, or starts versitygw on a free loopback port
// with fresh keys over a directory under work.
func s3Server(cfg *config, work string, out io.Writer) (*s3server, error) {
	prefix := "sb" + randomHex(4)
	if cfg.endpoint != "" {
		fmt.Fprintf(out, "S3 server: %s (given)\n\n", cfg.endpoint)
		return &s3server{endpoint: cfg.endpoint, accessKey: cfg.accessKey, secretKey: cfg.secretKey, prefix: prefix, stop: func() {}}, nil
	}
	if _, err := os.Stat(cfg.versitygw); err != nil {
		return nil, fmt.Errorf("no S3 server: -endpoint (TEST_S3_ENDPOINT) is empty and versitygw is not at %s: %w", cfg.versitygw, err)
	}
	srv := &s3server{accessKey: "bench" + randomHex(4), secretKey: randomHex(20), prefix: prefix}
	cmd, err := startVersitygw(cfg.versitygw, srv, work)
	if err != nil {
		return nil, err
	}
	srv.pid, srv.stop = cmd.Process.Pid, func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	fmt.Fprintf(out, "S3 server: versitygw (%s) posix over %s, at %s\n\n", cfg.versitygw, work, srv.endpoint)
	return srv, nil
}

func startVersitygw(bin string, srv *s3server, work string) (*exec.Cmd, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv.endpoint = ln.Addr().String()
	ln.Close()
	data := filepath.Join(work, "versitygw")
	if err := os.Mkdir(data, 0o700); err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(work, "versitygw.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--port", srv.endpoint, "posix", data)
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+srv.accessKey, "ROOT_SECRET_KEY="+srv.secretKey)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, err
	}
	log.Close()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if c, err := net.Dial("tcp", srv.endpoint); err == nil {
			c.Close()
			return cmd, nil
		}
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	return nil, errors.New("versitygw did not listen within 30 s")
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
