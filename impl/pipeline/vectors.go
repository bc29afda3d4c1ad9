package pipeline

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/stratahq/strata/impl/pipeline/textai"
	"github.com/stratahq/strata/impl/store"
)

// Vectors embeds items and finds similar ones: brute-force cosine over the
// user's vectors, which are cached in memory per user (bounded) and
// re-embedded lazily when they are missing or were made by another model.
type Vectors struct {
	store    store.ContentStore
	embedder textai.Embedder
	now      func() time.Time

	mu    sync.Mutex
	users map[uuid.UUID]*userVectors
}

// maxCachedUsers bounds the cache; the least recently used user goes first.
const maxCachedUsers = 256

// lazyEmbedBatch bounds how many missing vectors one request embeds.
const lazyEmbedBatch = 256

type userVectors struct {
	mu        sync.RWMutex
	vecs      map[string][]float32
	lastUsed  time.Time
	checkedAt time.Time // last look for items without a vector
}

// missingCheckInterval is how often a cached user is checked for items
// without a vector (the pipeline stores new ones itself).
const missingCheckInterval = 30 * time.Second

// NewVectors returns the vector index over st with embedder.
func NewVectors(st store.ContentStore, embedder textai.Embedder, now func() time.Time) *Vectors {
	if now == nil {
		now = time.Now
	}
	return &Vectors{store: st, embedder: embedder, now: now, users: map[uuid.UUID]*userVectors{}}
}

// Model is the embedding model in use.
func (v *Vectors) Model() string { return v.embedder.Model() }

// itemText is what gets embedded: title, text and tags.
func itemText(it store.Item, transcript *string) string {
	body := it.Body
	if transcript != nil {
		body = *transcript
	}
	return strings.Join([]string{it.Title, body, strings.Join(it.Tags, " ")}, "\n")
}

// EmbedItem computes an item's vector.
func (v *Vectors) EmbedItem(ctx context.Context, it store.Item, transcript *string) ([]float32, error) {
	vecs, err := v.embedder.Embed(ctx, []string{itemText(it, transcript)})
	if err != nil {
		return nil, err
	}
	if len(vecs) != 1 {
		return nil, fmt.Errorf("embedder returned %d vectors for 1 text", len(vecs))
	}
	return vecs[0], nil
}

// Put stores an item's vector and updates the cache.
func (v *Vectors) Put(ctx context.Context, it store.Item, vec []float32) error {
	err := v.store.PutEmbedding(ctx, store.Embedding{ItemID: it.ID, UserID: it.UserID, Model: v.embedder.Model(),
		Dim: len(vec), Vector: textai.EncodeVector(vec), UpdatedAt: v.now()})
	if err != nil {
		return err
	}
	v.mu.Lock()
	u := v.users[it.UserID]
	v.mu.Unlock()
	if u != nil {
		u.mu.Lock()
		u.vecs[it.ID.String()] = vec
		u.mu.Unlock()
	}
	return nil
}

// forUser returns the user's vectors, loading them and embedding the
// missing ones on first use.
func (v *Vectors) forUser(ctx context.Context, userID uuid.UUID) (*userVectors, error) {
	v.mu.Lock()
	u := v.users[userID]
	if u != nil {
		u.lastUsed = v.now()
	}
	v.mu.Unlock()
	if u == nil {
		stored, err := v.store.Embeddings(ctx, userID, v.embedder.Model())
		if err != nil {
			return nil, err
		}
		u = &userVectors{vecs: make(map[string][]float32, len(stored)), lastUsed: v.now()}
		for _, e := range stored {
			vec, err := textai.DecodeVector(e.Vector)
			if err != nil {
				return nil, fmt.Errorf("stored vector of %s: %w", e.ItemID, err)
			}
			u.vecs[e.ItemID.String()] = vec
		}
		v.mu.Lock()
		if len(v.users) >= maxCachedUsers {
			v.evictOldest()
		}
		v.users[userID] = u
		v.mu.Unlock()
	}
	// Lazily embed items that have no vector of this model yet.
	v.mu.Lock()
	due := v.now().Sub(u.checkedAt) >= missingCheckInterval
	if due {
		u.checkedAt = v.now()
	}
	v.mu.Unlock()
	if !due {
		return u, nil
	}
	missing, err := v.store.ItemsWithoutEmbedding(ctx, userID, v.embedder.Model(), lazyEmbedBatch)
	if err != nil {
		return nil, err
	}
	if len(missing) > 0 {
		texts := make([]string, len(missing))
		for i, it := range missing {
			texts[i] = itemText(it, nil)
		}
		vecs, err := v.embedder.Embed(ctx, texts)
		if err != nil {
			return nil, fmt.Errorf("embed: %w", err)
		}
		for i, it := range missing {
			if err := v.Put(ctx, it, vecs[i]); err != nil && err != store.ErrNotFound {
				return nil, err
			}
		}
	}
	return u, nil
}

