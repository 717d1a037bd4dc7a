package storedvalue

// MetaEnd is where v's encoder said metadata closes, -1 if it did not.
func MetaEnd(v Value) int { return v.metaEnd }
