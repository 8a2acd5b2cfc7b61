package tensor

import "fmt"

// Float is the set of element types tensors support.
type Float interface {
	~float32 | ~float64
}

// MaxRank is the largest supported tensor rank.
const MaxRank = 4

// Shape is a tensor shape of rank 0..MaxRank. The zero value is rank 0
// (a scalar with one element).
type Shape struct {
	dims [MaxRank]int
	rank int
}

// S returns the shape with the given dimensions. It panics on a negative
// dimension or a rank above MaxRank.
func S(dims ...int) Shape {
	if len(dims) > MaxRank {
		panic(fmt.Sprintf("tensor: rank %d exceeds %d", len(dims), MaxRank))
	}
	var s Shape
	for i, d := range dims {
		if d < 0 {
			panic(fmt.Sprintf("tensor: negative dimension %d", d))
		}
		s.dims[i] = d
	}
	s.rank = len(dims)
	return s
}

// Rank returns the number of dimensions.
func (s Shape) Rank() int { return s.rank }

// Dim returns dimension i; negative i counts from the end (-1 is the last).
func (s Shape) Dim(i int) int {
	if i < 0 {
		i += s.rank
	}
	if i < 0 || i >= s.rank {
		panic(fmt.Sprintf("tensor: dimension %d out of range for rank %d", i, s.rank))
	}
	return s.dims[i]
}

// Len returns the number of elements.
func (s Shape) Len() int {
	n := 1
	for i := 0; i < s.rank; i++ {
		n *= s.dims[i]
	}
	return n
}

// Rows returns the product of all dimensions but the last: the number of rows
// when the tensor is viewed as a matrix whose columns are the last dimension.
func (s Shape) Rows() int {
	if s.rank == 0 {
		return 1
	}
	return s.Len() / max(1, s.dims[s.rank-1])
}

// WithDim returns a copy of s with dimension i (negative counts from the end)
// set to d.
func (s Shape) WithDim(i, d int) Shape {
	if i < 0 {
		i += s.rank
	}
	if i < 0 || i >= s.rank {
		panic(fmt.Sprintf("tensor: dimension %d out of range for rank %d", i, s.rank))
	}
	s.dims[i] = d
	return s
}

// Equal reports whether two shapes are identical.
func (s Shape) Equal(o Shape) bool { return s == o }

// String formats the shape as (d0×d1×…).
func (s Shape) String() string {
	out := "("
	for i := 0; i < s.rank; i++ {
		if i > 0 {
			out += "×"
		}
		out += fmt.Sprint(s.dims[i])
	}
	return out + ")"
}

// Dense is a dense row-major tensor. Data has exactly Shape.Len() elements.
// A Dense is a header: copies share Data.
type Dense[T Float] struct {
	Data  []T
	Shape Shape
}

// New allocates a zero tensor of the given shape.
func New[T Float](dims ...int) Dense[T] {
	s := S(dims...)
	return Dense[T]{Data: make([]T, s.Len()), Shape: s}
}

// FromSlice wraps data (not copied) with the given dimensions; it panics if
// the length does not match.
func FromSlice[T Float](data []T, dims ...int) Dense[T] {
	s := S(dims...)
	if len(data) != s.Len() {
		panic(fmt.Sprintf("tensor: %d values for shape %v", len(data), s))
	}
	return Dense[T]{Data: data, Shape: s}
}

// Resize makes d a tensor of shape s, reusing d.Data when its capacity is
// sufficient. The contents are unspecified afterwards.
func (d *Dense[T]) Resize(s Shape) {
	n := s.Len()
	if cap(d.Data) < n {
		d.Data = make([]T, n)
	}
	d.Data = d.Data[:n]
	d.Shape = s
}

// Reshape returns a view of d with another shape of the same length.
func (d Dense[T]) Reshape(dims ...int) Dense[T] {
	s := S(dims...)
	if s.Len() != len(d.Data) {
		panic(fmt.Sprintf("tensor: cannot reshape %v to %v", d.Shape, s))
	}
	return Dense[T]{Data: d.Data, Shape: s}
}

// Batch returns the view of items [lo, hi) along dimension 0.
func (d Dense[T]) Batch(lo, hi int) Dense[T] {
	if d.Shape.rank == 0 || lo < 0 || hi < lo || hi > d.Shape.dims[0] {
		panic(fmt.Sprintf("tensor: batch [%d,%d) of %v", lo, hi, d.Shape))
	}
	per := 1
	if d.Shape.dims[0] > 0 {
		per = d.Shape.Len() / d.Shape.dims[0]
	}
	s := d.Shape
	s.dims[0] = hi - lo
	return Dense[T]{Data: d.Data[lo*per : hi*per], Shape: s}
}

// Clone returns a deep copy of d.
func (d Dense[T]) Clone() Dense[T] {
	return Dense[T]{Data: append([]T(nil), d.Data...), Shape: d.Shape}
}

// Convert copies src into a new tensor of another element type.
func Convert[D, S Float](src Dense[S]) Dense[D] {
	out := Dense[D]{Data: make([]D, len(src.Data)), Shape: src.Shape}
	for i, v := range src.Data {
		out.Data[i] = D(v)
	}
	return out
}
