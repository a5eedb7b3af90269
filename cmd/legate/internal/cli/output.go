// Package cli holds what every command of the legate CLI shares in how it
// prints and reads: the -o formats of list and show commands, records and
// side-by-side diffs for people, and flag values such as ages in days.
package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"
)

// The formats of -o that every list and show command prints; table is
// for people, json and yaml for scripts. A command may add its own
// (audit's jsonl, a stream of one object per line).
const (
	Table = "table"
	JSON  = "json"
	YAML  = "yaml"
	JSONL = "jsonl"
)

// Flag is the -o flag of a list or show command: one implementation, so
// that every command takes the same formats and prints them the same way.
type Flag struct {
	// Format is the format chosen.
	Format  string
	formats []string
	// legacy is what the deprecated --json stands for ("" without it):
	// scripts written against it keep getting what they got.
	legacy     string
	legacyJSON bool
}

// Add gives cmd `-o table|json|yaml` (and the extra formats), and
// with legacy != "" a hidden, deprecated `--json` meaning `-o legacy`. The
// format is checked before the command runs, so a wrong one fails before
// any store is opened.
func Add(cmd *cobra.Command, legacy string, extra ...string) *Flag {
	o := &Flag{formats: append([]string{Table, JSON, YAML}, extra...), legacy: legacy}
	cmd.Flags().StringVarP(&o.Format, "output", "o", Table, "output format: "+o.names())
	if legacy != "" {
		cmd.Flags().BoolVar(&o.legacyJSON, "json", false, "same as -o "+legacy)
		cmd.Flags().MarkHidden("json")
	}
	prev := cmd.PreRunE
	cmd.PreRunE = func(cmd *cobra.Command, argv []string) error {
		if err := o.check(cmd); err != nil {
			return err
		}
		if prev != nil {
			return prev(cmd, argv)
		}
		return nil
	}
	return o
}

// names lists the formats for people: "table, json or yaml".
func (o *Flag) names() string {
	n := len(o.formats)
	return strings.Join(o.formats[:n-1], ", ") + " or " + o.formats[n-1]
}

// check resolves --json into the format and refuses a format the command
// does not print, naming those it does.
func (o *Flag) check(cmd *cobra.Command) error {
	if o.legacyJSON {
		if cmd.Flags().Changed("output") && o.Format != o.legacy {
			return fmt.Errorf("--json and -o %s disagree: use -o alone", o.Format)
		}
		o.Format = o.legacy
		fmt.Fprintf(cmd.ErrOrStderr(), "note: --json is deprecated; use -o %s\n", o.legacy)
	}
	if !slices.Contains(o.formats, o.Format) {
		return fmt.Errorf("-o %q: want %s", o.Format, o.names())
	}
	return nil
}

// Is reports whether the chosen format is f.
func (o *Flag) Is(f string) bool { return o.Format == f }

// Print writes v to cmd's standard output in the chosen format. In json
// and yaml a nil slice is an empty list; in jsonl each element of a slice
// is one line. In table format, table writes v, except that an empty
// slice prints empty instead (a sentence saying there is nothing and how
// to add some, never a bare header).
func (o *Flag) Print(cmd *cobra.Command, v any, empty string, table func(w io.Writer) error) error {
	w := cmd.OutOrStdout()
	rv := reflect.ValueOf(v)
	isSlice := rv.Kind() == reflect.Slice
	if isSlice && rv.IsNil() {
		v = reflect.MakeSlice(rv.Type(), 0, 0).Interface()
	}
	switch o.Format {
	case JSON:
		return WriteJSON(w, v)
	case YAML:
		return WriteYAML(w, v)
	case JSONL:
		if !isSlice {
			return WriteJSONLine(w, v)
		}
		for i := range rv.Len() {
			if err := WriteJSONLine(w, rv.Index(i).Interface()); err != nil {
				return err
			}
		}
		return nil
	}
	if isSlice && rv.Len() == 0 && empty != "" {
		_, err := fmt.Fprintln(w, empty)
		return err
	}
	return table(w)
}

// WriteJSONLine writes v as one line of JSON.
func WriteJSONLine(w io.Writer, v any) error { return json.NewEncoder(w).Encode(v) }

// WriteJSON writes v as indented JSON.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// WriteYAML writes v as YAML with the names and order of its JSON form
// (its json tags, its custom marshalers), so the two formats agree: v is
// encoded to JSON, read back as a YAML node tree, and written in block
// style.
func WriteYAML(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return err
	}
	blockStyle(&doc)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// blockStyle clears the flow and quoting styles JSON's syntax left on n,
// so the encoder picks YAML's own (it still quotes what needs quoting).
// Empty lists and maps stay in flow style: [] and {}.
func blockStyle(n *yaml.Node) {
	if (n.Kind == yaml.SequenceNode || n.Kind == yaml.MappingNode) && len(n.Content) == 0 {
		n.Style = yaml.FlowStyle
		return
	}
	n.Style = 0
	for _, c := range n.Content {
		blockStyle(c)
	}
}
