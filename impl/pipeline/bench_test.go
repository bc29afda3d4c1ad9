package pipeline_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stratahq/strata/impl/pipeline"
	"github.com/stratahq/strata/impl/pipeline/textai"
	"github.com/stratahq/strata/impl/principal"
	"github.com/stratahq/strata/impl/server"
	"github.com/stratahq/strata/impl/store"
	"github.com/stratahq/strata/impl/testenv"
)

var benchWords = []string{"garden", "tomato", "budget", "savings", "deploy", "server", "bread", "oven", "invoice", "soil",
	"compost", "pasta", "garlic", "kubernetes", "release", "loan", "interest", "seedling", "recipe", "flour"}

// BenchmarkRelated measures GET /api/content/{id}/related over HTTP for a
// user with 10,000 embedded items (vectors cached in memory after the first
// request), and the vector ranking alone.
func BenchmarkRelated(b *testing.B) {
	// The hashed embedder, so that set-up writes 10,000 vectors in a second;
	// ranking does not depend on the model (both give 512 values).
	e := testenv.New(b, func(cfg *server.Config) { cfg.Pipeline.HashedEmbeddings = true })
	u, _ := e.User("rel@example.com", "correct horse", principal.TierPro)
	s := e.SignIn("rel@example.com", "correct horse")
	pat := e.Call("POST", "/api/auth/v1/personal-access-tokens", `{"name":"bench"}`, testenv.Bearer(s.AccessToken)...).JSON(b)["token"].(string)

	// 10,000 items with stored vectors, written through the store (set-up).
	ctx := context.Background()
	st := e.App.Store()
	emb := textai.NewLocalEmbedder(textai.DefaultDim)
	vectors := pipeline.NewVectors(st, emb, nil, slog.Default())
	b.Cleanup(vectors.Close)
	var first uuid.UUID
	for i := range 10_000 {
		text := ""
		for j := range 12 {
			text += benchWords[(i*3+j*7)%len(benchWords)] + " "
		}
		it := store.Item{ID: uuid.New(), UserID: u.ID, Type: "note", Title: fmt.Sprint("n", i), Body: text, Tags: []string{},
			AITags: []string{}, ProcessingStatus: "processed", CreatedAt: time.Now(), UpdatedAt: time.Now()}
		if _, err := st.CreateItem(ctx, it, "content:created", func(store.Item) ([]byte, error) { return []byte("{}"), nil }); err != nil {
			b.Fatal(err)
		}
		vec, err := vectors.EmbedItem(ctx, it, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := vectors.Put(ctx, it, vec); err != nil {
			b.Fatal(err)
		}
		if i == 0 {
			first = it.ID
		}
	}
	b.Run("http", func(b *testing.B) {
		var samples []time.Duration
		for b.Loop() {
			e.Clock.Advance(200 * time.Millisecond) // content quota refills
			start := time.Now()
			r := e.Call("GET", "/api/content/"+first.String()+"/related?limit=10", "", testenv.Bearer(pat)...)
			samples = append(samples, time.Since(start))
			if r.Status != 200 {
				b.Fatalf("%d %s", r.Status, r.Body)
			}
		}
		slices.Sort(samples)
		b.ReportMetric(float64(samples[len(samples)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(samples[len(samples)*99/100].Microseconds())/1000, "p99-ms")
	})
	b.Run("rank-only", func(b *testing.B) {
		for b.Loop() {
			if _, err := vectors.Related(ctx, u.ID, first, 10); err != nil {
				b.Fatal(err)
			}
		}
	})
}
