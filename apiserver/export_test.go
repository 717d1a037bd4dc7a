package apiserver

// CacheWaits is how often s's writes have waited for its watch cache.
func CacheWaits(s *Server) int64 { return s.cacheWaits.Load() }
