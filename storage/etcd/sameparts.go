package etcd

import "reflect"

// sameParts says whether a and b, values of one type, are made of the same
// parts: the KV or Watcher a client makes for itself against the client's
// own, which must be the same gRPC service on the same connection. Structs
// and arrays are compared part by part; pointers by identity, or, where
// they differ, what they point to, down to depth pointers (a client makes
// its KV anew, on a retrying service it makes anew, on a gRPC service it
// makes anew, on its one connection); slices, maps, channels and funcs by
// identity (funcs: only nil ones). Nothing below depth is walked: two gRPC
// connections are never compared, as reflect.DeepEqual compared them,
// reading the state their goroutines change.
func sameParts(a, b reflect.Value, depth int) bool {
	if !a.IsValid() || !b.IsValid() || a.Type() != b.Type() {
		return false
	}
	switch a.Kind() {
	case reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return sameParts(a.Elem(), b.Elem(), depth)
	case reflect.Pointer:
		if a.Pointer() == b.Pointer() {
			return true
		}
		return depth > 0 && !a.IsNil() && !b.IsNil() && sameParts(a.Elem(), b.Elem(), depth-1)
	case reflect.Struct:
		for i := range a.NumField() {
			if !sameParts(a.Field(i), b.Field(i), depth) {
				return false
			}
		}
		return true
	case reflect.Array:
		for i := range a.Len() {
			if !sameParts(a.Index(i), b.Index(i), depth) {
				return false
			}
		}
		return true
	case reflect.Slice:
		return a.Len() == b.Len() && (a.Len() == 0 || a.Pointer() == b.Pointer()) && a.IsNil() == b.IsNil()
	case reflect.Map, reflect.Chan, reflect.UnsafePointer:
		return a.Pointer() == b.Pointer()
	case reflect.Func: // as reflect.DeepEqual: equal only if nil (a code pointer says too little)
		return a.IsNil() && b.IsNil()
	}
	return a.Equal(b) // bools, numbers, strings
}
