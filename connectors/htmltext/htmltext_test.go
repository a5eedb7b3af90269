package htmltext

import "testing"

func TestText(t *testing.T) {
	tests := map[string]struct{ in, want string }{
		"paragraphs and breaks": {"<p>One</p><p>Two<br>Three</p>", "One\n\nTwo\nThree"},
		"entities":              {"Fish &amp; chips &lt;3 &eacute;t&eacute; &#8364;5", "Fish & chips <3 été €5"},
		"script, style, head":   {"<head><title>t</title></head><style>p{}</style>Hi<script>x<1</script> there", "Hi there"},
		"comments":              {"a<!-- <p>hidden</p> -->b", "ab"},
		"attributes and case":   {`<DIV class="x">A</DIV><a href="https://e.example/?a=1&amp;b=2">link</a>`, "A\nlink"},
		"blank runs folded":     {"<p>  a   b  </p>\n\n\n<p>c</p>", "a b\n\nc"},
		"unclosed tag":          {"text <b", "text"},
		"list":                  {"<ul><li>x</li><li>y</li></ul>", "x\ny"},
	}
	for name, tc := range tests {
		if got := Text(tc.in); got != tc.want {
			t.Errorf("%s: got %q; want %q", name, got, tc.want)
		}
	}
}
