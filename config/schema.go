package config

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
	"go.yaml.in/yaml/v3"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/internal/strictyaml"
	"github.com/legate-mcp/legate/policy"
	"github.com/legate-mcp/legate/vault"
)

// SchemaID names the JSON Schema of config.yaml.
const SchemaID = "https://github.com/legate-mcp/legate/config/schema.json"

// envPattern matches a value holding a ${NAME} reference, which is
// expanded before the value is read: the schema accepts it where a number,
// a boolean or a duration is due.
const envPattern = `\$\{[A-Za-z_][A-Za-z0-9_]*\}`

// durationPattern is what time.ParseDuration accepts, without a sign, or
// a ${NAME} reference.
const durationPattern = `^(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$|` + envPattern

// Schema returns the JSON Schema (draft 2020-12) of config.yaml, made from
// the spec: every key with its description, default, enum and bounds,
// required keys, no other keys (additionalProperties: false), durations as
// strings such as "30s"; a connector instance's config and credentials
// follow the spec of its type, for the types registered. Editors use it through a first line
// `# yaml-language-server: $schema=<file or URL>`.
func Schema() *jsonschema.Schema {
	s := typeSchema(reflect.TypeFor[File]())
	instanceSchemas(s.Properties["connectors"].Items)
	s.Schema = "https://json-schema.org/draft/2020-12/schema"
	s.ID = SchemaID
	s.Title = "Legate configuration (config.yaml)"
	s.Description = "Every key is optional: legate serve runs with no config file at all. ${NAME} in a value is replaced by the environment variable NAME; $$ is a literal $."
	return s
}

var (
	nodeType      = reflect.TypeFor[yaml.Node]()
	refType       = reflect.TypeFor[vault.Ref]()
	durationType  = reflect.TypeFor[legate.Duration]()
	textType      = reflect.TypeFor[encoding.TextUnmarshaler]()
	valuesOfTypes = map[reflect.Type][]string{
		reflect.TypeFor[legate.Class]():  {string(legate.ClassRead), string(legate.ClassDraft), string(legate.ClassWrite), string(legate.ClassDestructive)},
		reflect.TypeFor[policy.Action](): {string(policy.Allow), string(policy.Deny), string(policy.Approve)},
	}
)

// typeSchema describes a value of Go type t.
func typeSchema(t reflect.Type) *jsonschema.Schema {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == nodeType:
		return &jsonschema.Schema{Type: "object"}
	case t == refType:
		return refSchema()
	case t == durationType:
		return &jsonschema.Schema{Type: "string", Pattern: durationPattern}
	case valuesOfTypes[t] != nil:
		return &jsonschema.Schema{Type: "string", Enum: anys(valuesOfTypes[t])}
	case reflect.PointerTo(t).Implements(textType):
		return &jsonschema.Schema{Type: "string"}
	}
	switch t.Kind() {
	case reflect.Bool:
		return orEnvRef("boolean")
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint, reflect.Uint64, reflect.Uint32:
		return orEnvRef("integer")
	case reflect.Float64, reflect.Float32:
		return orEnvRef("number")
	case reflect.Slice:
		return &jsonschema.Schema{Type: "array", Items: typeSchema(t.Elem())}
	case reflect.Map:
		s := &jsonschema.Schema{Type: "object", AdditionalProperties: typeSchema(t.Elem())}
		if keys := valuesOfTypes[t.Key()]; keys != nil {
			s.PropertyNames = &jsonschema.Schema{Enum: anys(keys)}
		}
		return s
	case reflect.Struct:
		return objectSchema(t)
	}
	return &jsonschema.Schema{Type: "string"}
}

