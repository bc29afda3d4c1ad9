package host_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/stratahq/strata/plugins/host"
)

// exampleBin is the example connector, built once by TestMain.
var exampleBin string

func TestMain(m *testing.M) {
	if typ, ok := strings.CutPrefix(filepath.Base(os.Args[0]), host.FilePrefix); ok && servePlugin(typ) {
		return // ran as a plugin
	}
	if dir := os.Getenv("STRATA_TEST_HOST_HELPER"); dir != "" {
		runHostHelper(dir)
		return
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "strata-plugin-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	exampleBin = filepath.Join(tmp, host.FilePrefix+"example_numbers")
	build := exec.Command("go", "build", "-o", exampleBin, "github.com/stratahq/strata/plugins/examples/numbers")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build the example connector:", err)
		return 1
	}
	return m.Run()
}

// runHostHelper is a server in miniature for TestPluginDiesWithServer: it
// launches a plugin, prints its pid and waits to be killed.
func runHostHelper(dir string) {
	h := host.New(dir, nil, host.Options{})
	c, err := h.Launch(context.Background(), "faulty")
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println(c.PID())
	time.Sleep(time.Minute)
	os.Exit(1)
}

// newHost returns a Host over a fresh plugin directory holding the example
// and the given test plugins, and checks at the end of the test that no
// process of that directory is left.
func newHost(t *testing.T, opts host.Options, types ...string) (*host.Host, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink(exampleBin, filepath.Join(dir, host.FilePrefix+"example_numbers")); err != nil {
		t.Fatal(err)
	}
	if err := install(dir, types...); err != nil {
		t.Fatal(err)
	}
	h := host.New(dir, slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug})), opts)
	t.Cleanup(func() {
		h.Shutdown()
		if pids := processesIn(dir); len(pids) > 0 {
			t.Errorf("plugin processes outlived the host: %v", pids)
		}
	})
	return h, dir
}

// testWriter sends log lines to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// alive reports whether pid is a live process (a zombie is not).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if errors.Is(err, os.ErrNotExist) {
		return false
	}
	if err != nil { // no /proc: ask the kernel
		return syscall.Kill(pid, 0) == nil
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z' && s[i+2] != 'X'
	}
	return true
}

