package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/stratahq/strata/impl/tailbuf"
	"github.com/stratahq/strata/plugins/proto"
	"github.com/stratahq/strata/plugins/sdk"
)

// Client is one running plugin process. Its methods may be called
// concurrently. Close it when done; a Client whose plugin crashed, hung or
// was shut down answers every call with an error.
type Client struct {
	host   *Host
	typ    string
	path   string
	pc     *plugin.Client
	cmd    *exec.Cmd
	tail   *tailbuf.Buffer
	logger *slog.Logger
	conn   proto.ConnectorClient // set once started
	schema json.RawMessage       // the config schema, set by Launch

	pid       atomic.Int64
	closed    atomic.Bool
	closeOnce sync.Once
}

// errReadIdle is the cancellation cause of a Read whose plugin went quiet.
type errReadIdle struct{ d time.Duration }

// Error implements error.
func (e errReadIdle) Error() string { return fmt.Sprintf("no message for %s", e.d) }

// errCallTimeout is the cancellation cause of a call over CallTimeout.
type errCallTimeout struct{ d time.Duration }

// Error implements error.
func (e errCallTimeout) Error() string { return fmt.Sprintf("no answer within %s", e.d) }

// Type returns the connector type of the plugin.
func (c *Client) Type() string { return c.typ }

// PID returns the plugin's process id (0 before it started).
func (c *Client) PID() int { return int(c.pid.Load()) }

// Spec asks the plugin to describe itself. The schema is checked to be a
// JSON object.
func (c *Client) Spec(ctx context.Context) (sdk.Spec, error) {
	ctx, cancel := c.callContext(ctx)
	defer cancel()
	resp, err := c.conn.Spec(ctx, &proto.SpecRequest{})
	if err != nil {
		return sdk.Spec{}, c.callError(ctx, "Spec", err, nil)
	}
	var obj map[string]any
	if err := json.Unmarshal(resp.GetConfigSchemaJson(), &obj); err != nil || obj == nil {
		return sdk.Spec{}, c.malformed("spec", fmt.Errorf("config schema is not a JSON object"))
	}
	return sdk.Spec{
		Type:         resp.GetType(),
		DisplayName:  resp.GetDisplayName(),
		ConfigSchema: json.RawMessage(resp.GetConfigSchemaJson()),
	}, nil
}

// Check asks the plugin whether config works. A rejected configuration is
// an *Error of KindCheckFailed whose Detail is the plugin's explanation for
// the user.
func (c *Client) Check(ctx context.Context, config json.RawMessage) error {
	ctx, cancel := c.callContext(ctx)
	defer cancel()
	resp, err := c.conn.Check(ctx, &proto.CheckRequest{ConfigJson: config})
	if err != nil {
		return c.callError(ctx, "Check", err, config)
	}
	if !resp.GetOk() {
		detail := c.redact(resp.GetMessage(), config)
		if detail == "" {
			detail = "the configuration does not work (the plugin gave no reason)"
		}
		return newError(c.typ, KindCheckFailed, nil, "check failed: "+detail).withDetail(detail)
	}
	return nil
}

// Discover asks the plugin for the tables config gives access to. Every
// table's schema must parse and its primary key columns must exist, or the
// answer is malformed.
func (c *Client) Discover(ctx context.Context, config json.RawMessage) ([]sdk.Table, error) {
	ctx, cancel := c.callContext(ctx)
	defer cancel()
	resp, err := c.conn.Discover(ctx, &proto.DiscoverRequest{ConfigJson: config})
	if err != nil {
		return nil, c.callError(ctx, "Discover", err, config)
	}
	tables := make([]sdk.Table, 0, len(resp.GetTables()))
	seen := map[string]bool{}
	for _, t := range resp.GetTables() {
		if t.GetName() == "" || seen[t.GetName()] {
			return nil, c.malformed("discovery", fmt.Errorf("table name %q is empty or repeated", t.GetName()))
		}
		seen[t.GetName()] = true
		schema, err := proto.DecodeSchema(t.GetArrowSchema())
		if err != nil {
			return nil, c.malformed("discovery", fmt.Errorf("table %q: %w", t.GetName(), err))
		}
		for _, k := range t.GetPrimaryKey() {
			if !schema.HasField(k) {
				return nil, c.malformed("discovery", fmt.Errorf("table %q: primary key column %q is not in the schema", t.GetName(), k))
			}
		}
		tables = append(tables, sdk.Table{
			Name:          t.GetName(),
			Schema:        schema,
			PrimaryKey:    t.GetPrimaryKey(),
			EstimatedRows: t.GetEstimatedRows(),
		})
	}
	return tables, nil
}

