package pipeline

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/stratahq/strata/impl/pipeline/textai"
	"github.com/stratahq/strata/impl/store"
)

// Vectors embeds items and finds similar ones: brute-force cosine over the
// user's vectors, which are cached in memory per user (bounded). Items
// without a vector of the current model (after the model changed, or from a
// backup) are embedded in the background, a batch at a time, from the first
// request that touches their user on; until then they are missing from
// related items and search.
type Vectors struct {
	store    store.ContentStore
	embedder textai.Embedder
	now      func() time.Time
	logger   *slog.Logger

	// background is cancelled by Close; backfills run under it.
	background context.Context
	stop       context.CancelFunc
	backfills  sync.WaitGroup

	mu    sync.Mutex
	users map[uuid.UUID]*userVectors
}

// maxCachedUsers bounds the cache; the least recently used user goes first.
const maxCachedUsers = 256

// backfillBatch is how many missing vectors a backfill embeds at a time.
const backfillBatch = 32

type userVectors struct {
	mu        sync.RWMutex
	vecs      map[string][]float32
	lastUsed  time.Time
	checkedAt time.Time // last look for items without a vector
	filling   bool      // a backfill runs for this user
}

// missingCheckInterval is how often a cached user is checked for items
// without a vector (the pipeline stores new ones itself).
const missingCheckInterval = 30 * time.Second

// NewVectors returns the vector index over st with embedder. Close stops its
// background work.
func NewVectors(st store.ContentStore, embedder textai.Embedder, now func() time.Time, logger *slog.Logger) *Vectors {
	if now == nil {
		now = time.Now
	}
	bg, stop := context.WithCancel(context.Background())
	return &Vectors{store: st, embedder: embedder, now: now, logger: logger, background: bg, stop: stop,
		users: map[uuid.UUID]*userVectors{}}
}

// Close stops the backfills and waits for them; none starts afterwards.
func (v *Vectors) Close() {
	v.mu.Lock()
	v.stop() // under v.mu: no backfill is added after this
	v.mu.Unlock()
	v.backfills.Wait()
}

// Model is the embedding model in use.
func (v *Vectors) Model() string { return v.embedder.Model() }

// itemText is what gets embedded: title, text and tags; "" when the item
// has no text at all.
func itemText(it store.Item, transcript *string) string {
	body := it.Body
	if transcript != nil {
		body = *transcript
	}
	text := strings.Join([]string{it.Title, body, strings.Join(it.Tags, " ")}, "\n")
	if strings.TrimSpace(text) == "" {
		return ""
	}
	return text
}

// EmbedItem computes an item's vector; nil when the item has no text (a
// silent voice note, a photo without caption), which is stored as such and
// ranks nowhere: an empty text is not similar to anything.
func (v *Vectors) EmbedItem(ctx context.Context, it store.Item, transcript *string) ([]float32, error) {
	text := itemText(it, transcript)
	if text == "" {
		return nil, nil
	}
	vecs, err := v.embedder.Embed(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	if len(vecs) != 1 {
		return nil, fmt.Errorf("embedder returned %d vectors for 1 text", len(vecs))
	}
	return vecs[0], nil
}

// Put stores an item's vector (nil: the item has nothing to embed) and
// updates the cache.
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
		if ranks(vec) {
			u.vecs[it.ID.String()] = vec
		} else {
			delete(u.vecs, it.ID.String())
		}
		u.mu.Unlock()
	}
	return nil
}

// ranks reports whether a vector takes part in ranking: the zero vector
// (no text, or only stop words for the hashed embedder) is similar to
// nothing.
func ranks(vec []float32) bool {
	for _, x := range vec {
		if x != 0 {
			return true
		}
	}
	return false
}

// forUser returns the user's vectors, loading them on first use, and starts
// a backfill of the items without a vector when one is due.
func (v *Vectors) forUser(ctx context.Context, userID uuid.UUID) (*userVectors, error) {
	// A user's vectors are loaded once: the first caller puts the entry in
	// the cache and holds its lock while loading, so that concurrent
	// readers wait for the load and a concurrent Put lands after it.
	v.mu.Lock()
	u := v.users[userID]
	loading := u == nil
	if loading {
		if len(v.users) >= maxCachedUsers {
			v.evictOldest()
		}
		u = &userVectors{vecs: map[string][]float32{}}
		v.users[userID] = u
		u.mu.Lock()
	}
	u.lastUsed = v.now()
	v.mu.Unlock()
	if loading {
		err := v.load(ctx, userID, u)
		if err != nil {
			clear(u.vecs)
			v.mu.Lock()
			if v.users[userID] == u {
				delete(v.users, userID)
			}
			v.mu.Unlock()
		}
		u.mu.Unlock()
		if err != nil {
			return nil, err
		}
	}
	// Items without a vector of this model are embedded in the background:
	// the sentence encoder takes a tenth of a second per item, too long to
	// make a request wait for a whole backlog.
	v.mu.Lock()
	due := v.now().Sub(u.checkedAt) >= missingCheckInterval && !u.filling && v.background.Err() == nil
	if due {
		u.checkedAt = v.now()
		u.filling = true
		v.backfills.Add(1)
	}
	v.mu.Unlock()
	if due {
		go v.backfill(userID, u)
	}
	return u, nil
}

