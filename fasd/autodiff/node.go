package autodiff

type opcode uint8

const (
	opLinear opcode = iota + 1
	opChanLinear
	opMatMul
	opGCNNorm
	opGCNProp
	opAttention
	opGatherCols
	opConcatLast
	opConcatChan
	opAct
	opAdd
	opMul
	opScale
	opAddBias
	opTranspose
	opSymmetrize
	opSetDiag
	opMaskNodes
	opMaskPairs
	opDropout
	opBCE
	opSoftmaxNLL
	opSquaredError
	opDot
	opSum
	opPackSym
	opUnpackSym
)

// node is one recorded operation. Nodes are reused by index across Reset, so
// the ins slice keeps its capacity and recording allocates nothing in steady
// state.
type node[T Float] struct {
	op      opcode
	out     *Var[T]
	a, b, c *Var[T]
	ins     []*Var[T]
	aux     []T
	aux2    []T
	cst     []T
	cst2    []T
	lbl     []int32
	i       [4]int
	f       T
}

func (t *Tape[T]) push(op opcode) *node[T] {
	if t.nn == len(t.nodes) {
		t.nodes = append(t.nodes, node[T]{})
	}
	n := &t.nodes[t.nn]
	t.nn++
	ins := n.ins[:0]
	*n = node[T]{op: op, ins: ins}
	return n
}

// readyIns clears the pending gradients of n's inputs, for the backward ops
// that accumulate (the others call first/accBeta/ready themselves).
func (t *Tape[T]) readyIns(n *node[T]) {
	t.ready(n.a)
	t.ready(n.b)
	t.ready(n.c)
	for _, v := range n.ins {
		t.ready(v)
	}
}

func (t *Tape[T]) backward(n *node[T]) {
	switch n.op {
	case opLinear, opChanLinear, opMatMul, opGCNProp, opTranspose, opSymmetrize,
		opMaskPairs, opMaskNodes, opAddBias, opConcatLast, opConcatChan, opAct,
		opGatherCols, opAttention:
		// These write their inputs' gradients through first/accBeta/ready.
	default:
		t.readyIns(n)
	}
	switch n.op {
	case opLinear:
		t.bwLinear(n)
	case opChanLinear:
		t.bwChanLinear(n)
	case opMatMul:
		t.bwMatMul(n)
	case opGCNNorm:
		t.bwGCNNorm(n)
	case opGCNProp:
		t.bwGCNProp(n)
	case opAttention:
		t.bwAttention(n)
	case opGatherCols:
		t.bwGatherCols(n)
	case opConcatLast:
		t.bwConcatLast(n)
	case opConcatChan:
		t.bwConcatChan(n)
	case opAct:
		t.bwAct(n)
	case opAdd:
		t.bwAdd(n)
	case opMul:
		t.bwMul(n)
	case opScale:
		t.bwScale(n)
	case opAddBias:
		t.bwAddBias(n)
	case opTranspose:
		t.bwTranspose(n)
	case opSymmetrize:
		t.bwSymmetrize(n)
	case opSetDiag:
		t.bwSetDiag(n)
	case opMaskNodes:
		t.bwMaskNodes(n)
	case opMaskPairs:
		t.bwMaskPairs(n)
	case opDropout:
		t.bwDropout(n)
	case opBCE:
		t.bwBCE(n)
	case opSoftmaxNLL:
		t.bwSoftmaxNLL(n)
	case opSquaredError:
		t.bwSquaredError(n)
	case opDot:
		t.bwDot(n)
	case opSum:
		t.bwSum(n)
	case opPackSym:
		t.bwPackSym(n)
	case opUnpackSym:
		t.bwUnpackSym(n)
	default:
		panic("autodiff: unknown op")
	}
}
