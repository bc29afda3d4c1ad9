package pipeline_test

import (
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stratahq/strata/impl/principal"
	"github.com/stratahq/strata/impl/server"
	"github.com/stratahq/strata/impl/store"
	"github.com/stratahq/strata/impl/testenv"
)

var topics = map[string][]string{
	"cooking": {
		"Simmer the tomato sauce with garlic and basil for an hour, then toss it with fresh pasta and parmesan for dinner.",
		"Bake the sourdough loaf in a hot oven; the crust should darken and the bread sound hollow when tapped.",
		"Marinate the chicken overnight in yogurt, lemon and spices, then grill it and serve with rice and salad.",
		"Whisk eggs with sugar until pale, fold in the flour and bake the sponge cake for a birthday dessert.",
	},
	"gardening": {
		"Prune the rose bushes in late winter and spread compost and mulch over the flower beds.",
		"Water the seedlings in the greenhouse every morning and repot the plants once their roots fill the pots.",
		"Dig the vegetable garden, add manure to the soil and sow carrots, beans and lettuce in rows.",
		"Aphids are on the apple tree again; spray the leaves and check the branches for pests and fungus.",
	},
	"money": {
		"Set a monthly budget for rent, groceries and bills, and transfer a fixed amount into savings on payday.",
		"Move the emergency fund into a high interest savings account at the bank this week.",
		"Review the credit card statement, track spending and cancel subscriptions to cut costs.",
		"Pay down the loan with the highest interest rate first, then invest the extra money each month.",
	},
}

type related struct {
	ID         string  `json:"id"`
	Similarity float64 `json:"similarity"`
}

func TestRelatedAndSearch(t *testing.T) {
	t.Parallel()
	e := testenv.New(t, nil)
	e.User("rel@example.com", "correct horse", principal.TierPro)
	s := e.SignIn("rel@example.com", "correct horse")
	auth := testenv.Bearer(s.AccessToken)
	topicOf := map[string]string{}
	var ids []string
	for topic, notes := range topics {
		for _, n := range notes {
			body, _ := json.Marshal(map[string]string{"body": n})
			var it item
			e.Call("POST", "/api/content/notes", string(body), auth...).Decode(t, &it)
			topicOf[it.ID] = topic
			ids = append(ids, it.ID)
		}
	}
	for _, id := range ids {
		if it := waitProcessed(t, e, s.AccessToken, id); it.ProcessingStatus != "processed" {
			t.Fatalf("item %s: %s %v", id, it.ProcessingStatus, it.ProcessingError)
		}
	}

	hits, total := 0, 0
	for _, id := range ids {
		var page struct{ Data []related }
		r := e.Call("GET", "/api/content/"+id+"/related?limit=3", "", auth...)
		if r.Status != 200 {
			t.Fatalf("related: %d %s", r.Status, r.Body)
		}
		r.Decode(t, &page)
		if len(page.Data) != 3 {
			t.Fatalf("related of %s: %d items", id, len(page.Data))
		}
		for i, rel := range page.Data {
			if rel.ID == id {
				t.Fatal("an item is related to itself")
			}
			if i > 0 && rel.Similarity > page.Data[i-1].Similarity {
				t.Fatal("related items are not sorted by similarity")
			}
			if rel.Similarity < -1 || rel.Similarity > 1 {
				t.Fatalf("similarity %v out of range", rel.Similarity)
			}
			total++
			if topicOf[rel.ID] == topicOf[id] {
				hits++
			}
		}
	}
	precision := float64(hits) / float64(total)
	// The relevance figure of the local embedders is measured on a 48-note
	// corpus in textai; this end-to-end check guards the wiring of the
	// default one, the sentence encoder (0.97 here).
	t.Logf("precision@3 on 12 notes in 3 topics: %.2f", precision)
	if precision < 0.8 {
		t.Fatalf("precision@3 = %.2f, want ≥ 0.8", precision)
	}

	for query, want := range map[string]string{
		"what should I cook for dinner tonight": "cooking",
		"my plants need care in the garden":     "gardening",
		"how can I spend less and save more":    "money",
	} {
		var res struct {
			Data  []related
			Total int
		}
		r := e.Call("GET", "/api/content/search?q="+url.QueryEscape(query), "", auth...)
		if r.Status != 200 {
			t.Fatalf("search: %d %s", r.Status, r.Body)
		}
		r.Decode(t, &res)
		if len(res.Data) == 0 || topicOf[res.Data[0].ID] != want || res.Total != len(res.Data) {
			t.Errorf("search %q: first result of topic %q, want %q (%d results)", query, topicOf[firstID(res.Data)], want, len(res.Data))
		}
		// Results end where relevance does: most are of the query's topic.
		onTopic := 0
		for _, d := range res.Data {
			if topicOf[d.ID] == want {
				onTopic++
			}
		}
		t.Logf("search %q: %d results, %d of topic %s", query, len(res.Data), onTopic, want)
		if 2*onTopic <= len(res.Data) {
			t.Errorf("search %q: %d of %d results are of topic %s", query, onTopic, len(res.Data), want)
		}
	}
	// A literal phrase is boosted to the top, whatever its meaning suggests:
	// "check the branches" of the note on apple trees could be about banks.
	var res struct{ Data []related }
	e.Call("GET", "/api/content/search?q="+url.QueryEscape("check the branches"), "", auth...).Decode(t, &res)
	if len(res.Data) < 2 || topicOf[res.Data[0].ID] != "gardening" || res.Data[0].Similarity-res.Data[1].Similarity < 0.1 {
		t.Errorf("literal search: %+v", res.Data)
	}

	// Errors: unknown item, another user's item, bad limits, the gate.
	testenv.ExpectError(t, e.Call("GET", "/api/content/"+uuid.NewString()+"/related", "", auth...), 404, "not_found")
	other := e.NewUser("other@example.com")
	testenv.ExpectError(t, e.Call("GET", "/api/content/"+ids[0]+"/related", "", testenv.Bearer(other.AccessToken)...), 404, "not_found")
	testenv.ExpectError(t, e.Call("GET", "/api/content/"+ids[0]+"/related?limit=51", "", auth...), 400, "validation_error")
	testenv.ExpectError(t, e.Call("GET", "/api/content/search", "", auth...), 400, "validation_error")
	testenv.ExpectError(t, e.Call("GET", "/api/content/search?q="+strings.Repeat("x", 1001), "", auth...), 400, "validation_error")
	var otherRes struct{ Data []related }
	e.Call("GET", "/api/content/search?q=tomato", "", testenv.Bearer(other.AccessToken)...).Decode(t, &otherRes)
	if len(otherRes.Data) != 0 {
		t.Fatalf("another user's search found %d of this user's items", len(otherRes.Data))
	}
	tenant := uuid.MustParse(s.User.AppMetadata.TenantID)
	if err := e.App.Auth().SetTenantFeature(context.Background(), tenant, "content_search", false); err != nil {
		t.Fatal(err)
	}
	testenv.ExpectError(t, e.Call("GET", "/api/content/search?q=tomato", "", auth...), 403, "FEATURE_GATED")
}

