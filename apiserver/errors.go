package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/patch"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/validation"
	"github.com/kapi-dev/kapi/watch"
)

// StatusError is an error that carries the Status to answer with. Hooks
// return one to choose their response; any other error from a hook is a 500.
type StatusError struct {
	Status kapi.Status
}

func (e *StatusError) Error() string { return e.Status.Message }

// NewStatusError makes a StatusError with the given code, reason and message.
func NewStatusError(code int, reason kapi.StatusReason, message string) *StatusError {
	return &StatusError{kapi.Status{
		TypeMeta: kapi.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   kapi.StatusFailure,
		Code:     int32(code),
		Reason:   reason,
		Message:  message,
	}}
}

func badRequest(format string, args ...any) *StatusError {
	return NewStatusError(http.StatusBadRequest, kapi.StatusReasonBadRequest, fmt.Sprintf(format, args...))
}

// about gives e the details kube's errors about the object name of r carry.
func (r *resource) about(e *StatusError, name string) *StatusError {
	e.Status.Details = &kapi.StatusDetails{Name: name, Group: r.Group, Kind: r.Plural}
	return e
}

// invalidObject is kube-apiserver's Conflict when its storage refuses a
// write to the object name at key (a StorageError of code 4), saying why.
func (r *resource) invalidObject(name, key, why string) *StatusError {
	return r.about(NewStatusError(http.StatusConflict, kapi.StatusReasonConflict, fmt.Sprintf(
		"Operation cannot be fulfilled on %s %q: StorageError: invalid object, Code: 4, Key: %s, ResourceVersion: 0, AdditionalErrorMsg: %s",
		r.qualifiedResource(), name, key, why)), name)
}

// target is what a request is about, for the details of its errors.
type target struct {
	res  *resource // nil outside a registered resource
	name string
}

