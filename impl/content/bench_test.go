package content_test

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stratahq/strata/impl/principal"
	"github.com/stratahq/strata/impl/store/sqlite"
	"github.com/stratahq/strata/impl/testenv"
)

// reportPercentiles adds p50 and p99 of the samples to the benchmark output.
func reportPercentiles(b *testing.B, samples []time.Duration) {
	b.Helper()
	if len(samples) == 0 {
		return
	}
	slices.Sort(samples)
	at := func(q float64) float64 { return float64(samples[int(q*float64(len(samples)-1))].Microseconds()) / 1000 }
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
}

var words = strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu")

// seedItems inserts n notes for userID in one transaction (benchmark set-up
// only; the insert triggers keep the full-text index in sync as in production).
func seedItems(b *testing.B, e *testenv.Env, userID uuid.UUID, n int) {
	b.Helper()
	db := e.App.Store().(*sqlite.Store).DB()
	tx, err := db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	stmt, err := tx.Prepare(`INSERT INTO items (id, user_id, type, title, body, processing_status, created_at, updated_at)
		VALUES (?, ?, 'note', ?, ?, 'processed', ?, ?)`)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		var body strings.Builder
		for j := range 30 {
			body.WriteString(words[(i*7+j*13)%len(words)])
			body.WriteByte(' ')
		}
		if i%1000 == 0 {
			body.WriteString("needle-in-a-haystack")
		}
		ts := start.Add(time.Duration(i) * time.Second).Format("2006-01-02T15:04:05.000000000Z")
		if _, err := stmt.Exec(uuid.NewString(), userID.String(), fmt.Sprintf("note %d", i), body.String(), ts, ts); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkListSearch measures GET /api/content over HTTP for one user with
// 100,000 items: the first page, a rare substring (q matching 100 items), a
// common one (q matching most items) and a type filter.
func BenchmarkListSearch(b *testing.B) {
	e := testenv.New(b, nil)
	u, _ := e.User("bench@example.com", "correct horse", principal.TierPro)
	seedItems(b, e, u.ID, 100_000)
	s := e.SignIn("bench@example.com", "correct horse")
	pat := e.Call("POST", "/api/auth/v1/personal-access-tokens", `{"name":"bench"}`, testenv.Bearer(s.AccessToken)...).JSON(b)["token"].(string)

	for _, q := range []string{"", "?q=needle-in-a", "?q=ALPHA", "?q=ab", "?type=note&limit=100"} {
		b.Run("query="+q, func(b *testing.B) {
			var samples []time.Duration
			for b.Loop() {
				e.Clock.Advance(200 * time.Millisecond) // the pro quota refills: 600/min
				start := time.Now()
				r := e.Call("GET", "/api/content"+q, "", testenv.Bearer(pat)...)
				samples = append(samples, time.Since(start))
				if r.Status != http.StatusOK {
					b.Fatalf("%d %s", r.Status, r.Body)
				}
			}
			reportPercentiles(b, samples)
		})
	}
}

// BenchmarkFanOut measures one user's event reaching 1,000 connected
// WebSocket clients: from the POST that creates the note to the last
// client's receipt, and the memory an idle connection costs (client and
// server together, both in this process).
func BenchmarkFanOut(b *testing.B) {
	const clients = 1000
	e := testenv.New(b, nil)
	e.User("fan@example.com", "correct horse", principal.TierPro)
	s := e.SignIn("fan@example.com", "correct horse")
	pat := e.Call("POST", "/api/auth/v1/personal-access-tokens", `{"name":"bench"}`, testenv.Bearer(s.AccessToken)...).JSON(b)["token"].(string)

	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	conns := make([]*testWS, clients)
	for i := range conns {
		conns[i] = newTestWS(b, e, pat)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perConn := float64(after.HeapInuse+after.StackInuse-before.HeapInuse-before.StackInuse) / clients

	var samples []time.Duration
	for b.Loop() {
		e.Clock.Advance(200 * time.Millisecond)
		var wg sync.WaitGroup
		wg.Add(clients)
		for _, c := range conns {
			c.expect(&wg)
		}
		start := time.Now()
		r := e.Call("POST", "/api/content/notes", `{"body":"fan-out"}`, testenv.Bearer(pat)...)
		if r.Status != http.StatusCreated {
			b.Fatalf("%d %s", r.Status, r.Body)
		}
		wg.Wait()
		samples = append(samples, time.Since(start))
	}
	reportPercentiles(b, samples)
	// After the loop: b.Loop's timer reset clears metrics reported before it.
	b.ReportMetric(perConn/1024, "KiB-per-idle-conn")
	for _, c := range conns {
		c.close()
	}
}

// testWS is a benchmark client that signals each received event.
type testWS struct {
	next chan *sync.WaitGroup
	done chan struct{}
	stop context.CancelFunc
}

func newTestWS(b *testing.B, e *testenv.Env, token string) *testWS {
	conn := dialWith(b, e, "?token="+token, nil)
	ctx, cancel := context.WithCancel(context.Background())
	c := &testWS{next: make(chan *sync.WaitGroup, 1), done: make(chan struct{}), stop: cancel}
	if _, _, err := conn.Read(ctx); err != nil { // ready
		b.Fatal(err)
	}
	go func() {
		defer close(c.done)
		defer conn.CloseNow()
		for {
			_, _, err := conn.Read(ctx)
			if err != nil {
				return
			}
			select {
			case wg := <-c.next:
				wg.Done()
			default:
			}
		}
	}()
	return c
}

func (c *testWS) expect(wg *sync.WaitGroup) { c.next <- wg }

func (c *testWS) close() {
	c.stop()
	<-c.done
}
