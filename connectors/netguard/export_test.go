package netguard

import "net/netip"

// WithAllowAddr returns o admitting the addresses allow accepts, for tests
// that need a first hop on 127.0.0.1 while the rest of loopback stays
// blocked.
func WithAllowAddr(o Options, allow func(netip.AddrPort) bool) Options {
	o.allowAddr = allow
	return o
}
