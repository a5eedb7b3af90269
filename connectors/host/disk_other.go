//go:build !(linux || darwin)

package host

import "errors"

func diskSpace(string) (total, free uint64, err error) {
	return 0, 0, errors.New("not supported on this system")
}
