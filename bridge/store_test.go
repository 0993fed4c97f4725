package bridge

import (
	"time"

	"github.com/eddy-streams/eddy/stream"
)

// The Store methods Direct Get batches and multi_last added, for the
// consumer tests' lockedStore (leaf_test.go).

func (s *lockedStore) Scan(name string, from uint64, fn func(stream.SeqEntry) bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.f.Scan(name, from, fn)
}

func (s *lockedStore) SeqFromTime(name string, t time.Time) (uint64, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.f.SeqFromTime(name, t)
}

func (s *lockedStore) Subjects(name string, max int) ([]string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.f.Subjects(name, max)
}
