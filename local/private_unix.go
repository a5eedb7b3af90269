//go:build unix

package local

import (
	"fmt"
	"os"
	"syscall"
)

// private checks that dir, where a socket is, is a directory (not a link)
// of this user's that no one else may write to: in a shared folder such
// as /tmp, another user could otherwise put a socket of theirs in place
// of the server's.
func private(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Getuid() || fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s is not a directory of this user's that only it may write to: refusing its admin socket", dir)
	}
	return nil
}