func firstID(rs []related) string {
	if len(rs) == 0 {
		return ""
	}
	return rs[0].ID
}

// TestVectorsOfAnotherModelAreReplaced changes the embedding model under
// stored items: the server restarts with the sentence encoder on items
// embedded by the hashed embedder. Related items must come back once the
// background backfill has embedded them again, with the new model's vectors
// in the store.
func TestVectorsOfAnotherModelAreReplaced(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	first := testenv.New(t, func(c *server.Config) { c.DataDir = dataDir; c.Pipeline.HashedEmbeddings = true })
	s := first.NewUser("model@example.com")
	var ids []string
	for _, n := range slices.Concat(topics["cooking"][:2], topics["money"][:2]) {
		body, _ := json.Marshal(map[string]string{"body": n})
		var it item
		first.Call("POST", "/api/content/notes", string(body), testenv.Bearer(s.AccessToken)...).Decode(t, &it)
		waitProcessed(t, first, s.AccessToken, it.ID)
		ids = append(ids, it.ID)
	}
	userID := uuid.MustParse(s.User.ID)
	if n := len(storedVectors(t, first, userID, "use-lite-en-v1")); n != 0 {
		t.Fatalf("%d sentence-encoder vectors before the switch", n)
	}
	first.Srv.Close()
	if err := first.App.Close(); err != nil {
		t.Fatal(err)
	}

	second := testenv.New(t, func(c *server.Config) { c.DataDir = dataDir })
	tokens := second.SignIn("model@example.com", "correct horse")
	deadline := time.Now().Add(60 * time.Second)
	for {
		second.Clock.Advance(time.Second) // the content quota refills
		var page struct{ Data []related }
		r := second.Call("GET", "/api/content/"+ids[0]+"/related?limit=3", "", testenv.Bearer(tokens.AccessToken)...)
		if r.Status != 200 {
			t.Fatalf("related: %d %s", r.Status, r.Body)
		}
		r.Decode(t, &page)
		if len(page.Data) == 3 {
			if page.Data[0].ID != ids[1] {
				t.Errorf("the other cooking note is not the most related: %+v", page.Data)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("related items still %d after 60 s", len(page.Data))
		}
		time.Sleep(50 * time.Millisecond) // polling interval
	}
	if n := len(storedVectors(t, second, userID, "use-lite-en-v1")); n != len(ids) {
		t.Fatalf("%d sentence-encoder vectors stored, want %d", n, len(ids))
	}
}

// storedVectors returns the user's stored vectors of model.
func storedVectors(t *testing.T, e *testenv.Env, userID uuid.UUID, model string) []store.Embedding {
	t.Helper()
	vecs, err := e.App.Store().Embeddings(context.Background(), userID, model)
	if err != nil {
		t.Fatal(err)
	}
	return vecs
}
