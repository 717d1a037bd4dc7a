package kapi

import "encoding/json"

// Table is an object or a list shown as rows of cells with column
// definitions, what kubectl get prints (meta.k8s.io/v1 Table). Kubernetes
// gives it no protobuf form: its cells are arbitrary JSON values.
type Table struct {
	TypeMeta `json:",inline"`
	ListMeta `json:"metadata,omitempty"`
	// ColumnDefinitions are sent with the first response of a request only:
	// a watch sends them with its first event.
	ColumnDefinitions []TableColumnDefinition `json:"columnDefinitions"`
	Rows              []TableRow              `json:"rows"`
}

// TableColumnDefinition describes one column of a Table.
type TableColumnDefinition struct {
	Name string `json:"name"`
	// Type is an OpenAPI type: string, integer, number, boolean, or date.
	Type string `json:"type"`
	// Format is an OpenAPI format, or "name" for the column that names the object.
	Format      string `json:"format"`
	Description string `json:"description"`
	// Priority 0 is shown by default; higher ones with kubectl get -o wide.
	Priority int32 `json:"priority"`
}

// TableRow is one object of a Table.
type TableRow struct {
	Cells      []any               `json:"cells"`
	Conditions []TableRowCondition `json:"conditions,omitempty"`
	// Object is the object itself, its PartialObjectMetadata, or nothing,
	// as the request's includeObject asks.
	Object json.RawMessage `json:"object,omitempty"`
}

// TableRowCondition is a condition of a row, such as Completed.
type TableRowCondition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// PartialObjectMetadata is an object's metadata alone (meta.k8s.io/v1),
// what metadata-only clients and controllers list and watch.
type PartialObjectMetadata struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
}

// PartialObjectMetadataList is a list of PartialObjectMetadata.
type PartialObjectMetadataList struct {
	TypeMeta `json:",inline"`
	ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items    []PartialObjectMetadata `json:"items" protobuf:"bytes,2,rep,name=items"`
}