// Read streams table from the plugin. Each record batch must be an Arrow
// IPC stream holding exactly one batch whose schema equals schema (the one
// Discover returned), or Read fails with a KindMalformed error ("malformed
// batch from plugin <type>"). onBatch is called with each batch in order;
// the batch is released when onBatch returns, so onBatch must Retain it to
// keep it longer. An error from onBatch ends the Read (the plugin is told to
// stop) and is returned as is. onProgress, if not nil, receives the
// plugin's progress reports.
//
// If the plugin sends nothing for Options.ReadIdleTimeout (time in onBatch
// does not count), it is considered hung: it is killed and Read fails with
// KindHung. If it dies, Read fails with KindExited. Cancelling ctx cancels
// the plugin's Read.
func (c *Client) Read(ctx context.Context, config json.RawMessage, table string, schema *arrow.Schema,
	onBatch func(arrow.RecordBatch) error, onProgress func(rowsRead, rowsTotal int64)) error {
	if schema == nil || onBatch == nil {
		return fmt.Errorf("plugin %s: Read needs the discovered schema and an onBatch function", c.typ)
	}
	if c.closed.Load() {
		return c.closedError("Read")
	}
	idle := c.host.opts.ReadIdleTimeout
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timer := time.AfterFunc(idle, func() { cancel(errReadIdle{idle}) })
	defer timer.Stop()
	stream, err := c.conn.Read(ctx, &proto.ReadRequest{ConfigJson: config, Table: table})
	for err == nil {
		var msg *proto.ReadMessage
		timer.Reset(idle)
		msg, err = stream.Recv()
		timer.Stop()
		if err != nil {
			break
		}
		switch p := msg.GetPayload().(type) {
		case *proto.ReadMessage_RecordBatch:
			rec, derr := proto.DecodeBatch(p.RecordBatch, schema, c.host.opts.Allocator)
			if derr != nil {
				return c.malformed("batch", derr)
			}
			berr := onBatch(rec)
			rec.Release()
			if berr != nil {
				return berr
			}
		case *proto.ReadMessage_Progress:
			if onProgress != nil {
				onProgress(p.Progress.GetRowsRead(), p.Progress.GetRowsTotal())
			}
		default:
			return c.malformed("batch", errors.New("a read message with neither a batch nor progress"))
		}
	}
	if errors.Is(err, io.EOF) {
		return nil
	}
	var hung errReadIdle
	if errors.As(context.Cause(ctx), &hung) {
		c.logger.Warn("plugin hung: killing it", "idle", hung.d)
		c.Close()
		return newError(c.typ, KindHung, nil, fmt.Sprintf("plugin %s sent nothing for %s", c.typ, hung.d))
	}
	return c.callError(ctx, "Read", err, config)
}

