package memory

// HeldBytes reports what s counts against its byte budget: the bytes of the
// values it holds only for history.
func HeldBytes(s *Store) int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.heldBytes
}
