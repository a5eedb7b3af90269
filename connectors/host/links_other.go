//go:build !unix

package host

import "io/fs"

func links(fs.FileInfo) (uint64, bool) { return 0, false }
