package postgres

// WithUnorderedRevisions breaks the store on purpose, for the test that
// must catch it: revisions come from a sequence, without the revision
// counter's lock, so that transactions may commit out of the order of
// their revisions, as kine's do; and delay, if not nil, is called between
// a transaction's revisions being assigned and its commit.
func WithUnorderedRevisions(delay func(revs []int64)) Option {
	return func(c *config) {
		c.unorderedRevisions = true
		c.beforeCommit = delay
	}
}

// WithBeforeCommit calls f between a transaction's revisions being
// assigned and its commit, without breaking anything.
func WithBeforeCommit(f func(revs []int64)) Option {
	return func(c *config) { c.beforeCommit = f }
}
