// Package all imports every connector type so that it registers itself.
// Each type has one file here holding only its blank import; building with
// a smaller set is a matter of deleting files.
package all