// statusOf is the one mapping from an error to the Status a client receives.
func statusOf(err error, t target) kapi.Status {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Status
	}
	var fe FieldErrors
	if errors.As(err, &fe) {
		return invalid(t, fe).Status
	}
	qualified, group := "", ""
	if t.res != nil {
		qualified, group = t.res.qualifiedResource(), t.res.Group
	}
	withDetails := func(e *StatusError) kapi.Status {
		e.Status.Details = &kapi.StatusDetails{Name: t.name, Group: group}
		if t.res != nil {
			e.Status.Details.Kind = t.res.Plural
		}
		return e.Status
	}
	var tooLarge *http.MaxBytesError
	var corrupt *corruptObject
	var conflict *patch.ConflictError
	switch {
	case errors.As(err, &corrupt):
		return internalError(corrupt).Status
	case errors.Is(err, storage.ErrNotFound):
		return withDetails(NewStatusError(http.StatusNotFound, kapi.StatusReasonNotFound,
			fmt.Sprintf("%s %q not found", qualified, t.name)))
	case errors.Is(err, storage.ErrExists):
		return withDetails(NewStatusError(http.StatusConflict, kapi.StatusReasonAlreadyExists,
			fmt.Sprintf("%s %q already exists", qualified, t.name)))
	case errors.Is(err, storage.ErrConflict):
		return withDetails(NewStatusError(http.StatusConflict, kapi.StatusReasonConflict,
			fmt.Sprintf("Operation cannot be fulfilled on %s %q: the object has been modified; please apply your changes to the latest version and try again", qualified, t.name)))
	case errors.Is(err, storage.ErrExpired):
		return NewStatusError(http.StatusGone, kapi.StatusReasonExpired,
			"The resourceVersion for the provided list is too old.").Status
	case errors.Is(err, context.DeadlineExceeded):
		// The request's own deadline: the client may retry, and learns
		// whether a write it sent may have been applied all the same.
		e := NewStatusError(http.StatusGatewayTimeout, kapi.StatusReasonTimeout, "Timeout: request did not complete within the allotted timeout"+outcome(err))
		e.Status.Details = &kapi.StatusDetails{RetryAfterSeconds: storeRetryAfter}
		return e.Status
	case errors.Is(err, storage.ErrUnavailable), errors.Is(err, storage.ErrTimeout), errors.Is(err, storage.ErrClosed):
		st := withDetails(NewStatusError(http.StatusServiceUnavailable, kapi.StatusReasonServiceUnavailable,
			fmt.Sprintf("The storage is unavailable, please try again later%s: %v", outcome(err), err)))
		st.Details.RetryAfterSeconds = storeRetryAfter
		return st
	case errors.Is(err, storage.ErrTooLarge):
		return withDetails(NewStatusError(http.StatusRequestEntityTooLarge, kapi.StatusReasonRequestEntityTooLarge,
			fmt.Sprintf("Request entity too large: the storage refused to store it: %v", err)))
	case errors.Is(err, storage.ErrNoSpace):
		return withDetails(NewStatusError(http.StatusInsufficientStorage, kapi.StatusReasonInsufficientStorage,
			fmt.Sprintf("Insufficient storage: the storage is out of space and refuses writes until its operator frees some: %v", err)))
	case errors.Is(err, storage.ErrFutureRevision):
		return tooLargeResourceVersion("Too large resource version").Status
	case errors.As(err, &tooLarge):
		return NewStatusError(http.StatusRequestEntityTooLarge, kapi.StatusReasonRequestEntityTooLarge,
			fmt.Sprintf("Request entity too large: limit is %d", tooLarge.Limit)).Status
	case errors.Is(err, codec.ErrNotAcceptable):
		return NewStatusError(http.StatusNotAcceptable, kapi.StatusReasonNotAcceptable, strings.TrimPrefix(err.Error(), codec.ErrNotAcceptable.Error()+": ")).Status
	case errors.Is(err, codec.ErrUnsupportedMediaType):
		return NewStatusError(http.StatusUnsupportedMediaType, kapi.StatusReasonUnsupportedMediaType, strings.TrimPrefix(err.Error(), codec.ErrUnsupportedMediaType.Error()+": ")).Status
	case errors.As(err, &conflict): // an apply's: one cause per field, naming the manager that owns it
		e := NewStatusError(http.StatusConflict, kapi.StatusReasonConflict, conflict.Error())
		e.Status.Details = &kapi.StatusDetails{Causes: conflict.Causes()}
		return e.Status
	case errors.Is(err, patch.ErrTooManyOperations):
		return NewStatusError(http.StatusRequestEntityTooLarge, kapi.StatusReasonRequestEntityTooLarge, strings.TrimPrefix(err.Error(), patch.ErrTooManyOperations.Error()+": ")).Status
	case errors.Is(err, patch.ErrMalformed):
		return badRequest("%s", strings.TrimPrefix(err.Error(), patch.ErrMalformed.Error()+": ")).Status
	case errors.Is(err, patch.ErrNotApplicable):
		s := NewStatusError(http.StatusUnprocessableEntity, kapi.StatusReasonInvalid, "the server rejected our request due to an error in our request").Status
		s.Details = &kapi.StatusDetails{Causes: []kapi.StatusCause{{Type: kapi.CauseTypeUnexpectedServerError, Message: strings.TrimPrefix(err.Error(), patch.ErrNotApplicable.Error()+": ")}}}
		return s
	case errors.Is(err, context.Canceled):
		return NewStatusError(499, kapi.StatusReasonTimeout, "the request was cancelled").Status
	}
	return NewStatusError(http.StatusInternalServerError, kapi.StatusReasonInternalError,
		fmt.Sprintf("Internal error occurred: %v", err)).Status
}

// internalError is kube-apiserver's 500 for an error it knows the text of,
// which it repeats as the one cause.
func internalError(err error) *StatusError {
	e := NewStatusError(http.StatusInternalServerError, kapi.StatusReasonInternalError, fmt.Sprintf("Internal error occurred: %v", err))
	e.Status.Details = &kapi.StatusDetails{Causes: []kapi.StatusCause{{Message: err.Error()}}}
	return e
}

