package postgres

import (
	"github.com/jackc/pgx/v5/pgtype"
)

// The committer's array arguments. pgx encodes a [][]byte through
// reflection, and a []int64 (or pgtype.FlatArray) by boxing each element
// in an interface, an allocation per element past 255; these types hand
// pgx a pointer to each element instead, which boxes for free, and which
// it encodes through BytesValuer and Int64Valuer: the same bytes on the
// wire (TestArrayArgs), without reflection or an allocation per element.

// bytesArray is a bytea[] argument; a nil element is NULL.
type bytesArray [][]byte

func (a bytesArray) Dimensions() []pgtype.ArrayDimension { return dimensions(a == nil, len(a)) }
func (a bytesArray) Index(i int) any                     { return (*bytesElem)(&a[i]) }
func (a bytesArray) IndexType() any                      { return (*bytesElem)(nil) }

type bytesElem []byte

func (e *bytesElem) BytesValue() ([]byte, error) { return *e, nil }

// int64Array is a bigint[] argument.
type int64Array []int64

func (a int64Array) Dimensions() []pgtype.ArrayDimension { return dimensions(a == nil, len(a)) }
func (a int64Array) Index(i int) any                     { return (*int64Elem)(&a[i]) }
func (a int64Array) IndexType() any                      { return (*int64Elem)(nil) }

type int64Elem int64

func (e *int64Elem) Int64Value() (pgtype.Int8, error) {
	return pgtype.Int8{Int64: int64(*e), Valid: true}, nil
}

// dimensions are a one-dimensional array's of n elements as
// pgtype.FlatArray gives them: none for nil (NULL).
func dimensions(isNil bool, n int) []pgtype.ArrayDimension {
	if isNil {
		return nil
	}
	return []pgtype.ArrayDimension{{Length: int32(n), LowerBound: 1}}
}

var (
	_ pgtype.ArrayGetter = bytesArray(nil)
	_ pgtype.ArrayGetter = int64Array(nil)
	_ pgtype.BytesValuer = (*bytesElem)(nil)
	_ pgtype.Int64Valuer = (*int64Elem)(nil)
)