// instanceSchemas makes each connector instance's config and credentials
// follow the spec of its type, one if/then per registered type.
func instanceSchemas(item *jsonschema.Schema) {
	item.Properties["type"].Enum = anys(connectors.TypeNames())
	for _, t := range connectors.Types() {
		creds := func() *jsonschema.Schema { // one for credentials, one for each credential set
			s := &jsonschema.Schema{PropertyNames: &jsonschema.Schema{Enum: anys(t.CredentialNames())}, Properties: map[string]*jsonschema.Schema{}}
			for _, c := range t.Credentials {
				s.Properties[c.Name] = &jsonschema.Schema{Description: c.Description}
				s.PropertyOrder = append(s.PropertyOrder, c.Name)
			}
			return s
		}
		then := &jsonschema.Schema{Properties: map[string]*jsonschema.Schema{"credentials": creds(), "credential_sets": {AdditionalProperties: creds()}}}
		if t.Config == nil {
			zero := 0
			then.Properties["config"] = &jsonschema.Schema{MaxProperties: &zero}
		} else {
			then.Properties["config"] = typeSchema(reflect.TypeOf(t.Config()))
		}
		item.AllOf = append(item.AllOf, &jsonschema.Schema{
			If:   &jsonschema.Schema{Properties: map[string]*jsonschema.Schema{"type": {Const: ptr[any](t.Name)}}, Required: []string{"type"}},
			Then: then,
		})
	}
}

func ptr[T any](v T) *T { return &v }

// objectSchema describes a struct's keys from its spec.
func objectSchema(t reflect.Type) *jsonschema.Schema {
	fields, err := strictyaml.Spec(t)
	if err != nil {
		panic(err) // the tags are constants, checked by the tests
	}
	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}, AdditionalProperties: none()}
	for _, f := range fields {
		p := typeSchema(f.Type)
		p.Description = f.Description
		if f.Default != "" {
			p.Default = defaultJSON(f)
		}
		if len(f.Enum) > 0 {
			p.Enum = anys(f.Enum)
		}
		if f.Min != "" && (slices.Contains(p.Types, "integer") || slices.Contains(p.Types, "number")) {
			var least float64
			fmt.Sscan(f.Min, &least)
			p.Minimum = &least
		}
		if f.Example != "" {
			p.Examples = []any{exampleValue(f)}
		}
		if f.Required {
			s.Required = append(s.Required, f.Name)
		}
		s.Properties[f.Name] = p
		s.PropertyOrder = append(s.PropertyOrder, f.Name)
	}
	return s
}

// defaultJSON is a default tag's YAML value as JSON.
func defaultJSON(f strictyaml.Field) json.RawMessage {
	var v any
	if err := yaml.Unmarshal([]byte(f.Default), &v); err != nil {
		panic(fmt.Sprintf("config: default of %s: %v", f.Name, err))
	}
	if f.Type == durationType {
		v = f.Default // 30s, not the number YAML might read
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("config: default of %s: %v", f.Name, err))
	}
	return b
}

// exampleValue is an example tag's value: its text for a string or a
// duration, else the JSON of its YAML ({per_second: 10} is an object).
func exampleValue(f strictyaml.Field) any {
	if k := strictyaml.Kind(f.Type); k == strictyaml.KindString || k == strictyaml.KindDuration {
		return f.Example
	}
	v, err := YAMLToJSON([]byte(f.Example))
	if err != nil {
		panic(fmt.Sprintf("config: example of %s: %v", f.Name, err))
	}
	return v
}

// refSchema describes a credential reference: exactly one source.
func refSchema() *jsonschema.Schema {
	one := 1
	prop := func(desc string) *jsonschema.Schema { return &jsonschema.Schema{Type: "string", Description: desc} }
	return &jsonschema.Schema{
		Type: "object", MinProperties: &one, MaxProperties: &one, AdditionalProperties: none(),
		Properties: map[string]*jsonschema.Schema{
			"env":   prop("Name of the environment variable holding the value"),
			"file":  prop("Path of a file holding the value; one trailing newline is trimmed"),
			"vault": prop("Name of a secret in the vault (legate vault set NAME): the calling tenant's own, else the shared one"),
		},
		PropertyOrder: []string{"env", "file", "vault"},
	}
}

// orEnvRef accepts a value of JSON type typ, or a string holding a
// ${NAME} reference (a pattern applies to strings only).
func orEnvRef(typ string) *jsonschema.Schema {
	return &jsonschema.Schema{Types: []string{typ, "string"}, Pattern: envPattern}
}

// none is the schema that accepts nothing (false), made anew for each
// use since a schema must be a tree.
func none() *jsonschema.Schema { return &jsonschema.Schema{Not: &jsonschema.Schema{}} }

func anys(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
