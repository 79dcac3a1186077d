package properties

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
)

// CEL values every view shares: small ints from a table (evaluation does
// not allocate for them), seq's lists, an iterator over values, and the
// rendering of values for people.

var intVals [258]ref.Val // -1 .. 256

func init() {
	for i := range intVals {
		intVals[i] = types.Int(i - 1)
	}
	for lo := range ranges {
		for hi := range ranges[lo] {
			ranges[lo][hi] = &intRange{lo: lo - 1, hi: hi - 1}
		}
	}
}

// Int is x as a CEL int, from the table when it is there.
func Int(x int) ref.Val {
	if x >= -1 && x < len(intVals)-1 {
		return intVals[x+1]
	}
	return types.Int(x)
}

// IsErr reports whether v is an error or an unknown (which CEL's strict
// functions pass on).
func IsErr(v ref.Val) bool {
	switch v.(type) {
	case *types.Err, *types.Unknown:
		return true
	}
	return false
}

// intRange is the list lo..hi of seq (empty when hi < lo).
type intRange struct{ lo, hi int }

var (
	ranges     [18][18]*intRange // [lo+1][hi+1]
	emptyRange = &intRange{lo: 0, hi: -1}
)

// seqList is lo..hi (empty when hi < lo).
func seqList(lo, hi int) *intRange {
	if hi < lo {
		return emptyRange
	}
	if lo >= -1 && hi < len(ranges)-1 {
		return ranges[lo+1][hi+1]
	}
	return &intRange{lo: lo, hi: hi}
}

func (l *intRange) size() int { return l.hi - l.lo + 1 }

// each calls fn on the elements in order until it returns false.
func (l *intRange) each(fn func(i int, x ref.Val) bool) {
	n := l.size()
	for i := 0; i < n; i++ {
		if !fn(i, Int(l.lo+i)) {
			return
		}
	}
}

func (l *intRange) materialize() []ref.Val {
	out := make([]ref.Val, 0, l.size())
	l.each(func(_ int, x ref.Val) bool { out = append(out, x); return true })
	return out
}

// ConvertToNative implements ref.Val.
func (l *intRange) ConvertToNative(t reflect.Type) (any, error) {
	return types.NewRefValList(types.DefaultTypeAdapter, l.materialize()).ConvertToNative(t)
}

// ConvertToType implements ref.Val.
func (l *intRange) ConvertToType(t ref.Type) ref.Val {
	return ConvertType(l, types.ListType, "list", t)
}

// Equal implements ref.Val: lists of equal elements in the same order.
func (l *intRange) Equal(other ref.Val) ref.Val {
	o, ok := other.(traits.Lister)
	if !ok || o.Size() != Int(l.size()) {
		return types.False
	}
	for i := 0; i < l.size(); i++ {
		if Int(l.lo+i).Equal(o.Get(Int(i))) != types.True {
			return types.False
		}
	}
	return types.True
}

// Type implements ref.Val.
func (l *intRange) Type() ref.Type { return types.ListType }

// Value implements ref.Val.
func (l *intRange) Value() any { return l }

// Add implements traits.Adder: concatenation.
func (l *intRange) Add(other ref.Val) ref.Val { return Concat(l.materialize, other) }

// Concat is the concatenation of a list, whose elements materialize
// gives, and other (a list, else an error).
func Concat(materialize func() []ref.Val, other ref.Val) ref.Val {
	o, ok := other.(traits.Lister)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	out := materialize()
	it := o.Iterator()
	for it.HasNext() == types.True {
		out = append(out, it.Next())
	}
	return types.NewRefValList(types.DefaultTypeAdapter, out)
}

// MapEqual is the equality of CEL maps: of the map of n entries key(i):
// val(i), and other.
func MapEqual(n int, key, val func(i int) ref.Val, other ref.Val) ref.Val {
	o, ok := other.(traits.Mapper)
	if !ok || o.Size() != Int(n) {
		return types.False
	}
	for i := 0; i < n; i++ {
		ov, found := o.Find(key(i))
		if !found || val(i).Equal(ov) != types.True {
			return types.False
		}
	}
	return types.True
}

// Contains implements traits.Container (x in list).
func (l *intRange) Contains(x ref.Val) ref.Val {
	for i := l.lo; i <= l.hi; i++ {
		if Int(i).Equal(x) == types.True {
			return types.True
		}
	}
	return types.False
}

