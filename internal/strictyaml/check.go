package strictyaml

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Check validates the struct v points to, and the structs below it,
// against their tags — required, enum, min — and returns one *PathError
// per problem, below path. Structs for which skip returns true are not
// entered (nil: none): they validate themselves.
func Check(v any, path string, skip func(reflect.Type) bool) []error {
	var errs []error
	check(reflect.ValueOf(v), path, skip, &errs)
	return errs
}

func check(v reflect.Value, path string, skip func(reflect.Type) bool, errs *[]error) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			check(v.Elem(), path, skip, errs)
		}
	case reflect.Slice:
		for i := range v.Len() {
			check(v.Index(i), fmt.Sprintf("%s[%d]", path, i), skip, errs)
		}
	case reflect.Map:
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return cmp.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		for _, k := range keys {
			check(v.MapIndex(k), join(path, fmt.Sprint(k)), skip, errs)
		}
	case reflect.Struct:
		if _, ok := Struct(v.Type()); !ok || skip != nil && skip(v.Type()) {
			return
		}
		fields, err := Spec(v.Type())
		if err != nil {
			*errs = append(*errs, &PathError{path, err.Error()})
			return
		}
		for _, f := range fields {
			fv := v.Field(f.Index)
			p := join(path, f.Name)
			if msg := checkField(fv, f); msg != "" {
				*errs = append(*errs, &PathError{p, msg})
			}
			check(fv, p, skip, errs)
		}
	}
}

// checkField checks one value against its field's tags; "" is fine.
func checkField(v reflect.Value, f Field) string {
	if v.IsZero() {
		if f.Required {
			return "is required"
		}
		return "" // unset: its default applies
	}
	for v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if len(f.Enum) > 0 && v.Kind() == reflect.String && !slices.Contains(f.Enum, v.String()) {
		return fmt.Sprintf("must be %s, not %q", orList(f.Enum), v.String())
	}
	if f.Min == "" {
		return ""
	}
	least, err := strconv.ParseInt(f.Min, 10, 64)
	switch {
	case err != nil:
		return fmt.Sprintf("bad min tag %q", f.Min)
	case v.CanFloat() && v.Float() >= float64(least), v.CanInt() && v.Int() >= least, !v.CanInt() && !v.CanFloat():
		return ""
	case least == 0:
		return "must not be negative"
	}
	return fmt.Sprintf("must be at least %d", least)
}

// orList writes "a", "a or b", "a, b or c".
func orList(s []string) string {
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}
