package sqlbase

import (
	"fmt"
	"strings"
)

// Dialect is the SQL dialect a statement is read in: how comments,
// strings, quoted identifiers and parameters are written.
type Dialect int

// The dialects the guard reads.
const (
	// Postgres reads PostgreSQL with standard_conforming_strings on:
	// nested /* */ comments, -- comments, '…' strings (E'…' with
	// backslash escapes), "…" identifiers, $tag$…$tag$ strings, $n
	// parameters.
	Postgres Dialect = iota + 1
	// MySQL reads MySQL and MariaDB with ANSI_QUOTES and
	// NO_BACKSLASH_ESCAPES off: /* */ comments that do not nest, "-- "
	// and # comments, '…' and "…" strings with backslash escapes, `…`
	// identifiers, ? parameters.
	MySQL
)

func (d Dialect) String() string {
	switch d {
	case Postgres:
		return "postgres"
	case MySQL:
		return "mysql"
	}
	return fmt.Sprintf("dialect(%d)", int(d))
}

// tokKind is the kind of a lexical token.
type tokKind int

const (
	tokWord   tokKind = iota + 1 // keyword or bare identifier
	tokQuoted                    // quoted identifier
	tokString                    // string literal, any form
	tokNumber                    // numeric literal
	tokParam                     // $n or ?
	tokSemi                      // ;
	tokOp                        // any other punctuation or operator character
)

// token is one lexical token: its kind and its exact text in the input.
type token struct {
	kind tokKind
	text string
	// space is set when whitespace or a comment preceded the token.
	space bool
}

// lexError is a statement the lexer cannot read to its end.
type lexError string

func (e lexError) Error() string { return string(e) }

// lex splits sql into tokens, dropping whitespace and comments. It reads
// every construct of the dialect that can hide text (comments, strings,
// quoted identifiers, dollar quotes), so that a word it returns is a word
// the server reads as code, and text inside a literal is never taken for
// one.
func lex(d Dialect, sql string) ([]token, error) {
	var toks []token
	space := false
	i := 0
	for i < len(sql) {
		c := sql[i]
		start := i
		switch {
		case c == 0:
			return nil, lexError("the statement holds a NUL byte")
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
			space = true
			continue
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-' && (d == Postgres || i+2 < len(sql) && mysqlDashSpace(sql[i+2])):
			i = lineEnd(d, sql, i)
			space = true
			continue
		case c == '#' && d == MySQL:
			i = lineEnd(d, sql, i)
			space = true
			continue
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			if d == MySQL && (strings.HasPrefix(sql[i:], "/*!") || strings.HasPrefix(sql[i:], "/*M!")) {
				return nil, lexError("executable comments (/*! … */) are not allowed")
			}
			end, err := commentEnd(d, sql, i)
			if err != nil {
				return nil, err
			}
			i = end
			space = true
			continue
		case c == '\'' || (c == '"' && d == MySQL):
			end, err := quotedEnd(sql, i, c, d == MySQL)
			if err != nil {
				return nil, err
			}
			i = end
			toks = append(toks, token{kind: tokString, text: sql[start:i], space: space})
		case c == '"' || (c == '`' && d == MySQL):
			end, err := quotedEnd(sql, i, c, false)
			if err != nil {
				return nil, lexError("unterminated quoted identifier")
			}
			i = end
			toks = append(toks, token{kind: tokQuoted, text: sql[start:i], space: space})
		case c == '$' && d == Postgres:
			if i+1 < len(sql) && isDigit(sql[i+1]) {
				i++
				for i < len(sql) && isDigit(sql[i]) {
					i++
				}
				toks = append(toks, token{kind: tokParam, text: sql[start:i], space: space})
				break
			}
			end, ok, err := dollarEnd(sql, i)
			if err != nil {
				return nil, err
			}
			if !ok {
				i++
				toks = append(toks, token{kind: tokOp, text: "$", space: space})
				break
			}
			i = end
			toks = append(toks, token{kind: tokString, text: sql[start:i], space: space})
		case c == '?' && d == MySQL:
			i++
			toks = append(toks, token{kind: tokParam, text: "?", space: space})
		case isDigit(c) || (c == '.' && i+1 < len(sql) && isDigit(sql[i+1])):
			i = numberEnd(sql, i)
			if d == MySQL && i < len(sql) && isIdent(sql[i]) {
				// MySQL identifiers may begin with digits (1abc).
				for i < len(sql) && isIdent(sql[i]) {
					i++
				}
				toks = append(toks, token{kind: tokWord, text: sql[start:i], space: space})
				break
			}
			toks = append(toks, token{kind: tokNumber, text: sql[start:i], space: space})
		case isIdentStart(c):
			for i < len(sql) && isIdent(sql[i]) {
				i++
			}
			word := sql[start:i]
			if d == Postgres && (word == "e" || word == "E") && i < len(sql) && sql[i] == '\'' {
				end, err := quotedEnd(sql, i, '\'', true)
				if err != nil {
					return nil, err
				}
				i = end
				toks = append(toks, token{kind: tokString, text: sql[start:i], space: space})
				break
			}
			toks = append(toks, token{kind: tokWord, text: word, space: space})
		case c == ';':
			i++
			toks = append(toks, token{kind: tokSemi, text: ";", space: space})
		default:
			i++
			toks = append(toks, token{kind: tokOp, text: sql[start:i], space: space})
		}
		space = false
	}
	return toks, nil
}