// waitGone fails the test unless pid is gone within 5 s.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	if pid <= 0 {
		t.Fatalf("no pid to watch")
	}
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("plugin process %d still running", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// processesIn lists live processes whose executable path (argv[0]) lies in
// dir, after giving any dying one a moment.
func processesIn(dir string) []int {
	var pids []int
	for range 100 {
		pids = pids[:0]
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if err != nil {
				continue
			}
			argv0, _, _ := strings.Cut(string(cmdline), "\x00")
			if strings.HasPrefix(argv0, dir+string(filepath.Separator)) && alive(pid) {
				pids = append(pids, pid)
			}
		}
		if len(pids) == 0 {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return pids
}

// kindOf returns the Kind of a host error, failing the test for others.
func kindOf(t *testing.T, err error) host.Kind {
	t.Helper()
	var he *host.Error
	if !errors.As(err, &he) {
		t.Fatalf("error %v (%T) is not a *host.Error", err, err)
	}
	return he.Kind
}

func TestExampleRoundTrip(t *testing.T) {
	t.Parallel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	h, _ := newHost(t, host.Options{Allocator: mem})
	ctx := context.Background()

	types, err := h.Types(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(types) != 1 || types[0].Type != "example_numbers" || types[0].DisplayName != "Example: numbers" {
		t.Fatalf("types = %+v", types)
	}
	var schema map[string]any
	if err := json.Unmarshal(types[0].ConfigSchema, &schema); err != nil || schema["type"] != "object" {
		t.Fatalf("config schema %s: %v", types[0].ConfigSchema, err)
	}

	c, err := h.Launch(ctx, "example_numbers")
	if err != nil {
		t.Fatal(err)
	}
	pid := c.PID()
	config := json.RawMessage(`{"count": 1000}`)
	if err := c.Check(ctx, config); err != nil {
		t.Fatalf("check: %v", err)
	}
	err = c.Check(ctx, json.RawMessage(`{"count": -1}`))
	if kindOf(t, err) != host.KindCheckFailed || !strings.Contains(err.(*host.Error).Detail, "count must be") {
		t.Fatalf("check of a bad config: %v", err)
	}

	tables, err := c.Discover(ctx, config)
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) != 1 || tables[0].Name != "numbers" || tables[0].EstimatedRows != 1000 ||
		len(tables[0].PrimaryKey) != 1 || tables[0].PrimaryKey[0] != "id" {
		t.Fatalf("tables = %+v", tables)
	}
	want := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "square", Type: arrow.PrimitiveTypes.Int64},
		{Name: "label", Type: arrow.BinaryTypes.String},
	}, nil)
	if !tables[0].Schema.Equal(want) {
		t.Fatalf("schema = %s", tables[0].Schema)
	}

	var rows, batches int64
	var progress [][2]int64
	err = c.Read(ctx, config, "numbers", tables[0].Schema, func(rec arrow.RecordBatch) error {
		batches++
		ids := rec.Column(0).(*array.Int64)
		squares := rec.Column(1).(*array.Int64)
		labels := rec.Column(2).(*array.String)
		for i := range int(rec.NumRows()) {
			rows++
			id := ids.Value(i)
			if id != rows || squares.Value(i) != id*id || labels.Value(i) != fmt.Sprintf("number %d", id) {
				return fmt.Errorf("row %d = (%d, %d, %q)", rows, id, squares.Value(i), labels.Value(i))
			}
		}
		return nil
	}, func(read, total int64) { progress = append(progress, [2]int64{read, total}) })
	if err != nil {
		t.Fatal(err)
	}
	if rows != 1000 || batches != 4 {
		t.Fatalf("rows %d in %d batches, want 1000 in 4", rows, batches)
	}
	if len(progress) != 4 || progress[3] != [2]int64{1000, 1000} || progress[0] != [2]int64{256, 1000} {
		t.Fatalf("progress = %v", progress)
	}
	mem.AssertSize(t, 0) // every batch was released

	c.Close()
	c.Close() // idempotent
	waitGone(t, pid)
	if err := c.Check(ctx, config); kindOf(t, err) != host.KindClosed {
		t.Fatalf("check after close: %v", err)
	}
}

func TestReadIdleTimeIsPluginTimeOnly(t *testing.T) {
	t.Parallel()
	h, _ := newHost(t, host.Options{ReadIdleTimeout: 300 * time.Millisecond})
	ctx := context.Background()
	c, err := h.Launch(ctx, "example_numbers")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	config := json.RawMessage(`{"count": 600, "batch_size": 200}`)
	tables, err := c.Discover(ctx, config)
	if err != nil {
		t.Fatal(err)
	}
	var rows int64
	var kept []arrow.RecordBatch
	err = c.Read(ctx, config, "numbers", tables[0].Schema, func(rec arrow.RecordBatch) error {
		time.Sleep(400 * time.Millisecond) // a slow ingester is not a hung plugin
		rows += rec.NumRows()
		rec.Retain()
		kept = append(kept, rec)
		return nil
	}, nil)
	if err != nil || rows != 600 {
		t.Fatalf("read %d rows: %v", rows, err)
	}
	// Retained batches stay valid after the Read.
	if got := kept[2].Column(0).(*array.Int64).Value(199); got != 600 {
		t.Fatalf("last id = %d", got)
	}
	for _, rec := range kept {
		rec.Release()
	}
}

