package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets the test binary act as the strata binary: with
// STRATA_TEST_MAIN=1 it runs main() with its arguments, so tests can start a
// real process and send it real signals. testscript.Main does the same for
// the scripts under testdata/script: it puts a copy of this binary named
// strata on their PATH and runs main() when invoked under that name;
// otherwise it runs the tests.
func TestMain(m *testing.M) {
	if os.Getenv("STRATA_TEST_MAIN") == "1" {
		main()
		return
	}
	testscript.Main(m, map[string]func(){"strata": main})
}

// startServe starts `strata serve` as a subprocess on a free port and returns
// its base URL once it is accepting connections.
func startServe(t *testing.T, args []string, extraEnv ...string) (*exec.Cmd, string, *lockedBuffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), append([]string{"STRATA_TEST_MAIN=1", "STRATA_DATA_DIR=" + t.TempDir()}, extraEnv...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	lineCh := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		lineCh <- line
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case line := <-lineCh:
		m := regexp.MustCompile(`serving on (http://\S+)`).FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("unexpected first line %q; stderr:\n%s", line, stderr.String())
		}
		return cmd, m[1], stderr
	case <-time.After(30 * time.Second):
		t.Fatalf("server did not start; stderr:\n%s", stderr.String())
	}
	return nil, "", nil
}

func TestServeAnswersAndStopsOnSIGTERM(t *testing.T) {
	t.Parallel()
	cmd, base, stderr := startServe(t, []string{"--log-format", "json"})

	resp, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("readyz: %d", resp.StatusCode)
	}

	// An in-flight request: its handler is reading the body when SIGTERM
	// arrives. "Expect: 100-continue" makes the server say when the handler
	// starts reading, so the test knows the request is in flight.
	addr := strings.TrimPrefix(base, "http://")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /api/auth/v1/token?grant_type=password HTTP/1.1\r\nHost: %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: 41\r\nExpect: 100-continue\r\n\r\n", addr)
	reader := bufio.NewReader(conn)
	status, err := reader.ReadString('\n')
	if err != nil || !strings.Contains(status, "100 Continue") {
		t.Fatalf("want 100 Continue, got %q, %v", status, err)
	}
	if _, err := reader.ReadString('\n'); err != nil { // blank line after the interim response
		t.Fatal(err)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Shutdown has begun once the listener refuses new connections.
	deadline := time.Now().Add(10 * time.Second)
	for {
		probe, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			break
		}
		probe.Close()
		if time.Now().After(deadline) {
			t.Fatal("listener still accepting 10 s after SIGTERM")
		}
		time.Sleep(10 * time.Millisecond) // polling interval, not synchronisation
	}
	// The in-flight request still completes with a real answer.
	if _, err := io.WriteString(conn, `{"email":"a@example.com","password":"xy"}`); err != nil {
		t.Fatal(err)
	}
	resp, err = http.ReadResponse(reader, nil)
	if err != nil {
		t.Fatalf("in-flight request got no response: %v; log:\n%s", err, stderr.String())
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode >= 500 {
		t.Fatalf("in-flight request got %d: %s", resp.StatusCode, body)
	}

	waitErr := make(chan error, 1)
	go func() { waitErr <- cmd.Wait() }()
	select {
	case err := <-waitErr:
		if err != nil {
			t.Fatalf("strata serve exited with %v; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("strata serve did not exit after SIGTERM")
	}
	if !strings.Contains(stderr.String(), `"msg":"stopped"`) {
		t.Fatalf("no clean stop in the log:\n%s", stderr.String())
	}
}

func TestEnvironmentSetsFlagsAndFlagsWin(t *testing.T) {
	t.Parallel()
	_, _, fromEnv := startServe(t, nil, "STRATA_LOG_FORMAT=json")
	_, _, flagWins := startServe(t, []string{"--log-format", "text"}, "STRATA_LOG_FORMAT=json")
	waitFor(t, fromEnv, `"msg":"strata listening"`)
	waitFor(t, flagWins, `msg="strata listening"`)
}

// waitFor polls the log until it contains want, with a deadline.
func waitFor(t *testing.T, log *lockedBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(log.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("log never contained %s:\n%s", want, log.String())
		}
		time.Sleep(10 * time.Millisecond) // polling interval
	}
}

// lockedBuffer is a bytes.Buffer safe for the writer goroutine of os/exec
// and the reading test.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	for name, args := range map[string][]string{
		"unknown flag":       {"serve", "--no-such-flag"},
		"bad log format":     {"serve", "--log-format", "xml", "--data-dir", t.TempDir()},
		"unknown subcommand": {"frobnicate"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(args, &stdout, &stderr)
		if code == exitOK {
			t.Errorf("%s: exit code 0", name)
		}
		if stderr.Len() == 0 {
			t.Errorf("%s: nothing on stderr", name)
		}
	}
	for _, args := range [][]string{{"serve", "--log-format", "xml"}, {"frobnicate"}, {"serve", "extra"}} {
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != exitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", args, code, exitUsage, stderr.String())
		}
	}
}

func TestServeFailsWhenAddressIsTaken(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	root := newRootCommand(&stdout, &stderr)
	root.SetArgs([]string{"serve", "--addr", ln.Addr().String(), "--data-dir", t.TempDir()})
	err = root.ExecuteContext(ctx)
	if err == nil || !strings.Contains(err.Error(), "listen") {
		t.Fatalf("err = %v, want a listen error", err)
	}
	var u usageError
	if errors.As(err, &u) {
		t.Fatal("a taken address is not a usage error")
	}
}
