package apiserver

import (
	"context"
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
	switch {
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
		return NewStatusError(http.StatusGatewayTimeout, kapi.StatusReasonTimeout, "Timeout: request did not complete within the allotted timeout").Status
	case errors.Is(err, storage.ErrFutureRevision):
		return tooLargeResourceVersion("Too large resource version").Status
	case errors.As(err, &tooLarge):
		return NewStatusError(http.StatusRequestEntityTooLarge, kapi.StatusReasonRequestEntityTooLarge,
			fmt.Sprintf("Request entity too large: limit is %d", tooLarge.Limit)).Status
	case errors.Is(err, codec.ErrNotAcceptable):
		return NewStatusError(http.StatusNotAcceptable, kapi.StatusReasonNotAcceptable, strings.TrimPrefix(err.Error(), codec.ErrNotAcceptable.Error()+": ")).Status
	case errors.Is(err, codec.ErrUnsupportedMediaType):
		return NewStatusError(http.StatusUnsupportedMediaType, kapi.StatusReasonUnsupportedMediaType, strings.TrimPrefix(err.Error(), codec.ErrUnsupportedMediaType.Error()+": ")).Status
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
}

// body is the message of the cause, without the field.
func (e *FieldError) body() string {
	s := causeWords[e.Type]
	if s == "" {
		s = string(e.Type)
	}
	switch e.Type {
	case kapi.CauseTypeFieldValueRequired, kapi.CauseTypeFieldValueForbidden, kapi.CauseTypeFieldValueTooLong:
	default:
		if _, omitted := e.BadValue.(omittedValue); !omitted {
			s += ": " + formatValue(e.BadValue)
		}
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// omittedValue is the BadValue of a cause whose message shows no value, as
// a failed rule on an object or a list does.
type omittedValue struct{}

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
	case fmt.Stringer:
		return v.String()
	}
	return fmt.Sprintf("%#v", v)
}
