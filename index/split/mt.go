package split

import "math/bits"

// MT19937 parameters (Matsumoto & Nishimura 1998).
const (
	mtN         = 624
	mtM         = 397
	mtMatrixA   = 0x9908b0df
	mtUpperMask = 0x80000000
	mtLowerMask = 0x7fffffff
)

// MT19937 is the Mersenne Twister as CPython's random module drives it:
// seeded from an integer with init_by_array, drawing integers from the top
// bits of 32-bit outputs. It reproduces CPython's random.seed(n),
// getrandbits, randbelow, random() and shuffle exactly.
//
// An MT19937 is not safe for concurrent use.
type MT19937 struct {
	mt [mtN]uint32
	i  int
}

// NewMT19937 returns a generator in the state of CPython after
// random.seed(seed): the key is seed split into 32-bit words, least
// significant first ([0] for 0), fed to init_by_array.
func NewMT19937(seed uint64) *MT19937 {
	key := []uint32{uint32(seed)}
	if hi := uint32(seed >> 32); hi != 0 {
		key = append(key, hi)
	}
	m := &MT19937{}
	m.initByArray(key)
	return m
}

func (m *MT19937) initGenrand(s uint32) {
	m.mt[0] = s
	for i := 1; i < mtN; i++ {
		p := m.mt[i-1]
		m.mt[i] = 1812433253*(p^(p>>30)) + uint32(i)
	}
	m.i = mtN
}

func (m *MT19937) initByArray(key []uint32) {
	m.initGenrand(19650218)
	i, j := 1, 0
	for k := max(mtN, len(key)); k > 0; k-- {
		p := m.mt[i-1]
		m.mt[i] = (m.mt[i] ^ ((p ^ (p >> 30)) * 1664525)) + key[j] + uint32(j)
		i++
		j++
		if i >= mtN {
			m.mt[0] = m.mt[mtN-1]
			i = 1
		}
		if j >= len(key) {
			j = 0
		}
	}
	for k := mtN - 1; k > 0; k-- {
		p := m.mt[i-1]
		m.mt[i] = (m.mt[i] ^ ((p ^ (p >> 30)) * 1566083941)) - uint32(i)
		i++
		if i >= mtN {
			m.mt[0] = m.mt[mtN-1]
			i = 1
		}
	}
	m.mt[0] = 0x80000000 // MSB is 1, assuring a non-zero initial array
}

func (m *MT19937) twist() {
	mag := [2]uint32{0, mtMatrixA}
	var kk int
	for ; kk < mtN-mtM; kk++ {
		y := (m.mt[kk] & mtUpperMask) | (m.mt[kk+1] & mtLowerMask)
		m.mt[kk] = m.mt[kk+mtM] ^ (y >> 1) ^ mag[y&1]
	}
	for ; kk < mtN-1; kk++ {
		y := (m.mt[kk] & mtUpperMask) | (m.mt[kk+1] & mtLowerMask)
		m.mt[kk] = m.mt[kk+(mtM-mtN)] ^ (y >> 1) ^ mag[y&1]
	}
	y := (m.mt[mtN-1] & mtUpperMask) | (m.mt[0] & mtLowerMask)
	m.mt[mtN-1] = m.mt[mtM-1] ^ (y >> 1) ^ mag[y&1]
	m.i = 0
}

// Uint32 returns the next 32-bit output (CPython's genrand_uint32).
func (m *MT19937) Uint32() uint32 {
	if m.i >= mtN {
		m.twist()
	}
	y := m.mt[m.i]
	m.i++
	y ^= y >> 11
	y ^= (y << 7) & 0x9d2c5680
	y ^= (y << 15) & 0xefc60000
	y ^= y >> 18
	return y
}

// GetRandBits returns a uniform integer of k bits, 0 ≤ k ≤ 64, as CPython's
// getrandbits(k): for k ≤ 32 the top k bits of one output; otherwise 32-bit
// words from the least significant up, the last one cut to its top bits.
func (m *MT19937) GetRandBits(k int) uint64 {
	if k < 0 || k > 64 {
		panic("split: GetRandBits: k out of [0, 64]")
	}
	if k == 0 {
		return 0
	}
	if k <= 32 {
		return uint64(m.Uint32() >> (32 - k))
	}
	lo := uint64(m.Uint32())
	hi := uint64(m.Uint32() >> (64 - k))
	return hi<<32 | lo
}

// RandBelow returns a uniform integer in [0, n), n > 0, as CPython's
// _randbelow_with_getrandbits: draw bitlen(n) bits and reject values ≥ n.
func (m *MT19937) RandBelow(n int) int {
	if n <= 0 {
		panic("split: RandBelow: n must be positive")
	}
	k := bits.Len64(uint64(n))
	for {
		if r := m.GetRandBits(k); r < uint64(n) {
			return int(r)
		}
	}
}

// Random returns a float64 in [0, 1) with 53 random bits, as CPython's
// random.random().
func (m *MT19937) Random() float64 {
	a, b := m.Uint32()>>5, m.Uint32()>>6
	return (float64(a)*67108864 + float64(b)) / 9007199254740992
}

// Shuffle permutes n elements as CPython's random.shuffle: for i from n-1
// down to 1, swap(i, RandBelow(i+1)).
func (m *MT19937) Shuffle(n int, swap func(i, j int)) {
	for i := n - 1; i > 0; i-- {
		swap(i, m.RandBelow(i+1))
	}
}
