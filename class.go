package legate

// Class is the operation class of a call: how much it can change the world.
type Class string

// The operation classes, from harmless to irreversible.
const (
	ClassRead        Class = "read"        // reads only
	ClassDraft       Class = "draft"       // a reversible write (a draft, a staged change)
	ClassWrite       Class = "write"       // an external side effect
	ClassDestructive Class = "destructive" // deletes or overwrites what cannot be restored
)

// Valid reports whether c is one of the four classes.
func (c Class) Valid() bool {
	switch c {
	case ClassRead, ClassDraft, ClassWrite, ClassDestructive:
		return true
	}
	return false
}

// Rank orders the classes: read < draft < write < destructive.
func (c Class) Rank() int {
	switch c {
	case ClassRead:
		return 0
	case ClassDraft:
		return 1
	case ClassWrite:
		return 2
	}
	return 3
}

// Result is the stable result of a successful call.
type Result struct {
	// Structured is the result as a JSON object; it becomes the MCP result's
	// structured content and, when Text is empty, its text.
	Structured any
	// Text, when set, is the human-readable text of the result.
	Text string
	// Meta, when set, is the MCP result's _meta: the gateway's own tools
	// give what they relay its provenance in it (legate.result_read).
	Meta map[string]any
}