// TestBackpressure shows that a plugin cannot run ahead of a slow reader:
// gRPC flow control blocks its Write, so neither side buffers the table.
func TestBackpressure(t *testing.T) {
	t.Parallel()
	h, _ := newHost(t, host.Options{}, "faulty")
	marker := filepath.Join(t.TempDir(), "written")
	config, _ := json.Marshal(map[string]string{"mode": "flood", "marker": marker})
	var consumed, maxAhead int
	_, err := readFaulty(t, h, string(config), func(c *host.Client, rec arrow.RecordBatch) error {
		consumed++
		if consumed <= 10 {
			time.Sleep(50 * time.Millisecond) // a slow ingester
			b, _ := os.ReadFile(marker)
			written, _ := strconv.Atoi(string(b))
			maxAhead = max(maxAhead, written-consumed)
		}
		return nil
	})
	if err != nil || consumed != 200 {
		t.Fatalf("consumed %d batches: %v", consumed, err)
	}
	// 200 batches are 50 MiB; the stream's flow-control window holds a few.
	if maxAhead > 40 {
		t.Fatalf("the plugin ran %d batches (%d MiB) ahead of its reader", maxAhead, maxAhead/4)
	}
	t.Logf("the plugin was at most %d batches ahead", maxAhead)
}

func TestTypes(t *testing.T) {
	t.Parallel()
	var launches atomic.Int64
	_, dir := newHost(t, host.Options{}, "faulty", "liar")
	// A Host of its own, counting launches through its log.
	h := host.New(dir, slog.New(countingHandler{&launches, "plugin launched"}), host.Options{StartTimeout: 2 * time.Second})
	t.Cleanup(h.Shutdown)
	write := func(name, content string, mode os.FileMode) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	self, _ := os.Executable()
	// Ignored: not executable, no prefix, an invalid type name, a directory.
	write(host.FilePrefix+"noexec", "#!/bin/sh\n", 0o644)
	write("connector-odd", "#!/bin/sh\n", 0o755)
	write(host.FilePrefix+"Bad-Name", "#!/bin/sh\n", 0o755)
	if err := os.Mkdir(filepath.Join(dir, host.FilePrefix+"dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A script plugin whose content we change to test the cache.
	hidden := t.TempDir()
	if err := os.Symlink(self, filepath.Join(hidden, host.FilePrefix+"faulty_script")); err != nil {
		t.Fatal(err)
	}
	script := func(comment string) string {
		return "#!/bin/sh\n# " + comment + "\nexec " + filepath.Join(hidden, host.FilePrefix+"faulty_script") + "\n"
	}
	write(host.FilePrefix+"faulty_script", script("one"), 0o755)

	names := func() string {
		t.Helper()
		types, err := h.Types(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, ti := range types {
			out = append(out, ti.Type)
			if ti.Path != filepath.Join(dir, host.FilePrefix+ti.Type) {
				t.Errorf("path of %s = %s", ti.Type, ti.Path)
			}
		}
		return strings.Join(out, ",")
	}
	// "liar" announces another type than its file name: left out.
	if got := names(); got != "example_numbers,faulty,faulty_script" {
		t.Fatalf("types = %s", got)
	}
	first := launches.Load()
	if first != 4 {
		t.Fatalf("%d launches for 4 plugins", first)
	}
	if got := names(); got != "example_numbers,faulty,faulty_script" || launches.Load() != first {
		t.Fatalf("second listing: types %s, %d launches (cache not used)", got, launches.Load()-first)
	}

	// Changing a plugin file invalidates its entry only.
	write(host.FilePrefix+"faulty_script", script("two, a longer comment"), 0o755)
	if got := names(); got != "example_numbers,faulty,faulty_script" || launches.Load() != first+1 {
		t.Fatalf("after a change: types %s, %d launches", got, launches.Load()-first)
	}
	// The failed plugin is retried after a minute, not before.
	host.SetClock(h, func() time.Time { return time.Now().Add(2 * time.Minute) })
	names()
	if launches.Load() != first+2 {
		t.Fatalf("failed plugin not retried: %d launches", launches.Load()-first)
	}
	// Removing the executable bit uninstalls it.
	if err := os.Chmod(filepath.Join(dir, host.FilePrefix+"faulty_script"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := names(); got != "example_numbers,faulty" {
		t.Fatalf("after chmod: %s", got)
	}
	if _, err := h.Launch(context.Background(), "faulty_script"); kindOf(t, err) != host.KindNotInstalled {
		t.Fatalf("launch of an uninstalled type: %v", err)
	}
	if _, err := h.Launch(context.Background(), "../etc"); kindOf(t, err) != host.KindNotInstalled {
		t.Fatalf("launch of a bad type name: %v", err)
	}

	// A missing directory means nothing is installed.
	empty := host.New(filepath.Join(dir, "missing"), nil, host.Options{})
	if types, err := empty.Types(context.Background()); err != nil || len(types) != 0 {
		t.Fatalf("missing dir: %v, %v", types, err)
	}
}

// countingHandler counts log records with a given message.
type countingHandler struct {
	n   *atomic.Int64
	msg string
}

func (h countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h countingHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.n.Add(1)
	}
	return nil
}
func (h countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h countingHandler) WithGroup(string) slog.Handler      { return h }

func TestVersionMismatch(t *testing.T) {
	t.Parallel()
	h, _ := newHost(t, host.Options{}, "v2")
	_, err := h.Launch(context.Background(), "v2")
	if kindOf(t, err) != host.KindVersion {
		t.Fatalf("err = %v", err)
	}
	for _, want := range []string{"plugin v2", "protocol version 2", "speaks version 1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
}

func TestNotAPlugin(t *testing.T) {
	t.Parallel()
	h, dir := newHost(t, host.Options{StartTimeout: 500 * time.Millisecond})
	truePath, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true(1)")
	}
	b, err := os.ReadFile(truePath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, host.FilePrefix+"true"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	// A plugin that never answers, and starts a child of its own.
	sleeper := "#!/bin/sh\n" + "sleep 30 &\n" + "exec sleep 30\n"
	if err := os.WriteFile(filepath.Join(dir, host.FilePrefix+"sleeper"), []byte(sleeper), 0o755); err != nil {
		t.Fatal(err)
	}
	before := countSleeps()

	_, err = h.Launch(context.Background(), "true")
	if kindOf(t, err) != host.KindStart || !strings.Contains(err.Error(), "without a handshake") {
		t.Fatalf("true: %v", err)
	}
	start := time.Now()
	_, err = h.Launch(context.Background(), "sleeper")
	if kindOf(t, err) != host.KindStart || !strings.Contains(err.Error(), "handshake in time") {
		t.Fatalf("sleeper: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("start timeout took %s", d)
	}
	// The plugin's own child went with it.
	deadline := time.Now().Add(5 * time.Second)
	for countSleeps() > before {
		if time.Now().After(deadline) {
			t.Fatalf("the sleeper's children survived")
		}
		time.Sleep(20 * time.Millisecond)
	}
	types, err := h.Types(context.Background())
	if err != nil || len(types) != 1 {
		t.Fatalf("types: %+v, %v", types, err)
	}
}

// countSleeps counts live "sleep 30" processes.
func countSleeps() int {
	n := 0
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && string(b) == "sleep\x0030\x00" && alive(pid) {
			n++
		}
	}
	return n
}

// readFaulty launches the faulty plugin and reads its table "t" with mode.
func readFaulty(t *testing.T, h *host.Host, config string, onBatch func(c *host.Client, rec arrow.RecordBatch) error) (*host.Client, error) {
	t.Helper()
	ctx := context.Background()
	c, err := h.Launch(ctx, "faulty")
	if err != nil {
		t.Fatal(err)
	}
	tables, err := c.Discover(ctx, json.RawMessage(config))
	if err != nil {
		t.Fatal(err)
	}
	err = c.Read(ctx, json.RawMessage(config), "t", tables[0].Schema, func(rec arrow.RecordBatch) error {
		return onBatch(c, rec)
	}, nil)
	return c, err
}

func TestKilledDuringRead(t *testing.T) {
	t.Parallel()
	h, _ := newHost(t, host.Options{}, "faulty")
	start := time.Now()
	c, err := readFaulty(t, h, `{}`, func(c *host.Client, rec arrow.RecordBatch) error {
		if err := syscall.Kill(c.PID(), syscall.SIGKILL); err != nil {
			t.Errorf("kill: %v", err)
		}
		return nil
	})
	if kindOf(t, err) != host.KindExited || !strings.Contains(err.Error(), "plugin faulty exited: signal: killed") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("read took %s to notice", d)
	}
	waitGone(t, c.PID())
	c.Close()

	// The host still works.
	c2, err := h.Launch(context.Background(), "faulty")
	if err != nil {
		t.Fatal(err)
	}
	if err := c2.Check(context.Background(), json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	c2.Close()
	waitGone(t, c2.PID())
}

func TestPluginExitsDuringRead(t *testing.T) {
	t.Parallel()
	h, _ := newHost(t, host.Options{}, "faulty")
	c, err := readFaulty(t, h, `{"mode":"exit"}`, func(*host.Client, arrow.RecordBatch) error { return nil })
	if kindOf(t, err) != host.KindExited ||
		!strings.Contains(err.Error(), "exit status 3: fatal error: giving up on purpose") {
		t.Fatalf("err = %v", err)
	}
	waitGone(t, c.PID())
	c.Close()
}

func TestPanicInConnector(t *testing.T) {
	t.Parallel()
	h, _ := newHost(t, host.Options{}, "faulty")
	c, err := readFaulty(t, h, `{"mode":"panic"}`, func(*host.Client, arrow.RecordBatch) error { return nil })
	defer c.Close()
	if kindOf(t, err) != host.KindPlugin || !strings.Contains(err.Error(), "connector panicked in Read: boom") {
		t.Fatalf("err = %v", err)
	}
	// The plugin survives its connector's panic.
	if err := c.Check(context.Background(), json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
}

func TestHungRead(t *testing.T) {
	t.Parallel()
	h, _ := newHost(t, host.Options{ReadIdleTimeout: 300 * time.Millisecond}, "faulty")
	start := time.Now()
	c, err := readFaulty(t, h, `{"mode":"hang"}`, func(*host.Client, arrow.RecordBatch) error { return nil })
	if kindOf(t, err) != host.KindHung || err.Error() != "plugin faulty sent nothing for 300ms" {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("took %s", d)
	}
	waitGone(t, c.PID()) // a hung plugin is killed at once
	c.Close()
}

func TestHungCheck(t *testing.T) {
	t.Parallel()
	h, _ := newHost(t, host.Options{CallTimeout: 300 * time.Millisecond}, "faulty")
	c, err := h.Launch(context.Background(), "faulty")
	if err != nil {
		t.Fatal(err)
	}
	err = c.Check(context.Background(), json.RawMessage(`{"mode":"slowcheck"}`))
	if kindOf(t, err) != host.KindTimeout || err.Error() != "plugin faulty did not answer Check within 300ms" {
		t.Fatalf("err = %v", err)
	}
	waitGone(t, c.PID())
	c.Close()
}

func TestMalformedBatch(t *testing.T) {
	t.Parallel()
	h, _ := newHost(t, host.Options{}, "faulty", "garbage")
	ctx := context.Background()
	for _, tc := range []struct{ typ, config, want string }{
		{"garbage", `{}`, "malformed batch from plugin garbage: invalid Arrow IPC"},
		{"faulty", `{"mode":"wrongschema"}`, "malformed batch from plugin faulty: schema"},
	} {
		c, err := h.Launch(ctx, tc.typ)
		if err != nil {
			t.Fatal(err)
		}
		tables, err := c.Discover(ctx, json.RawMessage(tc.config))
		if err != nil {
			t.Fatal(err)
		}
		called := false
		err = c.Read(ctx, json.RawMessage(tc.config), "t", tables[0].Schema, func(arrow.RecordBatch) error {
			called = true
			return nil
		}, nil)
		if kindOf(t, err) != host.KindMalformed || !strings.HasPrefix(err.Error(), tc.want) || called {
			t.Fatalf("%s: err = %v (onBatch called: %v)", tc.typ, err, called)
		}
		c.Close()
		waitGone(t, c.PID())
	}
}

func TestCancelRead(t *testing.T) {
	t.Parallel()
	h, _ := newHost(t, host.Options{}, "faulty")
	marker := filepath.Join(t.TempDir(), "cancelled")
	config, _ := json.Marshal(map[string]string{"marker": marker})
	ctx, cancel := context.WithCancel(context.Background())
	c, err := h.Launch(ctx, "faulty")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tables, err := c.Discover(ctx, config)
	if err != nil {
		t.Fatal(err)
	}
	err = c.Read(ctx, config, "t", tables[0].Schema, func(arrow.RecordBatch) error {
		cancel()
		return nil
	}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the plugin's Read did not see its context cancelled")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The plugin is still usable.
	if err := c.Check(context.Background(), config); err != nil {
		t.Fatal(err)
	}
}

func TestSecretsStayOutOfErrors(t *testing.T) {
	t.Parallel()
	h, _ := newHost(t, host.Options{}, "faulty")
	ctx := context.Background()
	if _, err := h.Types(ctx); err != nil { // caches the schema
		t.Fatal(err)
	}
	c, err := h.Launch(ctx, "faulty")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	config := json.RawMessage(`{"mode":"leak","password":"hunter2-very-secret"}`)
	for _, err := range []error{c.Check(ctx, config), func() error { _, err := c.Discover(ctx, config); return err }()} {
		if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "********") {
			t.Errorf("err = %v", err)
		}
	}
	// A short secret is redacted where it stands alone, not inside words
	// (which gave "canno******** log in wi******** ********").
	config = json.RawMessage(`{"mode":"leak","password":"t"}`)
	if _, err := c.Discover(ctx, config); err == nil || err.Error() != "plugin faulty: Discover failed: cannot log in with ********" {
		t.Errorf("short secret: err = %v", err)
	}
	if err := c.Check(ctx, config); err == nil || err.Error() != `check failed: password "********" rejected` {
		t.Errorf("short secret: err = %v", err)
	}
}

func TestShutdownKillsPlugins(t *testing.T) {
	t.Parallel()
	h, _ := newHost(t, host.Options{}, "faulty")
	ctx := context.Background()
	a, err := h.Launch(ctx, "faulty")
	if err != nil {
		t.Fatal(err)
	}
	b, err := h.Launch(ctx, "example_numbers")
	if err != nil {
		t.Fatal(err)
	}
	tables, err := a.Discover(ctx, json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	reading := make(chan struct{})
	readErr := make(chan error, 1)
	var once sync.Once
	go func() {
		readErr <- a.Read(ctx, json.RawMessage(`{}`), "t", tables[0].Schema, func(arrow.RecordBatch) error {
			once.Do(func() { close(reading) })
			return nil
		}, nil)
	}()
	<-reading
	h.Shutdown()
	waitGone(t, a.PID())
	waitGone(t, b.PID())
	select {
	case err := <-readErr:
		if kindOf(t, err) != host.KindClosed {
			t.Fatalf("read err = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Read did not return after Shutdown")
	}
	if _, err := h.Launch(ctx, "faulty"); kindOf(t, err) != host.KindClosed {
		t.Fatalf("launch after shutdown: %v", err)
	}
	a.Close() // still fine
}

func TestLaunchCancelled(t *testing.T) {
	t.Parallel()
	h, dir := newHost(t, host.Options{StartTimeout: 2 * time.Second})
	if err := os.WriteFile(filepath.Join(dir, host.FilePrefix+"sleeper"), []byte("#!/bin/sh\nexec sleep 30\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := h.Launch(ctx, "sleeper"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("Launch ignored its context for %s", d)
	}
	// newHost's cleanup checks that the sleeper is killed after all.
}

// TestPluginDiesWithServer kills a server (a helper process running a
// Host) with SIGKILL, which leaves it no chance to clean up: the kernel's
// parent-death signal still ends its plugin.
func TestPluginDiesWithServer(t *testing.T) {
	if _, err := os.Stat("/proc/self"); err != nil {
		t.Skip("needs Linux")
	}
	t.Parallel()
	dir := t.TempDir()
	if err := install(dir, "faulty"); err != nil {
		t.Fatal(err)
	}
	self, _ := os.Executable()
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), "STRATA_TEST_HOST_HELPER="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line, err := bufio.NewReader(io.LimitReader(out, 1024)).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("helper said %q", line)
	}
	if !alive(pid) {
		t.Fatal("plugin not running")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	waitGone(t, pid)
}
