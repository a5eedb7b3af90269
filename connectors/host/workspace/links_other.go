//go:build !unix

package workspace

import "io/fs"

func links(fs.FileInfo) (uint64, bool) { return 0, false }
