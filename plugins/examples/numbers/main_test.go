package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// collector is an sdk.RecordWriter that keeps what it is sent: the way to
// unit-test a connector's Read without a host.
type collector struct {
	ids      []int64
	progress [][2]int64
}

func (c *collector) Write(rec arrow.RecordBatch) error {
	c.ids = append(c.ids, rec.Column(0).(*array.Int64).Int64Values()...)
	return nil
}

func (c *collector) Progress(read, total int64) error {
	c.progress = append(c.progress, [2]int64{read, total})
	return nil
}

func TestRead(t *testing.T) {
	var out collector
	err := numbers{}.Read(context.Background(), json.RawMessage(`{"count":10,"batch_size":4}`), "numbers", &out)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.ids) != 10 || out.ids[9] != 10 {
		t.Fatalf("ids = %v", out.ids)
	}
	if len(out.progress) != 3 || out.progress[2] != [2]int64{10, 10} {
		t.Fatalf("progress = %v", out.progress)
	}
}

func TestCheck(t *testing.T) {
	ctx := context.Background()
	for config, ok := range map[string]bool{
		`{}`:                true,
		`{"count":5}`:       true,
		`{"count":-1}`:      false,
		`{"batch_size":0}`:  false,
		`{"colour":"blue"}`: false,
		`{"count":"many"}`:  false,
	} {
		if err := (numbers{}).Check(ctx, json.RawMessage(config)); (err == nil) != ok {
			t.Errorf("Check(%s) = %v", config, err)
		}
	}
}

func TestSpecSchemaIsJSON(t *testing.T) {
	spec, err := numbers{}.Spec(context.Background())
	if err != nil || !json.Valid(spec.ConfigSchema) || spec.Type != "example_numbers" {
		t.Fatalf("spec = %+v, %v", spec, err)
	}
}