// backfill embeds the user's items that have no vector of this model, a
// batch at a time, until there are none left, an error occurs (the next
// check retries) or Close is called.
func (v *Vectors) backfill(userID uuid.UUID, u *userVectors) {
	defer v.backfills.Done()
	defer func() {
		v.mu.Lock()
		u.filling = false
		v.mu.Unlock()
	}()
	ctx := v.background
	done := 0
	for ctx.Err() == nil {
		missing, err := v.store.ItemsWithoutEmbedding(ctx, userID, v.embedder.Model(), backfillBatch)
		if err != nil || len(missing) == 0 {
			if err != nil && ctx.Err() == nil {
				v.logger.Error("find items without a vector", "user_id", userID, "err", err)
			}
			break
		}
		// Items without text are stored as such (nil), the others embedded
		// in one batch.
		var texts []string
		vecs := make([][]float32, len(missing))
		for _, it := range missing {
			if text := itemText(it, nil); text != "" {
				texts = append(texts, text)
			}
		}
		embedded, err := v.embedder.Embed(ctx, texts)
		if err == nil && len(embedded) != len(texts) {
			err = fmt.Errorf("embedder returned %d vectors for %d texts", len(embedded), len(texts))
		}
		if err != nil {
			if ctx.Err() == nil {
				v.logger.Error("embed items without a vector", "user_id", userID, "err", err)
			}
			break
		}
		for i, it := range missing {
			if itemText(it, nil) != "" {
				vecs[i], embedded = embedded[0], embedded[1:]
			}
		}
		for i, it := range missing {
			if err := v.Put(ctx, it, vecs[i]); err != nil && !errors.Is(err, store.ErrNotFound) {
				if ctx.Err() == nil {
					v.logger.Error("store a vector", "item_id", it.ID, "err", err)
				}
				return
			}
		}
		done += len(missing)
	}
	if done > 0 {
		v.logger.Info("embedded items that had no vector", "user_id", userID, "items", done, "model", v.embedder.Model())
	}
}

// load reads the user's stored vectors of this model into u (locked).
func (v *Vectors) load(ctx context.Context, userID uuid.UUID, u *userVectors) error {
	stored, err := v.store.Embeddings(ctx, userID, v.embedder.Model())
	if err != nil {
		return err
	}
	for _, e := range stored {
		vec, err := textai.DecodeVector(e.Vector)
		if err != nil {
			return fmt.Errorf("stored vector of %s: %w", e.ItemID, err)
		}
		if ranks(vec) {
			u.vecs[e.ItemID.String()] = vec
		}
	}
	return nil
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
	if _, err := v.store.GetItem(ctx, userID, id); err != nil {
		return nil, err // another user's or unknown item: 404
	}
	u, err := v.forUser(ctx, userID)
	if err != nil {
		return nil, err
	}
	u.mu.RLock()
	query, ok := u.vecs[id.String()]
	u.mu.RUnlock()
	if !ok {
		// No vector yet (the pipeline has not reached the item) or nothing
		// to embed: no related items, as the contract says.
		return nil, nil
	}
	return v.rank(ctx, userID, u, query, id.String(), limit, "", nil)
}

// Search ranks the user's items by similarity to a natural-language query.
// Items that contain the query as a substring (title, body, summary,
// transcription) are boosted, so exact phrases come first (hybrid search);
// other items below the embedder's minimum relevance (textai.Calibrated)
// are left out.
func (v *Vectors) Search(ctx context.Context, userID uuid.UUID, q, itemType string, limit int) ([]Scored, int, error) {
	u, err := v.forUser(ctx, userID)
	if err != nil {
		return nil, 0, err
	}
	vecs, err := v.embedder.Embed(ctx, []string{q})
	if err != nil {
		return nil, 0, fmt.Errorf("embed query: %w", err)
	}
	// Literal matches are boosted for queries of three characters or more:
	// one or two characters occur in nearly every item.
	boost := map[uuid.UUID]bool{}
	if utf8.RuneCountInString(strings.TrimSpace(q)) >= minLiteralQuery {
		literal, _, err := v.store.ListItems(ctx, store.ItemFilter{UserID: userID, Q: q, Type: itemType, Limit: 100})
		if err != nil {
			return nil, 0, err
		}
		for _, it := range literal {
			boost[it.ID] = true
		}
	}
	all, err := v.rank(ctx, userID, u, vecs[0], "", 1<<30, itemType, boost)
	if err != nil {
		return nil, 0, err
	}
	floor := defaultMinRelevance
	if c, ok := v.embedder.(textai.Calibrated); ok {
		floor = c.MinRelevance()
	}
	var matches []Scored
	for _, s := range all {
		if s.Similarity > floor || boost[s.Item.ID] {
			matches = append(matches, s)
		}
	}
	return matches[:min(limit, len(matches))], len(matches), nil
}

// minLiteralQuery is the shortest query whose literal matches are boosted.
const minLiteralQuery = 3

// defaultMinRelevance drops search results that share essentially nothing
// with the query, for embedders that do not know their own scale
// (textai.Calibrated).
const defaultMinRelevance = 0.05

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
