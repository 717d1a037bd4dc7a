package encryption

import "errors"

// ErrConfig is the error of a configuration that does not hold: the
// errors [ParseConfig], [New] and [Rewrite] return for one wrap it.
var ErrConfig = errors.New("encryption: invalid configuration")
