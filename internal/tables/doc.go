// Package tables holds the parts of the Table format (what kubectl get
// shows) that do not depend on a registered type: the types a column may
// have, the descriptions of kube-apiserver's default columns (Name,
// Created At, Age), and date cells shown as ages ("5m30s", "3d") as
// kube-apiserver shows a custom resource's date columns. Which columns a
// resource has, and the rows of a Table answer, are apiserver's
// (Column, table.go).
//
// # Invariant
//
// An age is the one kubectl and kube-apiserver show for the same duration:
// the same units, the same thresholds at which a unit is dropped
// (seconds under 2 minutes, "XmYs" under 10 minutes, days from 48 hours,
// years from 2 years), "<invalid>" for a date in the future beyond a
// second's skew, and "<unknown>" for a zero date.
//
// # The slow, obviously correct path
//
// There is no faster path: an age is computed once per cell. The tests pin
// the thresholds; apiserver's Table tests read the cells over HTTP.
package tables