// Close kills the plugin process (and any process it started) and returns
// when it is gone. It is idempotent and safe to call concurrently with
// calls, which then fail.
func (c *Client) Close() {
	c.closeOnce.Do(func() {
		c.closed.Store(true)
		// Kill first, then let go-plugin clean up: the plugin holds no
		// state worth a graceful stop, and killing the whole group while
		// the plugin is unreaped also ends anything it started. (Exited
		// turns true just after go-plugin reaps the process; a pid reused
		// within that instant is the only, negligible, risk.)
		if !c.pc.Exited() {
			killGroup(c.PID())
		}
		done := make(chan struct{})
		go func() { c.pc.Kill(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			// Not expected: go-plugin's Kill ends once the process is
			// gone. Leave its goroutine rather than block shutdown.
			c.logger.Error("plugin cleanup did not finish", "pid", c.PID())
		}
		c.host.untrack(c)
	})
}

// callContext bounds a unary call by CallTimeout.
func (c *Client) callContext(ctx context.Context) (context.Context, context.CancelFunc) {
	d := c.host.opts.CallTimeout
	return context.WithTimeoutCause(ctx, d, errCallTimeout{d})
}

// callError explains why a call failed: closed client, the caller's own
// cancellation, our timeout, a dead plugin, or the plugin's error.
func (c *Client) callError(ctx context.Context, op string, err error, config json.RawMessage) error {
	if c.closed.Load() {
		return c.closedError(op)
	}
	// The deadline travels to the plugin, whose gRPC server may end the
	// call a moment before the local timer fires: let it fire, so that the
	// error says what happened.
	if dl, ok := ctx.Deadline(); ok && ctx.Err() == nil {
		if wait := time.Until(dl); wait < 100*time.Millisecond {
			select {
			case <-ctx.Done():
			case <-time.After(wait + 10*time.Millisecond):
			}
		}
	}
	var timeout errCallTimeout
	if cause := context.Cause(ctx); errors.As(cause, &timeout) {
		c.logger.Warn("plugin did not answer in time: killing it", "call", op, "timeout", timeout.d)
		c.Close()
		return newError(c.typ, KindTimeout, cause, fmt.Sprintf("plugin %s did not answer %s within %s", c.typ, op, timeout.d))
	} else if cause != nil {
		return fmt.Errorf("plugin %s: %s: %w", c.typ, op, cause)
	}
	st := status.Convert(err)
	// A broken connection most likely means the process died; go-plugin
	// notices the exit a moment after the socket closes.
	wait := time.Duration(0)
	switch st.Code() {
	case codes.Unavailable:
		wait = 2 * time.Second
	case codes.Canceled, codes.Internal:
		wait = 200 * time.Millisecond
	}
	if exit, ok := c.waitExit(wait); ok {
		killGroup(c.PID()) // anything the plugin started, while its group is fresh
		return newError(c.typ, KindExited, err, fmt.Sprintf("plugin %s exited: %s", c.typ, c.redact(exit, config)))
	}
	detail := c.redact(st.Message(), config)
	return newError(c.typ, KindPlugin, err, fmt.Sprintf("plugin %s: %s failed: %s", c.typ, op, detail)).withDetail(detail)
}

// waitExit waits up to d for the process to be reaped and describes how it
// ended, with its last words on stderr.
func (c *Client) waitExit(d time.Duration) (string, bool) {
	deadline := time.Now().Add(d)
	for !c.pc.Exited() {
		if time.Now().After(deadline) {
			return "", false
		}
		time.Sleep(10 * time.Millisecond)
	}
	// go-plugin sets Exited under its lock after cmd.Wait returned, so
	// ProcessState is safe to read now.
	how := "unknown status"
	if ps := c.cmd.ProcessState; ps != nil {
		how = ps.String()
	}
	if words := lastWords(c.tail); words != "" {
		how += ": " + words
	}
	return how, true
}

func (c *Client) closedError(op string) error {
	return newError(c.typ, KindClosed, nil, fmt.Sprintf("plugin %s: %s: the plugin was stopped (client closed or server shutting down)", c.typ, op))
}

func (c *Client) malformed(what string, err error) error {
	return newError(c.typ, KindMalformed, err, fmt.Sprintf("malformed %s from plugin %s: %v", what, c.typ, err))
}

// redact removes the secret values of config from a plugin's message, so
// that a plugin not built on the SDK cannot put a secret into a job's
// error either.
func (c *Client) redact(msg string, config json.RawMessage) string {
	if len(config) == 0 || msg == "" {
		return msg
	}
	return sdk.Redact(msg, sdk.SecretValues(c.schema, config))
}

func newError(typ string, kind Kind, err error, msg string) *Error {
	return &Error{Type: typ, Kind: kind, Err: err, msg: msg}
}

func (e *Error) withDetail(d string) *Error {
	e.Detail = d
	return e
}
