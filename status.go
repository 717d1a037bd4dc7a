package kapi

// Status is the body of every error response, and of some successful ones.
type Status struct {
	TypeMeta `json:",inline"`
	ListMeta `json:"metadata" protobuf:"bytes,1,opt,name=metadata"`
	// Status is StatusSuccess or StatusFailure.
	Status  string         `json:"status,omitempty" protobuf:"bytes,2,opt,name=status"`
	Message string         `json:"message,omitempty" protobuf:"bytes,3,opt,name=message"`
	Reason  StatusReason   `json:"reason,omitempty" protobuf:"bytes,4,opt,name=reason,casttype=StatusReason"`
	Details *StatusDetails `json:"details,omitempty" protobuf:"bytes,5,opt,name=details"`
	Code    int32          `json:"code,omitempty" protobuf:"varint,6,opt,name=code"`
}

// Error lets a Status travel as a Go error.
func (s *Status) Error() string { return s.Message }

// Values of Status.Status.
const (
	StatusSuccess = "Success"
	StatusFailure = "Failure"
)

// StatusDetails names the object a Status is about and, for Invalid, its
// bad fields.
type StatusDetails struct {
	Name              string        `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`
	Group             string        `json:"group,omitempty" protobuf:"bytes,2,opt,name=group"`
	Kind              string        `json:"kind,omitempty" protobuf:"bytes,3,opt,name=kind"`
	UID               string        `json:"uid,omitempty" protobuf:"bytes,6,opt,name=uid"`
	Causes            []StatusCause `json:"causes,omitempty" protobuf:"bytes,4,rep,name=causes"`
	RetryAfterSeconds int32         `json:"retryAfterSeconds,omitempty" protobuf:"varint,5,opt,name=retryAfterSeconds"`
}

// StatusCause is one reason for a failure, usually one bad field.
type StatusCause struct {
	Type    CauseType `json:"reason,omitempty" protobuf:"bytes,1,opt,name=reason,casttype=CauseType"`
	Message string    `json:"message,omitempty" protobuf:"bytes,2,opt,name=message"`
	Field   string    `json:"field,omitempty" protobuf:"bytes,3,opt,name=field"`
}

// StatusReason is the machine-readable reason of a failure.
type StatusReason string

// The reasons of the API Conventions, with the HTTP code each travels with.
const (
	StatusReasonUnknown               StatusReason = ""
	StatusReasonBadRequest            StatusReason = "BadRequest"            // 400
	StatusReasonUnauthorized          StatusReason = "Unauthorized"          // 401
	StatusReasonForbidden             StatusReason = "Forbidden"             // 403
	StatusReasonNotFound              StatusReason = "NotFound"              // 404
	StatusReasonMethodNotAllowed      StatusReason = "MethodNotAllowed"      // 405
	StatusReasonNotAcceptable         StatusReason = "NotAcceptable"         // 406
	StatusReasonAlreadyExists         StatusReason = "AlreadyExists"         // 409
	StatusReasonConflict              StatusReason = "Conflict"              // 409
	StatusReasonGone                  StatusReason = "Gone"                  // 410
	StatusReasonExpired               StatusReason = "Expired"               // 410
	StatusReasonRequestEntityTooLarge StatusReason = "RequestEntityTooLarge" // 413
	StatusReasonUnsupportedMediaType  StatusReason = "UnsupportedMediaType"  // 415
	StatusReasonInvalid               StatusReason = "Invalid"               // 422
	StatusReasonTooManyRequests       StatusReason = "TooManyRequests"       // 429
	StatusReasonInternalError         StatusReason = "InternalError"         // 500
	// StatusReasonStoreReadError: objects the request met are stored but
	// cannot be read (decoded or decrypted); the causes name their keys.
	StatusReasonStoreReadError     StatusReason = "StorageReadError"   // 500
	StatusReasonServiceUnavailable StatusReason = "ServiceUnavailable" // 503
	StatusReasonTimeout            StatusReason = "Timeout"            // 504
	// StatusReasonInsufficientStorage: the store refuses writes for want
	// of space (etcd's "mvcc: database space exceeded"). Kubernetes has no
	// reason of its own for it: kube-apiserver answers 500 with etcd's
	// message.
	StatusReasonInsufficientStorage StatusReason = "InsufficientStorage" // 507
)

// CauseType is the machine-readable kind of a StatusCause.
type CauseType string

// Cause types, as Kubernetes names them.
const (
	CauseTypeFieldValueNotFound      CauseType = "FieldValueNotFound"
	CauseTypeFieldValueRequired      CauseType = "FieldValueRequired"
	CauseTypeFieldValueDuplicate     CauseType = "FieldValueDuplicate"
	CauseTypeFieldValueInvalid       CauseType = "FieldValueInvalid"
	CauseTypeFieldValueTypeInvalid   CauseType = "FieldValueTypeInvalid"
	CauseTypeFieldValueNotSupported  CauseType = "FieldValueNotSupported"
	CauseTypeFieldValueForbidden     CauseType = "FieldValueForbidden"
	CauseTypeFieldValueTooLong       CauseType = "FieldValueTooLong"
	CauseTypeTooMany                 CauseType = "FieldValueTooMany"
	CauseTypeUnexpectedServerError   CauseType = "UnexpectedServerResponse"
	CauseTypeFieldManagerConflict    CauseType = "FieldManagerConflict"
	CauseTypeResourceVersionTooLarge CauseType = "ResourceVersionTooLarge"
	// CauseTypeInternal is field.ErrorTypeInternal's: an error of the
	// server's own at a field ("Internal error: ...").
	CauseTypeInternal CauseType = "InternalError"
)
