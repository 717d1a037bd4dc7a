// Package tables holds the parts of the Table format (what kubectl get
// shows) that do not depend on a registered type: the types a column may
// have and their checks (NewColumns), the descriptions of kube-apiserver's
// default columns (Name, Created At, Age), a resource's cells (Columns),
// date cells shown as ages ("5m30s", "3d") as kube-apiserver shows a
// custom resource's date columns, and the body of a Table answer (Body):
// laid out in pieces around its rows' cached cells and objects and written
// with its length known, a whole collection's rows joined in runs kept for
// its next list (AddRows, listcache.Runs). Which columns a resource has
// (Column, table.go) and which items a Table shows are apiserver's.
//
// # Invariant
//
// An age is the one kubectl and kube-apiserver show for the same duration:
// the same units, the same thresholds at which a unit is dropped
// (seconds under 2 minutes, "XmYs" under 10 minutes, days from 48 hours,
// years from 2 years), "<invalid>" for a date in the future beyond a
// second's skew, and "<unknown>" for a zero date. A Body's bytes are those
// encoding/json writes for the same Table, every date shown as of the
// body's one moment, whether its rows were added one by one or joined.
//
// # The slow, obviously correct path
//
// There is no faster path for ages: one is computed per distinct date of
// a body. The slow path of a body is its rows added one by one (AddRow),
// which a list not of a whole collection takes; apiserver's
// TestListRunsMatchEncodedList compares Tables written from kept runs with
// those read from the store, and its Table tests read the cells over HTTP.
package tables
