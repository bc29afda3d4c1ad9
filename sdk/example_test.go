package sdk_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"math/big"
	"time"

	"github.com/stratahq/strata/sdk"
)

// Sign in with a password and run a query. Every example runs against a
// live server started in this process (exampleServer); point yours at your
// deployment instead.
func Example() {
	baseURL := exampleServer() // e.g. "http://127.0.0.1:8080"
	ctx := context.Background()

	c, err := sdk.New(baseURL, sdk.WithPassword("ada@example.com", "correct horse battery staple"))
	if err != nil {
		log.Fatal(err)
	}
	res, err := c.Query(ctx, "SELECT 42 AS answer", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Rows[0]["answer"])
	// Output: 42
}

// Scan reads a row into Go values, undoing the JSON encoding of DuckDB
// types: a UBIGINT beyond 2^53 and a DECIMAL arrive as strings.
func ExampleQueryResult_Scan() {
	baseURL := exampleServer()
	ctx := context.Background()
	c, err := sdk.New(baseURL, sdk.WithPassword("ada@example.com", "correct horse battery staple"))
	if err != nil {
		log.Fatal(err)
	}

	res, err := c.Query(ctx, `SELECT 18446744073709551615::UBIGINT AS big, 12.30::DECIMAL(10,2) AS price,
		TIMESTAMP '2026-01-02 03:04:05' AS at, $name AS name`, map[string]any{"name": "Ada"})
	if err != nil {
		log.Fatal(err)
	}
	var (
		huge  uint64
		price big.Rat
		at    time.Time
		name  string
	)
	if err := res.Scan(0, &huge, &price, &at, &name); err != nil {
		log.Fatal(err)
	}
	fmt.Println(huge, price.FloatString(2), at.Format(time.RFC3339), name)
	// Output: 18446744073709551615 12.30 2026-01-02T03:04:05Z Ada
}

// Rows maps every row onto a struct by its json tags.
func ExampleRows() {
	baseURL := exampleServer()
	ctx := context.Background()
	c, err := sdk.New(baseURL, sdk.WithPassword("ada@example.com", "correct horse battery staple"))
	if err != nil {
		log.Fatal(err)
	}

	res, err := c.Query(ctx, "SELECT i AS id, i * 1.5 AS score, 'n' || i AS label FROM range(1, 4) t(i) WHERE i >= ?", sdk.Args(2))
	if err != nil {
		log.Fatal(err)
	}
	type row struct {
		ID    int64   `json:"id"`
		Score float64 `json:"score"`
		Label string  `json:"label"`
	}
	rows, err := sdk.Rows[row](res)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range rows {
		fmt.Printf("%d %.1f %s\n", r.ID, r.Score, r.Label)
	}
	// Output:
	// 2 3.0 n2
	// 3 4.5 n3
}

// Items walks through all of the user's content, a page at a time.
func ExampleClient_Items() {
	baseURL := exampleServer()
	ctx := context.Background()
	c, err := sdk.New(baseURL, sdk.WithPassword("ada@example.com", "correct horse battery staple"))
	if err != nil {
		log.Fatal(err)
	}
	for _, body := range []string{"Buy basil", "Repot the basil", "Water the basil"} {
		if _, err := c.CreateNote(ctx, sdk.NoteCreate{Body: body, Tags: sdk.Ptr([]string{"garden"})}); err != nil {
			log.Fatal(err)
		}
	}

	// Two items per request: the loop fetches the second page when it
	// gets there.
	for item, err := range c.Items(ctx, sdk.ListOptions{PageSize: 2, Query: "basil"}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(item.Title)
	}
	// Output:
	// Water the basil
	// Repot the basil
	// Buy basil
}

// Sync starts a sync of all connectors; WaitSync follows it to the end.
func ExampleClient_WaitSync() {
	baseURL := exampleServer()
	ctx := context.Background()
	c, err := sdk.New(baseURL, sdk.WithPassword("ada@example.com", "correct horse battery staple"))
	if err != nil {
		log.Fatal(err)
	}
	_, err = c.CreateConnector(ctx, sdk.ConnectorCreate{
		Name:   "numbers",
		Type:   "example_numbers", // a demo connector: the integers 1..count
		Config: map[string]any{"count": 5000},
	})
	if err != nil {
		log.Fatal(err)
	}

	job, err := c.Sync(ctx)
	if err != nil {
		log.Fatal(err)
	}
	final, err := c.WaitSync(ctx, job.JobID, func(j sdk.SyncJob) {
		// Called on every change: status, progress (0–100), rows so far.
	})
	if errors.Is(err, sdk.ErrSyncFailed) {
		log.Fatal(err) // err holds the job's error message
	}
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(final.Status, final.Progress)

	res, err := c.Query(ctx, "SELECT count(*) AS n, sum(square) AS total FROM numbers", nil)
	if err != nil {
		log.Fatal(err)
	}
	var n int64
	var total big.Int // HUGEINT beyond 2^53: sent as a string
	if err := res.Scan(0, &n, &total); err != nil {
		log.Fatal(err)
	}
	fmt.Println(n, total.String())
	// Output:
	// completed 100
	// 5000 41679167500
}

// Events delivers the user's change events; the stream reconnects and
// resumes by itself until ctx ends.
func ExampleClient_Events() {
	baseURL := exampleServer()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := sdk.New(baseURL, sdk.WithPassword("ada@example.com", "correct horse battery staple"))
	if err != nil {
		log.Fatal(err)
	}

	events, err := c.Events(ctx, sdk.EventsOptions{})
	if err != nil {
		log.Fatal(err)
	}
	note, err := c.CreateNote(ctx, sdk.NoteCreate{Body: "Pick up the seed trays"})
	if err != nil {
		log.Fatal(err)
	}
	for ev := range events {
		if ev.Type == sdk.EventError {
			log.Fatal(ev.Err)
		}
		fmt.Println(ev.Type, ev.Item.Title, ev.Item.ID == note.ID)
		if ev.Type == sdk.ContentProcessed {
			fmt.Println(ev.Item.ProcessingStatus, len(*ev.Item.AiSummary) > 0)
			cancel() // ends the stream: the channel closes
		}
	}
	// Output:
	// content:created Pick up the seed trays true
	// content:processed Pick up the seed trays true
	// processed true
}

// A personal access token lets a program (a CI job, an integration) act as
// the user without a password. It is created with a signed-in session, and
// its secret is shown only once.
func ExampleClient_CreatePersonalAccessToken() {
	baseURL := exampleServer()
	ctx := context.Background()
	c, err := sdk.New(baseURL, sdk.WithPassword("ada@example.com", "correct horse battery staple"))
	if err != nil {
		log.Fatal(err)
	}

	created, err := c.CreatePersonalAccessToken(ctx, "ci", time.Now().Add(90*24*time.Hour))
	if err != nil {
		log.Fatal(err)
	}
	// Store created.Token as a secret of the CI job; it cannot be shown again.
	ci, err := sdk.New(baseURL, sdk.WithPersonalAccessToken(created.Token))
	if err != nil {
		log.Fatal(err)
	}
	user, err := ci.User(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(user.Email)

	if err := c.RevokePersonalAccessToken(ctx, created.ID); err != nil {
		log.Fatal(err)
	}
	_, err = ci.User(ctx)
	fmt.Println(errors.Is(err, sdk.ErrUnauthenticated))
	// Output:
	// ada@example.com
	// true
}
