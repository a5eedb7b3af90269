package netguard

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// ErrBlocked is matched (errors.Is) by every refusal of a blocked address.
// The caller must not retry: the address stays refused until the instance
// is configured with allow_private_networks: true.
var ErrBlocked = errors.New("address refused")

// BlockedError is the refusal of one address. Its text says which address
// was refused, why, and which setting allows it; it never holds a URL path,
// query or credential.
type BlockedError struct {
	// Host is the name or literal as requested, when known.
	Host string
	// Addr is the refused IP address.
	Addr netip.Addr
	// Reason names the blocked range, e.g. "loopback" or "link-local".
	Reason string
	// Hint, when set, says what allows the address instead of the
	// default advice (allow_private_networks on the connector).
	Hint string
}

func (e *BlockedError) Error() string {
	target := e.Addr.String()
	if e.Host != "" && e.Host != target {
		target = fmt.Sprintf("%s (%s)", e.Host, e.Addr)
	}
	hint := e.Hint
	if hint == "" {
		hint = "set allow_private_networks: true on the connector to allow private networks"
	}
	return fmt.Sprintf("refused to connect to %s: %s addresses are blocked to prevent server-side request forgery; %s", target, e.Reason, hint)
}

// Is makes errors.Is(err, ErrBlocked) true.
func (e *BlockedError) Is(target error) bool { return target == ErrBlocked }

// Blocked reports whether ip is refused when private networks are not
// allowed: loopback, unspecified, private, link-local (169.254.169.254, the
// cloud metadata address, included), CGNAT, ULA, multicast, broadcast,
// reserved, and IPv6 forms that embed such an IPv4 address (IPv4-mapped,
// IPv4-compatible, NAT64, 6to4). An invalid address is blocked.
func Blocked(ip netip.Addr) bool { return reason(ip) != "" }

// CheckHost refuses a host that is a blocked literal IP address or a
// localhost name; it returns a *BlockedError. Other names pass: they are
// checked at dial time, against the address actually connected to.
// host may carry a port and IPv6 brackets, as url.URL.Host does.
func CheckHost(host string) error {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if ip, err := netip.ParseAddr(h); err == nil {
		if r := reason(ip); r != "" {
			return &BlockedError{Host: h, Addr: ip, Reason: r}
		}
		return nil
	}
	name := strings.ToLower(strings.TrimSuffix(h, "."))
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return &BlockedError{Host: h, Addr: netip.IPv6Loopback(), Reason: "loopback"}
	}
	return nil
}

type blockedRange struct {
	prefix netip.Prefix
	reason string
}

// v4Blocked lists the IPv4 ranges refused, beyond what netip's predicates
// cover.
var v4Blocked = []blockedRange{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"}, // "this network"; 0.0.0.0 reaches the host itself
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.0.0.0/24"), "reserved"}, // IETF protocol assignments
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("198.18.0.0/15"), "reserved"}, // benchmarking; used by fake-IP proxies
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"}, // includes 255.255.255.255 broadcast
}

// v6Blocked lists IPv6 ranges refused outright.
var v6Blocked = []blockedRange{
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "private"}, // local-use NAT64: translates into the local network
	{netip.MustParsePrefix("100::/64"), "reserved"},      // discard-only
	{netip.MustParsePrefix("2001::/32"), "reserved"},     // Teredo tunnels reach obfuscated IPv4 hosts
	{netip.MustParsePrefix("fc00::/7"), "private"},       // unique local
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("fec0::/10"), "link-local"}, // deprecated site-local
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
}

// v6Embedding lists IPv6 ranges that carry an IPv4 address, and where.
var v6Embedding = []struct {
	prefix netip.Prefix
	at     int // byte offset of the embedded IPv4 address
}{
	{netip.MustParsePrefix("::/96"), 12},           // IPv4-compatible (deprecated)
	{netip.MustParsePrefix("::ffff:0:0:0/96"), 12}, // IPv4-translated (SIIT)
	{netip.MustParsePrefix("64:ff9b::/96"), 12},    // NAT64 well-known prefix
	{netip.MustParsePrefix("2002::/16"), 2},        // 6to4
}

// reason returns why ip is blocked, or "" when it is not.
func reason(ip netip.Addr) string {
	if !ip.IsValid() {
		return "invalid"
	}
	ip = ip.WithZone("").Unmap()
	if ip.Is4() {
		for _, r := range v4Blocked {
			if r.prefix.Contains(ip) {
				return r.reason
			}
		}
		return ""
	}
	for _, r := range v6Blocked {
		if r.prefix.Contains(ip) {
			return r.reason
		}
	}
	for _, e := range v6Embedding {
		if e.prefix.Contains(ip) {
			b := ip.As16()
			v4 := netip.AddrFrom4([4]byte(b[e.at : e.at+4]))
			if r := reason(v4); r != "" {
				return r + " (embedded IPv4)"
			}
		}
	}
	return ""
}