// mysqlDashSpace reports whether c, after "--", makes a MySQL comment: a
// space or a control character.
func mysqlDashSpace(c byte) bool { return c <= ' ' || c == 0x7f }

// lineEnd returns the index after the comment that starts at i and runs
// to the end of its line.
func lineEnd(d Dialect, sql string, i int) int {
	for i < len(sql) && sql[i] != '\n' && (d == MySQL || sql[i] != '\r') {
		i++
	}
	return i
}

// commentEnd returns the index after the /* comment at i: PostgreSQL
// comments nest, MySQL comments end at the first */.
func commentEnd(d Dialect, sql string, i int) (int, error) {
	depth := 0
	for i < len(sql) {
		switch {
		case strings.HasPrefix(sql[i:], "/*"):
			if d == Postgres || depth == 0 {
				depth++
			}
			i += 2
		case strings.HasPrefix(sql[i:], "*/"):
			depth--
			i += 2
			if depth == 0 {
				return i, nil
			}
		default:
			i++
		}
	}
	return 0, lexError("unterminated /* comment")
}

// quotedEnd returns the index after the literal opened by q at i; a
// doubled q stands for itself and, with backslash, \ escapes the next
// byte.
func quotedEnd(sql string, i int, q byte, backslash bool) (int, error) {
	for i++; i < len(sql); i++ {
		switch sql[i] {
		case '\\':
			if backslash {
				i++
			}
		case q:
			if i+1 < len(sql) && sql[i+1] == q {
				i++
				continue
			}
			return i + 1, nil
		}
	}
	return 0, lexError("unterminated string literal")
}

// dollarEnd returns the index after the dollar-quoted string at i
// ($$…$$ or $tag$…$tag$); ok is false when no dollar quote starts there.
func dollarEnd(sql string, i int) (end int, ok bool, err error) {
	j := i + 1
	if j < len(sql) && isIdentStart(sql[j]) {
		for j < len(sql) && isIdent(sql[j]) && sql[j] != '$' {
			j++
		}
	}
	if j >= len(sql) || sql[j] != '$' {
		return 0, false, nil
	}
	tag := sql[i : j+1]
	k := strings.Index(sql[j+1:], tag)
	if k < 0 {
		return 0, false, lexError("unterminated dollar-quoted string " + tag)
	}
	return j + 1 + k + len(tag), true, nil
}

// numberEnd returns the index after the number at i: digits, an optional
// fraction, an optional exponent. Letters after it are left for the next
// token, as PostgreSQL reads them.
func numberEnd(sql string, i int) int {
	for i < len(sql) && isDigit(sql[i]) {
		i++
	}
	if i < len(sql) && sql[i] == '.' {
		i++
		for i < len(sql) && isDigit(sql[i]) {
			i++
		}
	}
	if i+1 < len(sql) && (sql[i] == 'e' || sql[i] == 'E') {
		j := i + 1
		if sql[j] == '+' || sql[j] == '-' {
			j++
		}
		if j < len(sql) && isDigit(sql[j]) {
			for j < len(sql) && isDigit(sql[j]) {
				j++
			}
			i = j
		}
	}
	return i
}

func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool { return c == '_' || c >= 0x80 || (c|0x20) >= 'a' && (c|0x20) <= 'z' }
func isIdent(c byte) bool      { return isIdentStart(c) || isDigit(c) || c == '$' }