// corruptObject is a stored object that does not decode (or decrypt): it is
// worded as kube-apiserver's storage error for one, which names its key.
type corruptObject struct {
	key      string
	revision int64
	err      error
}

func (e *corruptObject) Error() string {
	return fmt.Sprintf("StorageError: corrupt object, Code: 7, Key: %s, ResourceVersion: 0, AdditionalErrorMsg: object not decodable revision=%d: %v", e.key, e.revision, e.err)
}

func (e *corruptObject) Unwrap() error { return e.err }

// maxUnreadableCauses is how many unreadable objects a failed list names,
// as kube-apiserver.
const maxUnreadableCauses = 100

// unreadableList is kube-apiserver's 500 for a list that met objects it
// cannot read: each is a cause, whose field is its key.
func unreadableList(res *resource, bad []watch.Unreadable) *StatusError {
	qualified := res.qualifiedResource()
	msg := fmt.Sprintf("failed to read one or more %s from the storage: %v", qualified, bad[0].Err)
	if len(bad) > 1 {
		msg = fmt.Sprintf("%s (and %d more)", msg, len(bad)-1)
	}
	e := NewStatusError(http.StatusInternalServerError, kapi.StatusReasonStoreReadError, msg)
	e.Status.Details = &kapi.StatusDetails{Group: res.Group, Kind: res.Plural, Name: "list"}
	for i, u := range bad {
		if i == maxUnreadableCauses {
			e.Status.Details.Causes = append(e.Status.Details.Causes, kapi.StatusCause{Type: kapi.CauseTypeTooMany, Message: "too many errors, the list is truncated"})
			break
		}
		e.Status.Details.Causes = append(e.Status.Details.Causes, kapi.StatusCause{Type: kapi.CauseTypeUnexpectedServerError, Field: u.Key, Message: u.Err.Error()})
	}
	return e
}

// storeRetryAfter is the Retry-After, in seconds, of an answer to a fault
// of the store: client-go and kubectl wait as long, then send the request
// again, by when an etcd leader election is usually over.
const storeRetryAfter = 1

// outcome is what the message of a failed write says when the write may
// have been applied all the same.
func outcome(err error) string {
	if errors.Is(err, storage.ErrOutcomeUnknown) {
		return "; the write may or may not have been applied: read the object before writing it again"
	}
	return ""
}

// tooLargeResourceVersion is kube-apiserver's 504 for a read at a revision
// the store has not reached in time; client-go retries on its cause.
func tooLargeResourceVersion(detail string) *StatusError {
	e := NewStatusError(http.StatusGatewayTimeout, kapi.StatusReasonTimeout, "Timeout: "+detail)
	e.Status.Details = &kapi.StatusDetails{RetryAfterSeconds: 1, Causes: []kapi.StatusCause{{Type: kapi.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}}}
	return e
}

// invalid is the 422 for a list of bad fields, worded as kube-apiserver does.
func invalid(t target, errs FieldErrors) *StatusError {
	kind, group := "", ""
	if t.res != nil {
		kind, group = t.res.Kind, t.res.Group
	}
	if len(errs) > 0 && errs[0].Field == "kind" && errs[0].BadValue != nil { // an object of another kind, named as kube's NewInvalid names it
		kind = fmt.Sprint(errs[0].BadValue)
	}
	qualifiedKind := kind
	if group != "" {
		qualifiedKind += "." + group
	}
	e := NewStatusError(http.StatusUnprocessableEntity, kapi.StatusReasonInvalid,
		fmt.Sprintf("%s %q is invalid: %s", qualifiedKind, t.name, errs.Error()))
	e.Status.Details = &kapi.StatusDetails{Name: t.name, Group: group, Kind: kind}
	for _, fe := range errs {
		e.Status.Details.Causes = append(e.Status.Details.Causes, kapi.StatusCause{Type: fe.Type, Message: fe.body(), Field: fe.Field})
	}
	return e
}

