package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratahq/strata/impl/principal"
	"github.com/stratahq/strata/impl/testenv"
)

// Tests that need what a script cannot do — wait for a line of a running
// process, send it a signal, parse its JSON — run the test binary as
// strata (STRATA_TEST_MAIN=1, see TestMain) against an in-process server.

const (
	procEmail    = "proc@example.com"
	procPassword = "correct horse battery"
)

// loggedIn starts a real server (the real pipeline included) with one
// pro-tier user and logs a fresh config dir in to it with `strata login`.
func loggedIn(t *testing.T) (*testenv.Env, string) {
	t.Helper()
	e := testenv.New(t, nil)
	e.User(procEmail, procPassword, principal.TierPro)
	config := t.TempDir()
	out, err := strataProcess(t.Context(), config, "login", "--base-url", e.Srv.URL, "--email", procEmail, "--password", procPassword).CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "Logged in") {
		t.Fatalf("login: %v %s", err, out)
	}
	return e, config
}

// strataProcess is `strata args...` as a process with its own config dir.
func strataProcess(ctx context.Context, config string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), "STRATA_TEST_MAIN=1", "STRATA_CONFIG_DIR="+config)
	return cmd
}

// lines sends r's lines on a channel, closed at EOF.
func lines(r io.Reader) <-chan string {
	ch := make(chan string, 64)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
		for sc.Scan() {
			ch <- sc.Text()
		}
	}()
	return ch
}

// nextLine is the next line from ch, failing the test after the deadline
// or at EOF.
func nextLine(t *testing.T, ch <-chan string, deadline <-chan time.Time, what string) string {
	t.Helper()
	select {
	case l, ok := <-ch:
		if !ok {
			t.Fatalf("%s: the output ended", what)
		}
		return l
	case <-deadline:
		t.Fatalf("%s: nothing within the deadline", what)
	}
	return ""
}

// tailEvent is a line of `strata events tail`.
type tailEvent struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	Item struct {
		ID               string `json:"id"`
		Body             string `json:"body"`
		ProcessingStatus string `json:"processingStatus"`
	} `json:"item"`
}

// TestEventsTail runs `strata events tail` as a process: once it says it
// listens, a note created through the API shows up as a content:created
// line, then its content:processed line (the real pipeline); an interrupt
// ends it with exit code 0. Then --since replays after the first line and
// --limit 1 ends the command after exactly the line that followed it live.
func TestEventsTail(t *testing.T) {
	t.Parallel()
	e, config := loggedIn(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	deadline := time.After(45 * time.Second)

	tail := strataProcess(ctx, config, "events", "tail")
	stdout, err := tail.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := tail.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := tail.Start(); err != nil {
		t.Fatal(err)
	}
	outLines, errLines := lines(stdout), lines(stderr)
	if l := nextLine(t, errLines, deadline, "tail's stderr"); l != "strata: listening for events (interrupt to stop)" {
		t.Fatalf("tail's first stderr line %q", l)
	}

	s := e.SignIn(procEmail, procPassword)
	r := e.Call("POST", "/api/content/notes", `{"title":"Tail me","body":"heard while tailing"}`, testenv.Bearer(s.AccessToken)...)
	if r.Status != http.StatusCreated {
		t.Fatalf("create note: %d %s", r.Status, r.Body)
	}
	noteID, _ := r.JSON(t)["id"].(string)

	var seen []tailEvent
	for len(seen) == 0 || seen[len(seen)-1].Type != "content:processed" {
		l := nextLine(t, outLines, deadline, "tail's stdout")
		var ev tailEvent
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("tail printed %q: %v", l, err)
		}
		if ev.Item.ID != noteID || ev.ID == "" {
			t.Fatalf("event %s, want one of note %s", l, noteID)
		}
		seen = append(seen, ev)
	}
	if seen[0].Type != "content:created" || seen[0].Item.Body != "heard while tailing" {
		t.Fatalf("first event %+v, want content:created of the note", seen[0])
	}
	if len(seen) < 2 {
		t.Fatalf("no event after content:created: %+v", seen)
	}

	if err := tail.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	for l := range errLines { // drained until the process closes stderr
		t.Errorf("tail's stderr after the interrupt: %q", l)
	}
	if err := tail.Wait(); err != nil {
		t.Fatalf("tail after an interrupt: %v, want exit code 0", err)
	}

	out, err := strataProcess(ctx, config, "events", "tail", "--since", seen[0].ID, "--limit", "1").Output()
	if err != nil {
		t.Fatalf("tail --since --limit 1: %v", err)
	}
	var replayed tailEvent
	if strings.Count(string(out), "\n") != 1 || json.Unmarshal(out, &replayed) != nil {
		t.Fatalf("tail --since --limit 1 printed %q, want one event", out)
	}
	if replayed.ID != seen[1].ID || replayed.Type != seen[1].Type || replayed.Item.ID != noteID {
		t.Fatalf("replayed %+v, want %+v", replayed, seen[1])
	}
}

// TestVoiceUploadWait uploads speech made by espeak-ng (as the pipeline's
// tests do) with `strata voice upload --wait`: the command ends when the
// real transcriber and pipeline are done and prints the processed item,
// whose transcript has the words said.
func TestVoiceUploadWait(t *testing.T) {
	t.Parallel()
	_, config := loggedIn(t)
	wav := filepath.Join(t.TempDir(), "memo.wav")
	if out, err := exec.Command("espeak-ng", "-v", "en-us+klatt2", "-s", "175", "-w", wav,
		"remember to buy milk and eggs tomorrow morning").CombinedOutput(); err != nil {
		t.Fatalf("espeak-ng (make deps installs it): %v %s", err, out)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	cmd := strataProcess(ctx, config, "voice", "upload", "--wait", wav)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("voice upload --wait: %v; stderr: %s", err, stderr.String())
	}
	var it struct {
		Type             string  `json:"type"`
		Title            string  `json:"title"`
		Body             string  `json:"body"`
		Transcription    *string `json:"transcription"`
		ProcessingStatus string  `json:"processingStatus"`
		ProcessingError  *string `json:"processingError"`
	}
	if err := json.Unmarshal(out, &it); err != nil {
		t.Fatalf("output is not the item: %v\n%s", err, out)
	}
	if it.ProcessingStatus != "processed" || it.ProcessingError != nil || it.Transcription == nil {
		t.Fatalf("item after --wait:\n%s", out)
	}
	hits := 0
	for _, w := range []string{"remember", "tomorrow", "morning", "milk", "eggs"} {
		if strings.Contains(*it.Transcription, w) {
			hits++
		}
	}
	if hits < 2 || it.Body != *it.Transcription || it.Title == "" {
		t.Fatalf("transcript %q (want two of the words said), title %q, body %q", *it.Transcription, it.Title, it.Body)
	}
}
