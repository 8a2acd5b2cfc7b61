package tensor

import "math"

// Row kernels of the full-graph GCN's hidden layer (the baseline of package
// pipeline): the forward's ReLU, dropout and product with the two columns
// of the output weights, and its backward. Each gives the loop it replaces
// bit for bit: every sum in its own order, every product rounded before it
// is added (no fused multiply-add). On AVX-512 they run sixteen rows or
// sixteen columns at a time (gcnrows_amd64.s).

// ReLUDropDot2 is the forward of one block of rows of the GCN's hidden
// layer, for training and validation at once. p is a rows×h row-major
// matrix (the pre-activations), c holds two columns of length h one after
// the other (c0 then c1), keep holds (h+63)/64 words per row of dropout
// bits (bit j of a row set: entry j kept). For each row i and column j,
//
//	e_j = p_j if its sign bit is clear, else +0   (ReLU)
//	r_j = e_j·scale if bit j is set, else +0      (dropout)
//
// r is written to row i of hr, and
//
//	s[2i], s[2i+1] = Σ_j r_j·c0_j, Σ_j r_j·c1_j
//	v[2i], v[2i+1] = Σ_j e_j·c0_j, Σ_j e_j·c1_j
//
// each summed from +0 in order of j. scale must be positive.
func ReLUDropDot2(p, hr []float32, keep []uint64, c []float32, scale float32, rows int, s, v []float32) {
	h := len(c) / 2
	wpr := (h + 63) / 64
	p, hr, keep = p[:rows*h], hr[:rows*h], keep[:rows*wpr]
	s, v = s[:2*rows], v[:2*rows]
	i := 0
	if haveGCNRows && h%16 == 0 {
		var out [64]float32
		for ; i+16 <= rows; i += 16 {
			reluDropDot16(p[i*h:(i+16)*h], hr[i*h:(i+16)*h], keep[i*wpr:(i+16)*wpr], c, scale, &out)
			for k := range 16 {
				s[2*(i+k)], s[2*(i+k)+1] = out[k], out[16+k]
				v[2*(i+k)], v[2*(i+k)+1] = out[32+k], out[48+k]
			}
		}
	}
	c0, c1 := c[:h], c[h:2*h]
	for ; i < rows; i++ {
		row, r := p[i*h:(i+1)*h], hr[i*h:(i+1)*h]
		kw := keep[i*wpr : (i+1)*wpr]
		var s0, s1, e0, e1 float32
		// Branch-free ReLU and mask (the signs are random): relu(x)
		// keeps x's bits when its sign bit is clear; adding the +0 of a
		// negative x changes no sum.
		for j, x := range row {
			b := math.Float32bits(x)
			pos := uint32(int32(^b) >> 31)
			e := math.Float32frombits(b & pos)
			rj := math.Float32frombits(b&(pos&-uint32(kw[j>>6]>>(j&63)&1))) * scale
			r[j] = rj
			s0 += rj * c0[j]
			s1 += rj * c1[j]
			e0 += e * c0[j]
			e1 += e * c1[j]
		}
		s[2*i], s[2*i+1], v[2*i], v[2*i+1] = s0, s1, e0, e1
	}
}

// ReLUDropBack is the backward of one block of rows of the GCN's hidden
// layer. hr is the rows×h matrix ReLUDropDot2 wrote (non-zero exactly where
// ReLU passed an entry and dropout kept it), dq holds the two upstream
// gradients of each row (dq[2i], dq[2i+1]) and c the two columns as in
// ReLUDropDot2. For each row i in order and column j,
//
//	d0_j += hr_j·dq[2i];  d1_j += hr_j·dq[2i+1]
//	t = (dq[2i]·c0_j + dq[2i+1]·c1_j)·scale where hr_j ≠ 0 (any bit set), else +0
//	dp_j = t (row i of dp);  db_j += t
//
// so d0, d1 and db (length h each) accumulate over the rows.
func ReLUDropBack(hr, dq, c []float32, scale float32, rows int, dp, d0, d1, db []float32) {
	h := len(c) / 2
	hr, dq, dp = hr[:rows*h], dq[:2*rows], dp[:rows*h]
	c0, c1 := c[:h], c[h:2*h]
	d0, d1, db = d0[:h], d1[:h], db[:h]
	if haveGCNRows && h%16 == 0 && rows > 0 {
		reluDropBack16(hr, dq, c, scale, dp, d0, d1, db)
		return
	}
	for i := range rows {
		q0, q1 := dq[2*i], dq[2*i+1]
		row, out := hr[i*h:(i+1)*h], dp[i*h:(i+1)*h]
		for j, x := range row {
			d0[j] += x * q0
			d1[j] += x * q1
			// Branch-free: t where x ≠ 0 (x ≥ 0: its bits are
			// non-zero), else +0.
			b := math.Float32bits(x)
			t := math.Float32frombits(math.Float32bits((q0*c0[j]+q1*c1[j])*scale) & uint32(int32(b|-b)>>31))
			out[j] = t
			db[j] += t
		}
	}
}
