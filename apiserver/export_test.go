package apiserver

import "context"

// CacheWaits is how often s's writes have waited for its watch cache.
func CacheWaits(s *Server) int64 { return s.cacheWaits.Load() }

// WaitForCache waits until s's watch caches reflect revision rev.
func WaitForCache(s *Server, rev int64) { _ = s.hub.WaitFor(context.Background(), rev) }
