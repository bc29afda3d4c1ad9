package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// strata runs the command line in-process and returns its exit code and output.
func strata(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestAdminCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	code, out, errOut := strata(t, "tenants", "create", "--name", "Acme", "--tier", "pro", "--json", "--data-dir", dir)
	if code != exitOK {
		t.Fatalf("tenants create: %d %s", code, errOut)
	}
	var tenant struct{ ID, Name, Tier string }
	if err := json.Unmarshal([]byte(out), &tenant); err != nil || tenant.Name != "Acme" || tenant.Tier != "pro" || tenant.ID == "" {
		t.Fatalf("tenants create --json: %q %v", out, err)
	}
	code, out, errOut = strata(t, "users", "create", "--email", "ops@acme.example", "--password", "correct horse", "--tenant", tenant.ID, "--data-dir", dir)
	if code != exitOK || !regexp.MustCompile(`^[0-9a-f-]{36}\n$`).MatchString(out) {
		t.Fatalf("users create: %d %q %s", code, out, errOut)
	}
	// Plain output of tenants create is the id alone, for scripts.
	code, out, _ = strata(t, "tenants", "create", "--name", "Plain", "--data-dir", dir)
	if code != exitOK || !regexp.MustCompile(`^[0-9a-f-]{36}\n$`).MatchString(out) {
		t.Fatalf("tenants create plain: %d %q", code, out)
	}
	code, kid1, _ := strata(t, "keys", "rotate", "--data-dir", dir)
	code2, kid2, _ := strata(t, "keys", "rotate", "--data-dir", dir)
	if code != exitOK || code2 != exitOK || kid1 == kid2 || strings.TrimSpace(kid1) == "" {
		t.Fatalf("keys rotate: %q %q", kid1, kid2)
	}

	for name, args := range map[string][]string{
		"duplicate email": {"users", "create", "--email", "OPS@acme.example", "--password", "correct horse", "--tenant", tenant.ID, "--data-dir", dir},
		"unknown tenant":  {"users", "create", "--email", "x@acme.example", "--password", "correct horse", "--tenant", "00000000-0000-4000-8000-000000000000", "--data-dir", dir},
		"bad tier":        {"tenants", "create", "--name", "X", "--tier", "gold", "--data-dir", dir},
		"short password":  {"users", "create", "--email", "y@acme.example", "--password", "abc", "--tenant", tenant.ID, "--data-dir", dir},
	} {
		if code, _, errOut := strata(t, args...); code != exitFailure || errOut == "" {
			t.Errorf("%s: exit %d, stderr %q; want 1 with a message", name, code, errOut)
		}
	}
	for name, args := range map[string][]string{
		"missing name":   {"tenants", "create", "--data-dir", dir},
		"bad tenant id":  {"users", "create", "--email", "z@acme.example", "--password", "correct horse", "--tenant", "acme", "--data-dir", dir},
		"missing email":  {"users", "create", "--password", "correct horse", "--tenant", tenant.ID, "--data-dir", dir},
		"stray argument": {"keys", "rotate", "now", "--data-dir", dir},
	} {
		if code, _, _ := strata(t, args...); code != exitUsage {
			t.Errorf("%s: exit %d, want %d", name, code, exitUsage)
		}
	}
}

func TestServeDemoPrintsAWorkingLogin(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	cmd := exec.Command(os.Args[0], "serve", "--demo", "--addr", "127.0.0.1:0", "--data-dir", dataDir)
	cmd.Env = append(os.Environ(), "STRATA_TEST_MAIN=1")
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, &lockedBuffer{}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	waitFor(t, out, "Then call the API")
	text := out.String()
	base := regexp.MustCompile(`serving on (http://\S+)`).FindStringSubmatch(text)
	login := regexp.MustCompile(`-d '(\{.*\})'`).FindStringSubmatch(text)
	if base == nil || login == nil || !strings.Contains(text, "tenant id:") {
		t.Fatalf("demo output:\n%s", text)
	}
	resp, err := http.Post(base[1]+"/api/auth/v1/token?grant_type=password", "application/json", strings.NewReader(login[1]))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the printed login answered %d", resp.StatusCode)
	}
	info, err := os.Stat(filepath.Join(dataDir, demoFile))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("demo credentials file: %v %v", info, err)
	}
}

// TestSupabaseAuthClient drives the off-the-shelf @supabase/auth-js client
// (installed from npm into a temp dir) against a live `strata serve`.
func TestSupabaseAuthClient(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is required (make deps installs it): %v", tool, err)
		}
	}
	modules := t.TempDir()
	install := exec.Command("npm", "install", "--prefix", modules, "--no-audit", "--no-fund", "--silent", "@supabase/auth-js@2.119.1")
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("npm install: %v\n%s", err, out)
	}
	script, err := filepath.Abs("testdata/authjs.mjs")
	if err != nil {
		t.Fatal(err)
	}
	// ES modules resolve packages relative to the script: put a copy next to node_modules.
	local := filepath.Join(modules, "authjs.mjs")
	src, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(local, src, 0o600); err != nil {
		t.Fatal(err)
	}

	cmd, base, stderr := startServe(t, nil)
	_ = cmd
	dataDir := dataDirOf(t, stderr)
	code, tenantID, errOut := strata(t, "tenants", "create", "--name", "authjs", "--data-dir", dataDir)
	if code != exitOK {
		t.Fatalf("tenants create: %s", errOut)
	}
	if code, _, errOut := strata(t, "users", "create", "--email", "js@example.com", "--password", "correct horse",
		"--tenant", strings.TrimSpace(tenantID), "--data-dir", dataDir); code != exitOK {
		t.Fatalf("users create: %s", errOut)
	}
	node := exec.Command("node", local, base, "js@example.com", "correct horse")
	deadline := time.Now().Add(60 * time.Second)
	node.WaitDelay = time.Until(deadline)
	out, err := node.CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"ok":true`) {
		t.Fatalf("auth-js against strata: %v\n%s\nserver log:\n%s", err, out, stderr.String())
	}
	if !strings.Contains(string(out), strings.TrimSpace(tenantID)) {
		t.Fatalf("auth-js session lacks the tenant: %s", out)
	}
}

// dataDirOf reads the data dir from the server's start-up log line.
func dataDirOf(t *testing.T, log *lockedBuffer) string {
	t.Helper()
	waitFor(t, log, "data_dir")
	m := regexp.MustCompile(`data_dir[=":]+([^" ]+)`).FindStringSubmatch(log.String())
	if m == nil {
		t.Fatalf("no data_dir in log:\n%s", log.String())
	}
	return m[1]
}
