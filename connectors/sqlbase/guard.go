package sqlbase

import (
	"strconv"
	"strings"

	"github.com/legate-mcp/legate"
)

// Statement is one statement the guard accepted.
type Statement struct {
	// Text is what is sent to the server: the tokens the guard checked,
	// comments removed, a trailing semicolon dropped. Nothing the guard
	// did not read as a token reaches the server, so a comment or a
	// lexing trick cannot smuggle text past it.
	Text string
	// Params is the number of parameters the text refers to: the highest
	// $n (postgres), or the count of ? (mysql).
	Params int
}

// The words a read refuses wherever they stand, because they write, lock
// or send rows somewhere: a data-modifying CTE (WITH x AS (DELETE …)),
// SELECT … INTO, INTO OUTFILE, FOR UPDATE, LOCK IN SHARE MODE.
var readDenied = map[string]bool{
	"insert": true, "update": true, "delete": true, "merge": true, "into": true,
	"outfile": true, "dumpfile": true, "lock": true,
}

// mysqlReadDenied are words refused in MySQL reads beside readDenied.
var mysqlReadDenied = map[string]bool{"procedure": true}

// The words a write may start with.
var writeStarts = map[Dialect]map[string]bool{
	Postgres: {"insert": true, "update": true, "delete": true, "merge": true, "with": true},
	MySQL:    {"insert": true, "update": true, "delete": true, "replace": true, "with": true},
}

// The words refused in writes: sending rows to a file.
var writeDenied = map[string]bool{"outfile": true, "dumpfile": true}

// writeAllowedFuncs are deniedFuncs a write may call: taking a sequence
// value is what inserts do.
var writeAllowedFuncs = setOf("nextval", "setval", "lastval")

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// CheckRead accepts sql when it is exactly one SELECT (or WITH … SELECT)
// that neither writes nor locks, and calls only the dialect's built-in
// read-only functions; the refusal, INVALID_ARGUMENT, says why. It is the
// guard's early, clear refusal: the READ ONLY transaction, the
// one-statement protocol and the database role hold even for what it
// misses.
func CheckRead(d Dialect, sql string) (*Statement, error) { return CheckReadAllowing(d, sql, nil) }

// CheckReadAllowing is CheckRead that also lets the read call the
// functions allow names (an instance's allow_functions).
func CheckReadAllowing(d Dialect, sql string, allow *Funcs) (*Statement, error) {
	toks, err := statement(d, sql)
	if err != nil {
		return nil, err
	}
	first := 0
	for first < len(toks) && toks[first].kind == tokOp && toks[first].text == "(" {
		first++
	}
	if first == len(toks) || toks[first].kind != tokWord || !(wordIs(toks[first], "select") || wordIs(toks[first], "with")) {
		return nil, refuse("only a SELECT (or WITH … SELECT) statement may be run by query, not %s; writes go through execute", describe(toks, first))
	}
	for i, t := range toks {
		if t.kind == tokWord {
			w := strings.ToLower(t.text)
			if readDenied[w] || (d == MySQL && mysqlReadDenied[w]) {
				return nil, refuse("%s is not allowed in a read (it writes, locks or exports rows); an identifier spelled like it must be quoted", strings.ToUpper(w))
			}
		}
		if d == MySQL && t.kind == tokOp && t.text == ":" && i+1 < len(toks) && toks[i+1].text == "=" && !toks[i+1].space {
			return nil, refuse("assignments (:=) are not allowed in a read")
		}
		if d == MySQL && wordIs(t, "next") && i+2 < len(toks) && wordIs(toks[i+1], "value") && wordIs(toks[i+2], "for") {
			return nil, refuse("NEXT VALUE FOR takes a sequence value: it is not allowed in a read")
		}
	}
	if err := checkReadCalls(d, toks, allow); err != nil {
		return nil, err
	}
	return assemble(d, toks), nil
}

// CheckWrite accepts sql when it is exactly one INSERT, UPDATE, DELETE,
// MERGE (postgres), REPLACE (mysql) or WITH … of them, calling no function
// that escapes the database ([FunctionDenied]). Writes are not held to the
// read allowlist: a write instance's role may already change the data.
func CheckWrite(d Dialect, sql string) (*Statement, error) {
	toks, err := statement(d, sql)
	if err != nil {
		return nil, err
	}
	if toks[0].kind != tokWord || !writeStarts[d][strings.ToLower(toks[0].text)] {
		return nil, refuse("execute runs one INSERT, UPDATE, DELETE or %s statement, not %s", map[Dialect]string{Postgres: "MERGE", MySQL: "REPLACE"}[d], describe(toks, 0))
	}
	if wordIs(toks[0], "with") {
		found := false
		for _, t := range toks[1:] {
			found = found || t.kind == tokWord && writeStarts[d][strings.ToLower(t.text)] && !wordIs(t, "with")
		}
		if !found {
			return nil, refuse("a WITH statement run by execute must insert, update or delete; reads go through query")
		}
	}
	for i, t := range toks {
		if t.kind == tokWord && writeDenied[strings.ToLower(t.text)] {
			return nil, refuse("%s is not allowed", strings.ToUpper(t.text))
		}
		if err := checkFunc(d, toks, i); err != nil {
			return nil, err
		}
	}
	return assemble(d, toks), nil
}

