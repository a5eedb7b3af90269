package config

import (
	"reflect"

	"github.com/legate-mcp/legate/internal/strictyaml"
	"github.com/legate-mcp/legate/vault"
)

// Key is one key of config.yaml in the spec: its path, with [] for the
// items of a list and * for any key of a map ("upstreams[].tools.include",
// "connectors[].credentials.*"), and its field.
type Key struct {
	Path string
	strictyaml.Field
}

// Spec lists every key of config.yaml, depth first in the order of the
// file's types. It is read from the struct tags, so it cannot disagree
// with what is decoded, defaulted and validated.
func Spec() []Key {
	var keys []Key
	err := strictyaml.Walk(reflect.TypeFor[File](), "", specLeaf, func(path string, f strictyaml.Field) {
		keys = append(keys, Key{Path: path, Field: f})
	})
	if err != nil {
		panic(err) // the tags are constants, checked by the tests
	}
	return keys
}

// specLeaf stops the spec at types described as a whole: a credential
// reference is one of three forms, written out in the schema.
func specLeaf(t reflect.Type) bool { return t == reflect.TypeFor[vault.Ref]() }
