// Package faulty wraps a storage backend and makes chosen calls fail, wait,
// or hang, to prove from the outside what kapi answers when its store
// misbehaves.
//
// # Faults
//
// [Store.Inject] arms a [Fault]: which operations it strikes, how many times,
// and what it does to them: return an error, wait first, hang until the
// caller's context ends. A write may be struck after it has been applied to
// the wrapped store (AfterWrite): the caller then gets an error marked
// [storage.ErrOutcomeUnknown] although the write happened, which is what a
// real store answers when its connection breaks between the two.
//
// # Watches
//
// [Store.BreakWatches] ends every watch open through the wrapper with an
// error event, as a store whose stream broke does; a watch fault (Ops
// including Watch) fails the Watch calls that follow.
//
// # Use
//
// The wrapper is for tests: the storagetest suite runs its fault cases
// through it on every backend. It passes every call it does not strike to
// the wrapped store unchanged, and forwards Compact when the wrapped store
// has it.
package faulty