// statement lexes sql and checks that it is one statement: no semicolon
// but trailing ones, which are dropped.
func statement(d Dialect, sql string) ([]token, error) {
	toks, err := lex(d, sql)
	if err != nil {
		return nil, refuse("%v", err)
	}
	for i, t := range toks {
		// U&"…" spells a name with escapes (U&"pg\005fread\005ffile" is
		// pg_read_file) that the name checks would not see through.
		if d == Postgres && t.kind == tokQuoted && !t.space && i >= 2 && toks[i-1].text == "&" && !toks[i-1].space && wordIs(toks[i-2], "u") {
			return nil, refuse(`Unicode-escaped identifiers (U&"…") are not allowed: write the name plainly`)
		}
	}
	for len(toks) > 0 && toks[len(toks)-1].kind == tokSemi {
		toks = toks[:len(toks)-1]
	}
	if len(toks) == 0 {
		return nil, refuse("the statement is empty")
	}
	for _, t := range toks {
		if t.kind == tokSemi {
			return nil, refuse("only one statement may be run: remove the semicolon and what follows it")
		}
	}
	return toks, nil
}

// checkFunc refuses toks[i] (in a write) when it names a denied
// function: a name, bare or quoted, followed by an opening parenthesis, or
// (postgres) after a dot, which calls it by attribute notation.
func checkFunc(d Dialect, toks []token, i int) error {
	t := toks[i]
	call := i+1 < len(toks) && toks[i+1].text == "("
	attr := d == Postgres && i >= 2 && toks[i-1].kind == tokOp && toks[i-1].text == "."
	if (t.kind != tokWord && t.kind != tokQuoted) || !call && !attr {
		return nil
	}
	name := strings.ToLower(identName(t))
	if !FunctionDenied(d, name) || writeAllowedFuncs[name] {
		return nil
	}
	return refuse("the function %s is not allowed: it reaches outside the database, changes settings or state, or signals other sessions", name)
}

// assemble joins the tokens back into the text sent to the server, one
// space where the input had whitespace or a comment.
func assemble(d Dialect, toks []token) *Statement {
	var b strings.Builder
	params := 0
	for i, t := range toks {
		// A space after "--" would start a MySQL comment: the two minus
		// signs (read apart in the input only because a comment stood
		// after them) stay joined to what follows, as the server read them.
		if t.space && i > 0 && !(d == MySQL && strings.HasSuffix(b.String(), "--")) {
			b.WriteByte(' ')
		}
		b.WriteString(t.text)
		if t.kind == tokParam {
			if d == MySQL {
				params++
			} else if n, err := strconv.Atoi(t.text[1:]); err == nil && n > params {
				params = n
			}
		}
	}
	return &Statement{Text: b.String(), Params: params}
}

func wordIs(t token, w string) bool { return t.kind == tokWord && strings.EqualFold(t.text, w) }

// describe names the token at i for a refusal.
func describe(toks []token, i int) string {
	if i >= len(toks) {
		return "an empty statement"
	}
	t := toks[i]
	if t.kind == tokWord {
		return strings.ToUpper(t.text)
	}
	s := t.text
	if len(s) > 20 {
		s = s[:20] + "…"
	}
	return strconv.Quote(s)
}

func refuse(format string, args ...any) *legate.Error {
	return legate.Errorf(legate.CodeInvalidArgument, "sql guard: "+format, args...)
}

// References reports whether sql names table (its last part, bare or
// quoted, in any case): the operation table is refused to execute, so
// that no statement erases the record that keeps retries from writing
// twice.
func References(d Dialect, sql, table string) bool {
	if i := strings.LastIndexByte(table, '.'); i >= 0 {
		table = table[i+1:]
	}
	toks, err := lex(d, sql)
	if err != nil {
		return true
	}
	for _, t := range toks {
		name := t.text
		if t.kind == tokQuoted {
			name = name[1 : len(name)-1]
		} else if t.kind != tokWord {
			continue
		}
		if strings.EqualFold(name, table) {
			return true
		}
	}
	return false
}
