package watch

import "errors"

// ErrStopped is what Next and WaitFor return once Hub.Run has returned: the
// caches no longer follow the store, so no watch can go on.
var ErrStopped = errors.New("watch: the hub has stopped")
