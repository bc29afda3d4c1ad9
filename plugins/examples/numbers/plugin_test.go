package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/stratahq/strata/plugins/host"
)

// TestPlugin builds the connector and runs it as the server does: a real
// process speaking the real protocol (docs/writing-a-connector.md shows it).
func TestPlugin(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "strata-connector-example_numbers")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	h := host.New(dir, slog.Default(), host.Options{})
	defer h.Shutdown()
	ctx := context.Background()

	types, err := h.Types(ctx) // runs Spec
	if err != nil || len(types) != 1 {
		t.Fatalf("types %v: %v", types, err)
	}
	c, err := h.Launch(ctx, "example_numbers")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	config := json.RawMessage(`{"count": 1000}`)
	if err := c.Check(ctx, config); err != nil {
		t.Fatal(err)
	}
	tables, err := c.Discover(ctx, config)
	if err != nil {
		t.Fatal(err)
	}
	var rows int64
	err = c.Read(ctx, config, tables[0].Name, tables[0].Schema,
		func(rec arrow.RecordBatch) error { rows += rec.NumRows(); return nil },
		func(read, total int64) { t.Logf("progress %d/%d", read, total) })
	if err != nil || rows != 1000 {
		t.Fatalf("%d rows: %v", rows, err)
	}
}
