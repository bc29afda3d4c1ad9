package realtime_test

import (
	"testing"

	"github.com/google/uuid"

	"github.com/stratahq/strata/impl/realtime"
)

func TestPublishNeverBlocksAndDropsTheSlowSubscriber(t *testing.T) {
	t.Parallel()
	hub := realtime.NewHub(2)
	user, other := uuid.New(), uuid.New()
	slow := hub.Subscribe(user)
	fast := hub.Subscribe(user)
	stranger := hub.Subscribe(other)

	var got []int64
	for id := int64(1); id <= 5; id++ {
		hub.Publish(realtime.Event{ID: id, UserID: user, Message: []byte("m")}) // returns although slow never reads
		ev := <-fast.Events()
		got = append(got, ev.ID)
	}
	if len(got) != 5 || got[4] != 5 {
		t.Fatalf("fast subscriber got %v", got)
	}
	if !slow.Dropped() {
		t.Fatal("slow subscriber not dropped")
	}
	n := 0
	for range slow.Events() { // closed after the events it could hold
		n++
	}
	if n != 2 {
		t.Fatalf("slow subscriber kept %d events, want its buffer of 2", n)
	}
	select {
	case ev := <-stranger.Events():
		t.Fatalf("another user's subscriber received %v", ev)
	default:
	}
	fast.Close()
	fast.Close() // idempotent
	if hub.Subscribers(user) != 1 {
		t.Fatalf("subscribers after closing one: %d", hub.Subscribers(user))
	}
	slow.Close() // a dropped subscription is unregistered by its owner
	if hub.Subscribers(user) != 0 {
		t.Fatalf("subscribers after close: %d", hub.Subscribers(user))
	}
}