// FieldError is one invalid field of an object. Validation hooks return them
// as FieldErrors; the client receives 422 Invalid with one cause each.
type FieldError struct {
	Type kapi.CauseType
	// Field is the path of the field, as spec.ports[1].port.
	Field string
	// BadValue is the value that was refused; omitted for Required and
	// Forbidden.
	BadValue any
	Detail   string
}

// FieldErrors is a list of invalid fields; a non-empty list is an error.
type FieldErrors []*FieldError

func (errs FieldErrors) Error() string {
	if len(errs) == 1 {
		return errs[0].Error()
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return "[" + strings.Join(msgs, ", ") + "]"
}

// Required reports a missing value.
func Required(field, detail string) *FieldError {
	return &FieldError{Type: kapi.CauseTypeFieldValueRequired, Field: field, Detail: detail}
}

// Invalid reports a value outside what the field allows.
func Invalid(field string, value any, detail string) *FieldError {
	return &FieldError{Type: kapi.CauseTypeFieldValueInvalid, Field: field, BadValue: value, Detail: detail}
}

// NotSupported reports a value outside a fixed set.
func NotSupported(field string, value any, supported ...string) *FieldError {
	quoted := make([]string, len(supported))
	for i, s := range supported {
		quoted[i] = strconv.Quote(s)
	}
	return &FieldError{Type: kapi.CauseTypeFieldValueNotSupported, Field: field, BadValue: value,
		Detail: "supported values: " + strings.Join(quoted, ", ")}
}

// Forbidden reports a field that may not be set, or not to this value.
func Forbidden(field, detail string) *FieldError {
	return &FieldError{Type: kapi.CauseTypeFieldValueForbidden, Field: field, Detail: detail}
}

// Duplicate reports a value that must be unique and is not.
func Duplicate(field string, value any) *FieldError {
	return &FieldError{Type: kapi.CauseTypeFieldValueDuplicate, Field: field, BadValue: value}
}

func (e *FieldError) Error() string { return e.Field + ": " + e.body() }

var causeWords = map[kapi.CauseType]string{
	kapi.CauseTypeFieldValueRequired:     "Required value",
	kapi.CauseTypeFieldValueInvalid:      "Invalid value",
	kapi.CauseTypeFieldValueTypeInvalid:  "Invalid value",
	kapi.CauseTypeFieldValueNotSupported: "Unsupported value",
	kapi.CauseTypeFieldValueForbidden:    "Forbidden",
	kapi.CauseTypeFieldValueDuplicate:    "Duplicate value",
	kapi.CauseTypeFieldValueNotFound:     "Not found",
	kapi.CauseTypeFieldValueTooLong:      "Too long",
	kapi.CauseTypeTooMany:                "Too many",
	kapi.CauseTypeInternal:               "Internal error",
}

// body is the message of the cause, without the field.
func (e *FieldError) body() string {
	s := causeWords[e.Type]
	if s == "" {
		s = string(e.Type)
	}
	switch e.Type {
	case kapi.CauseTypeFieldValueRequired, kapi.CauseTypeFieldValueForbidden, kapi.CauseTypeFieldValueTooLong, kapi.CauseTypeInternal:
	default:
		if _, omitted := e.BadValue.(validation.OmittedValue); !omitted {
			s += ": " + formatValue(e.BadValue)
		}
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

func formatValue(v any) string {
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return "null"
		}
		v = rv.Elem().Interface()
	}
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(v)
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64, bool:
		return fmt.Sprint(v)
	}
	// As field.Error: JSON where it can (a list of strings is ["a","b"]).
	if b, err := json.Marshal(v); err == nil {
		return string(b)
	}
	if s, ok := v.(fmt.Stringer); ok {
		return s.String()
	}
	return fmt.Sprintf("%#v", v)
}