func (v *Vectors) evictOldest() {
	var oldest uuid.UUID
	var at time.Time
	for id, u := range v.users {
		if at.IsZero() || u.lastUsed.Before(at) {
			oldest, at = id, u.lastUsed
		}
	}
	delete(v.users, oldest)
}

// Scored is an item with its similarity.
type Scored struct {
	Item       store.Item
	Similarity float64
}

// Related returns the user's items most similar to item id (itself
// excluded), most similar first.
func (v *Vectors) Related(ctx context.Context, userID, id uuid.UUID, limit int) ([]Scored, error) {
	it, err := v.store.GetItem(ctx, userID, id)
	if err != nil {
		return nil, err
	}
	u, err := v.forUser(ctx, userID)
	if err != nil {
		return nil, err
	}
	u.mu.RLock()
	query, ok := u.vecs[id.String()]
	u.mu.RUnlock()
	if !ok {
		if query, err = v.EmbedItem(ctx, it, nil); err != nil {
			return nil, fmt.Errorf("embed: %w", err)
		}
	}
	return v.rank(ctx, userID, u, query, id.String(), limit, "", nil)
}

// Search ranks the user's items by similarity to a natural-language query.
// Items that contain the query as a substring (title, body, summary,
// transcription) are boosted, so exact phrases come first (hybrid search).
func (v *Vectors) Search(ctx context.Context, userID uuid.UUID, q, itemType string, limit int) ([]Scored, int, error) {
	u, err := v.forUser(ctx, userID)
	if err != nil {
		return nil, 0, err
	}
	vecs, err := v.embedder.Embed(ctx, []string{q})
	if err != nil {
		return nil, 0, fmt.Errorf("embed query: %w", err)
	}
	literal, _, err := v.store.ListItems(ctx, store.ItemFilter{UserID: userID, Q: q, Type: itemType, Limit: 100})
	if err != nil {
		return nil, 0, err
	}
	boost := make(map[uuid.UUID]bool, len(literal))
	for _, it := range literal {
		boost[it.ID] = true
	}
	all, err := v.rank(ctx, userID, u, vecs[0], "", 1<<30, itemType, boost)
	if err != nil {
		return nil, 0, err
	}
	var matches []Scored
	for _, s := range all {
		if s.Similarity > searchThreshold || boost[s.Item.ID] {
			matches = append(matches, s)
		}
	}
	return matches[:min(limit, len(matches))], len(matches), nil
}

// searchThreshold drops results that share essentially nothing with the query.
const searchThreshold = 0.05

// substringBoost lifts literal matches above semantic ones.
const substringBoost = 0.25

// rank scores the user's vectors against query, loads the items and
// returns them best first; boosted items get substringBoost (capped at 1).
func (v *Vectors) rank(ctx context.Context, userID uuid.UUID, u *userVectors, query []float32, exclude string, limit int,
	itemType string, boost map[uuid.UUID]bool) ([]Scored, error) {
	u.mu.RLock()
	// Over-fetch: vectors of deleted items may still be cached, and a type
	// filter drops some.
	k := len(u.vecs)
	if itemType == "" && boost == nil {
		k = min(limit+32, len(u.vecs))
	}
	matches := textai.TopK(query, mapSeq(u.vecs), k, exclude)
	u.mu.RUnlock()

	ids := make([]uuid.UUID, 0, len(matches))
	for _, m := range matches {
		if id, err := uuid.Parse(m.ID); err == nil {
			ids = append(ids, id)
		}
	}
	items, err := v.store.GetItems(ctx, userID, ids)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]store.Item, len(items))
	for _, it := range items {
		byID[it.ID.String()] = it
	}
	var out []Scored
	for _, m := range matches {
		it, ok := byID[m.ID]
		if !ok || (itemType != "" && it.Type != itemType) {
			continue
		}
		score := float64(m.Score)
		if boost[it.ID] {
			score = min(1, score+substringBoost)
		}
		out = append(out, Scored{Item: it, Similarity: score})
	}
	slices.SortStableFunc(out, func(a, b Scored) int {
		switch {
		case a.Similarity > b.Similarity:
			return -1
		case a.Similarity < b.Similarity:
			return 1
		}
		return 0
	})
	return out[:min(limit, len(out))], nil
}

func mapSeq(m map[string][]float32) iter.Seq2[string, []float32] {
	return func(yield func(string, []float32) bool) {
		for k, v := range m {
			if !yield(k, v) {
				return
			}
		}
	}
}
