package sqlbase

// Tokens is lex for the tests: each token's kind and text.
func Tokens(d Dialect, sql string) ([]string, error) {
	toks, err := lex(d, sql)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = string(rune('0'+t.kind)) + t.text
	}
	return out, nil
}
