package connectors

import "bytes"

// Redacted stands in for a secret a provider echoed back.
const Redacted = "[redacted]"

// minMasked is the shortest value masked: shorter ones would mangle
// ordinary text without protecting much.
const minMasked = 4

// Mask returns b with every secret value in it replaced by Redacted. With
// truncated (b was cut at a size limit), the start of a secret left at the
// very end by the cut is replaced too. A connector passes every credential
// it sent through Mask before any provider text reaches a result or error.
func Mask(b []byte, truncated bool, secrets ...string) []byte {
	for _, s := range secrets {
		if len(s) < minMasked {
			continue
		}
		b = bytes.ReplaceAll(b, []byte(s), []byte(Redacted))
		if truncated {
			for k := len(s) - 1; k >= minMasked; k-- {
				if bytes.HasSuffix(b, []byte(s[:k])) {
					b = append(b[:len(b)-k:len(b)-k], Redacted...)
					break
				}
			}
		}
	}
	return b
}

// Contains reports whether b holds any of the secrets Mask would replace.
func Contains(b []byte, secrets ...string) bool {
	for _, s := range secrets {
		if len(s) >= minMasked && bytes.Contains(b, []byte(s)) {
			return true
		}
	}
	return false
}
