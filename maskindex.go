package legate

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// heads finds the forms of a Secrets in a text in one pass over it, where
// a search per form passes over it once per form: a gateway's set holds
// every form (a dozen) of every secret it has seen, hundreds of them, and
// almost every text holds none.
//
// Every form is at least minMasked (four) bytes long, and a set's
// shortest, m bytes, means that a form found in a text covers one of any
// stride = m-3 positions in a row. So the text is sampled every stride
// bytes: the four bytes at a sampled position are hashed and tested in a
// bitmap of the four bytes at each of the first stride offsets of every
// form; on a hit, the forms holding those four bytes at that offset are
// compared in place. A miss, nearly every sample, costs a load, a multiply
// and a bit test.
type heads struct {
	stride int
	bitmap []uint64
	shift  uint               // a hash's top bits index the bitmap
	at     map[uint32][]place // by four bytes: where forms hold them
}

// place is a form (its index in Secrets.forms) holding four bytes at off.
type place struct{ form, off int32 }

// minStride is the least stride sampling pays for: with secrets of six
// bytes or fewer, a search per form (bytes.Contains, which skips to a
// form's first byte with vector instructions) is as fast.
const minStride = 4

// maxStride bounds the stride, and with it the index's size.
const maxStride = 16

func newHeads(forms [][]byte) heads {
	m := len(forms[len(forms)-1]) // the shortest: forms are longest first
	if m-minMasked+1 < minStride {
		return heads{}
	}
	h := heads{stride: min(m-minMasked+1, maxStride), at: map[uint32][]place{}}
	// About 64 bits per entry keeps false hits near one sample in a
	// hundred; 64 Ki bits (8 KiB) at most.
	n := min(max(bits.Len(uint(len(forms)*h.stride*64-1)), 6), 16)
	h.bitmap, h.shift = make([]uint64, 1<<n/64), uint(32-n)
	for i, f := range forms {
		for off := range h.stride {
			k := binary.LittleEndian.Uint32(f[off:])
			h.at[k] = append(h.at[k], place{int32(i), int32(off)})
			x := k * 0x9E3779B1 >> h.shift
			h.bitmap[x/64] |= 1 << (x % 64)
		}
	}
	return h
}

// contains reports whether b holds any of forms (those newHeads indexed).
func (h *heads) contains(b []byte, forms [][]byte) bool {
	if h.stride == 0 {
		for _, f := range forms {
			if bytes.Contains(b, f) {
				return true
			}
		}
		return false
	}
	bitmap, shift := h.bitmap, h.shift
	for p := 0; p+minMasked <= len(b); p += h.stride {
		k := binary.LittleEndian.Uint32(b[p:])
		if x := k * 0x9E3779B1 >> shift; bitmap[x/64]&(1<<(x%64)) == 0 {
			continue
		}
		for _, pl := range h.at[k] {
			if i := p - int(pl.off); i >= 0 && bytes.HasPrefix(b[i:], forms[pl.form]) {
				return true
			}
		}
	}
	return false
}
