package panel

import (
	"reflect"
	"testing"
)

func TestFieldValue(t *testing.T) {
	for name, tc := range map[string]struct {
		kind string
		in   []string
		want any
	}{
		"empty string":     {"string", []string{""}, nil},
		"string":           {"string", []string{" https://x "}, "https://x"},
		"bool unchecked":   {"bool", nil, false},
		"bool checked":     {"bool", []string{"true"}, true},
		"int":              {"int", []string{"12"}, int64(12)},
		"list":             {"list", []string{"a\n\n b \n"}, []string{"a", "b"}},
		"map with numbers": {"map", []string{"per_second=10\nburst = 2\nname=x"}, map[string]any{"per_second": int64(10), "burst": int64(2), "name": "x"}},
	} {
		got, err := fieldValue(tc.kind, tc.in)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %#v, %v; want %#v", name, got, err, tc.want)
		}
	}
	if _, err := fieldValue("int", []string{"many"}); err == nil {
		t.Error("an int field took many")
	}
	if _, err := fieldValue("map", []string{"no equals"}); err == nil {
		t.Error("a map field took a line without =")
	}
}