// Get implements traits.Indexer.
func (l *intRange) Get(index ref.Val) ref.Val {
	i, err := ListIndex(index, l.size())
	if err != nil {
		return err
	}
	return Int(l.lo + i)
}

// ConvertType is the ConvertToType of a value v of a view whose type is
// own (name in the error): to own, v itself; to the type of types, own.
func ConvertType(v ref.Val, own *types.Type, name string, t ref.Type) ref.Val {
	switch t {
	case types.TypeType:
		return own
	case own:
		return v
	}
	return types.NewErr("type conversion error from %s to '%s'", name, t)
}

// ListIndex is index as a position in a list of n elements, or the
// error that indexing the list so is.
func ListIndex(index ref.Val, n int) (int, ref.Val) {
	i, ok := index.(types.Int)
	if !ok {
		return 0, types.ValOrErr(index, "a list index must be an int, got %v", index)
	}
	if i < 0 || int(i) >= n {
		return 0, types.NewErr("index out of range: %d (the list has %d elements)", i, n)
	}
	return int(i), nil
}

// Size implements traits.Sizer.
func (l *intRange) Size() ref.Val { return Int(l.size()) }

// Iterator implements traits.Iterable.
func (l *intRange) Iterator() traits.Iterator { return NewIterator(l.materialize()) }

// Fold implements traits.Foldable: comprehensions iterate without allocating.
func (l *intRange) Fold(f traits.Folder) {
	l.each(func(i int, x ref.Val) bool { return f.FoldEntry(Int(i), x) })
}

// iter iterates over materialized values (the slow path; comprehensions fold).
type iter struct {
	vals []ref.Val
	i    int
}

// NewIterator iterates over vals, in order.
func NewIterator(vals []ref.Val) traits.Iterator { return &iter{vals: vals} }

func (it *iter) ConvertToNative(t reflect.Type) (any, error) {
	return nil, fmt.Errorf("an iterator cannot be converted to %v", t)
}
func (it *iter) ConvertToType(ref.Type) ref.Val { return types.NewErr("an iterator has no type") }
func (it *iter) Equal(ref.Val) ref.Val          { return types.False }
func (it *iter) Type() ref.Type                 { return types.IteratorType }
func (it *iter) Value() any                     { return it }
func (it *iter) HasNext() ref.Val               { return types.Bool(it.i < len(it.vals)) }
func (it *iter) Next() ref.Val {
	if it.i >= len(it.vals) {
		return types.NewErr("no more elements")
	}
	it.i++
	return it.vals[it.i-1]
}

// Iterate calls visit on the entries of a list (index and element, or the
// element alone) or a map (key and value) until it returns false; false
// when r is neither.
func Iterate(r ref.Val, two bool, visit func(k, v ref.Val) bool) bool {
	switch x := r.(type) {
	case *intRange:
		x.each(func(i int, v ref.Val) bool {
			if two {
				return visit(Int(i), v)
			}
			return visit(v, nil)
		})
	case traits.Mapper:
		it := x.Iterator()
		for it.HasNext() == types.True {
			k := it.Next()
			if !visit(k, x.Get(k)) {
				break
			}
		}
	case traits.Lister:
		n, _ := x.Size().(types.Int)
		for i := types.Int(0); i < n; i++ {
			v := x.Get(i)
			var ok bool
			if two {
				ok = visit(Int(int(i)), v)
			} else {
				ok = visit(v, nil)
			}
			if !ok {
				break
			}
		}
	default:
		return false
	}
	return true
}

// A Record is a value of a typed view that renders itself for FormatVal
// (a record with its fields).
type Record interface {
	// FormatFields is the record's type name and its fields, "name:
	// value" (values by FormatVal).
	FormatFields() (name string, fields []string)
}

// FormatVal renders a CEL value for people (explanations).
func FormatVal(v ref.Val) string {
	switch x := v.(type) {
	case types.String:
		return strconv.Quote(string(x))
	case types.Int:
		return strconv.FormatInt(int64(x), 10)
	case types.Bool:
		return strconv.FormatBool(bool(x))
	case Record:
		name, parts := x.FormatFields()
		return name + "{" + strings.Join(parts, ", ") + "}"
	case traits.Mapper:
		var parts []string
		it := x.Iterator()
		for it.HasNext() == types.True {
			k := it.Next()
			parts = append(parts, FormatVal(k)+": "+FormatVal(x.Get(k)))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case traits.Lister:
		var parts []string
		it := x.Iterator()
		for it.HasNext() == types.True {
			parts = append(parts, FormatVal(it.Next()))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(v.Value())
}
