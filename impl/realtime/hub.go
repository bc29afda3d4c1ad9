// Package realtime pushes content change events to WebSocket clients: a hub
// that fans events out per user without ever blocking the producer, and the
// WebSocket endpoint (authentication handshake, replay from a durable log,
// pings, slow-consumer disconnect, token renewal and expiry).
//
// It imports nothing else of Strata: authentication and the event log come in
// through the Authenticator and EventLog interfaces.
package realtime

import (
	"sync"

	"github.com/google/uuid"
)

// DefaultBuffer is how many events a subscriber may fall behind before it is
// dropped (DECISIONS.md: 256).
const DefaultBuffer = 256

// Event is one message for one user: its log id and the encoded message.
type Event struct {
	ID     int64
	UserID uuid.UUID
	// Message is the complete JSON text frame to send.
	Message []byte
}

// Hub fans events out to the subscriptions of their user. Publish never
// blocks: a subscriber whose buffer is full is dropped instead.
type Hub struct {
	buffer int

	mu   sync.RWMutex
	subs map[uuid.UUID]map[*Subscription]struct{}
}

// NewHub returns a hub whose subscribers may fall buffer events behind
// (DefaultBuffer when buffer <= 0).
func NewHub(buffer int) *Hub {
	if buffer <= 0 {
		buffer = DefaultBuffer
	}
	return &Hub{buffer: buffer, subs: map[uuid.UUID]map[*Subscription]struct{}{}}
}

// Subscription receives one user's events.
type Subscription struct {
	hub    *Hub
	userID uuid.UUID
	ch     chan Event

	mu      sync.Mutex
	closed  bool
	dropped bool
}

// Subscribe registers a subscription for userID's events.
func (h *Hub) Subscribe(userID uuid.UUID) *Subscription {
	s := &Subscription{hub: h, userID: userID, ch: make(chan Event, h.buffer)}
	h.mu.Lock()
	defer h.mu.Unlock()
	set := h.subs[userID]
	if set == nil {
		set = map[*Subscription]struct{}{}
		h.subs[userID] = set
	}
	set[s] = struct{}{}
	return s
}

// Publish delivers events to their users' subscriptions, in order. It never
// waits: a subscription that cannot take an event is dropped (its channel is
// closed and Dropped reports true).
func (h *Hub) Publish(events ...Event) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	for _, ev := range events {
		for s := range h.subs[ev.UserID] {
			s.offer(ev)
		}
	}
}

func (s *Subscription) offer(ev Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	select {
	case s.ch <- ev:
	default:
		s.dropped = true
		s.closed = true
		close(s.ch)
	}
}

// Events is the subscription's stream; it is closed when the subscription
// is dropped or closed.
func (s *Subscription) Events() <-chan Event { return s.ch }

// Dropped reports whether the subscriber fell too far behind.
func (s *Subscription) Dropped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped
}

// Close unregisters the subscription.
func (s *Subscription) Close() {
	s.hub.mu.Lock()
	if set := s.hub.subs[s.userID]; set != nil {
		delete(set, s)
		if len(set) == 0 {
			delete(s.hub.subs, s.userID)
		}
	}
	s.hub.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.ch)
	}
}

// Subscribers returns how many subscriptions userID has (for tests and metrics).
func (h *Hub) Subscribers(userID uuid.UUID) int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.subs[userID])
}
