package strictyaml

import (
	"errors"
	"fmt"
	"reflect"

	"go.yaml.in/yaml/v3"
)

// ApplyDefaults sets every unset key of the struct v points to, and of the
// structs below it (through pointers, lists and maps), to its default tag:
// a zero value takes the default, a map takes the default's keys it lacks.
// A nil pointer stays nil: an absent section gets no defaults. A key whose
// default is true must be a *bool, or an explicit false could not be told
// from an unset key.
func ApplyDefaults(v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("strictyaml: defaults need a non-nil pointer, got %T", v)
	}
	return applyDefaults(rv.Elem())
}

func applyDefaults(v reflect.Value) error {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			return applyDefaults(v.Elem())
		}
	case reflect.Slice:
		var errs []error
		for i := range v.Len() {
			errs = append(errs, applyDefaults(v.Index(i)))
		}
		return errors.Join(errs...)
	case reflect.Map:
		return mapDefaults(v)
	case reflect.Struct:
		return structDefaults(v)
	}
	return nil
}

// mapDefaults applies the defaults of each value, copied out and back
// since map values are not addressable.
func mapDefaults(v reflect.Value) error {
	if _, ok := Struct(v.Type().Elem()); !ok {
		return nil
	}
	var errs []error
	for _, k := range v.MapKeys() {
		e := reflect.New(v.Type().Elem()).Elem()
		e.Set(v.MapIndex(k))
		errs = append(errs, applyDefaults(e))
		v.SetMapIndex(k, e)
	}
	return errors.Join(errs...)
}

func structDefaults(v reflect.Value) error {
	if _, ok := Struct(v.Type()); !ok {
		return nil // a text value or a raw node
	}
	fields, err := Spec(v.Type())
	if err != nil {
		return err
	}
	var errs []error
	for _, f := range fields {
		fv := v.Field(f.Index)
		if f.Default != "" {
			if err := setDefault(fv, f); err != nil {
				errs = append(errs, fmt.Errorf("strictyaml: %s.%s: bad default %q: %w", v.Type(), f.Name, f.Default, err))
				continue
			}
		}
		errs = append(errs, applyDefaults(fv))
	}
	return errors.Join(errs...)
}

func setDefault(fv reflect.Value, f Field) error {
	if fv.Kind() == reflect.Bool && f.Default == "true" {
		return errors.New("a key defaulting to true must be a *bool")
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(f.Default), &doc); err != nil {
		return err
	}
	def := reflect.New(fv.Type())
	if err := Decode(&doc, def.Interface(), ""); err != nil {
		return err
	}
	switch {
	case fv.Kind() == reflect.Map:
		if fv.IsNil() {
			fv.Set(reflect.MakeMap(fv.Type()))
		}
		for _, k := range def.Elem().MapKeys() {
			if !fv.MapIndex(k).IsValid() {
				fv.SetMapIndex(k, def.Elem().MapIndex(k))
			}
		}
	case fv.IsZero():
		fv.Set(def.Elem())
	}
	return nil
}
