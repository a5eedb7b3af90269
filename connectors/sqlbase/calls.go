package sqlbase

import (
	"strings"
)

// pgSyntax are PostgreSQL's reserved and column-name keywords: unquoted,
// none of them can name a function, so one followed by "(" is syntax
// (IN (…), EXISTS (…), COALESCE(…), numeric(10, 2), OVER …), never a call.
var pgSyntax = setOf(
	// reserved
	"all", "analyse", "analyze", "and", "any", "array", "as", "asc", "asymmetric", "both", "case", "cast", "check",
	"collate", "column", "constraint", "create", "current_catalog", "current_date", "current_role", "current_time",
	"current_timestamp", "current_user", "default", "deferrable", "desc", "distinct", "do", "else", "end", "except",
	"false", "fetch", "for", "foreign", "from", "grant", "group", "having", "in", "initially", "intersect", "into",
	"lateral", "leading", "limit", "localtime", "localtimestamp", "not", "null", "offset", "on", "only", "or",
	"order", "placing", "primary", "references", "returning", "select", "session_user", "some", "symmetric",
	"system_user", "table", "then", "to", "trailing", "true", "union", "unique", "user", "using", "variadic", "when",
	"where", "window", "with",
	// column-name keywords
	"between", "bigint", "bit", "boolean", "char", "character", "coalesce", "dec", "decimal", "exists", "extract",
	"float", "greatest", "grouping", "inout", "int", "integer", "interval", "least", "national", "nchar", "none",
	"normalize", "nullif", "numeric", "out", "overlay", "position", "precision", "real", "row", "setof", "smallint",
	"substring", "time", "timestamp", "treat", "trim", "values", "varchar", "xmlattributes", "xmlconcat",
	"xmlelement", "xmlexists", "xmlforest", "xmlnamespaces", "xmlparse", "xmlpi", "xmlroot", "xmlserialize",
	"xmltable",
)

// mysqlSyntax are MySQL and MariaDB reserved words that stand before "("
// as syntax, and the type names CAST and CONVERT take with a length.
var mysqlSyntax = setOf(
	"all", "and", "any", "as", "between", "by", "case", "distinct", "else", "exists", "for", "from", "group", "having",
	"in", "intersect", "except", "is", "join", "lateral", "like", "limit", "not", "on", "or", "order", "over",
	"partition", "regexp", "rlike", "row", "select", "some", "then", "union", "using", "values", "value", "when",
	"where", "window", "with", "xor", "escape", "index", "key", "signed", "unsigned", "decimal", "dec", "numeric",
	"datetime", "double", "float", "nchar", "varchar", "real", "integer", "int", "bigint", "smallint", "tinyint",
	"character", "national", "collate", "mode", "boolean", "elseif", "recursive", "ignore", "force", "use", "straight_join",
)

// pgInfixWords are keywords that may also name a function (so not in
// pgSyntax) but stand between two operands: after an operand, "like (" is
// syntax, not a call.
var pgInfixWords = setOf("like", "ilike", "overlaps", "join", "similar", "is", "isnull", "notnull")

// checkReadCalls refuses the first call in toks (a read) of a function
// that is neither built-in and read-only nor allowed by the operator, and
// a PostgreSQL attribute reference (x.name, which calls name(x)) to a
// function a read may not call.
func checkReadCalls(d Dialect, toks []token, allow *Funcs) error {
	depth := 0
	inWith := map[int]bool{}
	for i, t := range toks {
		switch {
		case t.kind == tokOp && t.text == "(":
			depth++
			continue
		case t.kind == tokOp && t.text == ")":
			inWith[depth] = false
			depth--
			continue
		case wordIs(t, "with") && (i == 0 || toks[i-1].kind == tokOp && toks[i-1].text == "("):
			inWith[depth] = true // a WITH that starts a statement, not WITH ROLLUP or WITH TIME ZONE
		case wordIs(t, "select") || wordIs(t, "values") || wordIs(t, "table"):
			inWith[depth] = false
		}
		if t.kind != tokWord && t.kind != tokQuoted {
			continue
		}
		next := i+1 < len(toks) && toks[i+1].kind == tokOp && toks[i+1].text == "("
		if !next {
			if d == Postgres && i >= 2 && toks[i-1].kind == tokOp && toks[i-1].text == "." {
				if name := identName(t); FunctionDenied(d, strings.ToLower(name)) || pgCatalog().other[name] {
					return refuse("%s after a dot calls the function %s (attribute notation): it is not allowed in a read", name, name)
				}
			}
			continue
		}
		schema, name, start := qualifiedName(toks, i)
		// A denied name is refused before anything may read it as syntax.
		if FunctionDenied(d, strings.ToLower(name)) {
			return refuse("the function %s is not allowed: it reaches outside the database, runs SQL given as text, changes settings or state, waits, locks, or signals other sessions", name)
		}
		if schema == "" && notACall(d, toks, i, start, inWith[depth]) {
			continue
		}
		if allow.allows(schema, name) {
			continue
		}
		builtin := map[Dialect]map[string]bool{Postgres: pgCatalog().read, MySQL: mysqlRead}[d]
		if (schema == "" || d == Postgres && schema == "pg_catalog") && builtin[name] {
			continue
		}
		shown := name
		if schema != "" {
			shown = schema + "." + name
		}
		hint := ""
		if d == Postgres && schema == "" && start > 0 && isOperand(toks[start-1]) {
			hint = " (a table alias with column names needs AS before it: AS " + name + "(…))"
		}
		return refuse("the function %s is not allowed in a read: only the database's built-in read-only functions are, and those the instance's allow_functions names%s", shown, hint)
	}
	return nil
}

// qualifiedName reads the name that ends at toks[i]: its schema ("" when
// unqualified, "?" when qualified by something not a name, as in
// (x).f), the name, and the index of its first token. Unquoted names fold
// to lower case, quoted ones keep theirs (a quoted "Lower" is not lower).
func qualifiedName(toks []token, i int) (schema, name string, start int) {
	name, start = identName(toks[i]), i
	if i >= 2 && toks[i-1].kind == tokOp && toks[i-1].text == "." {
		start = i - 2
		if p := toks[i-2]; p.kind == tokWord || p.kind == tokQuoted {
			schema = identName(p)
			for start >= 2 && toks[start-1].kind == tokOp && toks[start-1].text == "." && (toks[start-2].kind == tokWord || toks[start-2].kind == tokQuoted) {
				start -= 2
			}
		} else {
			schema = "?"
		}
	}
	return schema, name, start
}

// identName is the name a word or quoted identifier stands for: unquoted,
// folded to lower case (ASCII, as the servers do); quoted, as written.
func identName(t token) string {
	if t.kind == tokQuoted {
		q := t.text[:1]
		return strings.ReplaceAll(t.text[1:len(t.text)-1], q+q, q)
	}
	return strings.ToLower(t.text)
}

// notACall reports whether the unqualified word at toks[i], followed by
// "(", is syntax rather than a function call: a keyword, a type with its
// length, a table alias or CTE with its column names, FILTER (…), OVER (…).
func notACall(d Dialect, toks []token, i, start int, inWith bool) bool {
	t := toks[i]
	w := strings.ToLower(t.text)
	if t.kind == tokWord && (d == Postgres && pgSyntax[w] || d == MySQL && mysqlSyntax[w]) {
		return true
	}
	if start == 0 {
		return false
	}
	prev := toks[start-1]
	switch {
	// After an operand, a name followed by "(" is an alias with its
	// column names, or FILTER, OVER, REPEATABLE, AGAINST: no call can
	// follow an operand without an operator between them.
	case prev.kind == tokOp && prev.text == ")":
		return true
	// AS t(a, b), CAST(x AS varchar(10)), AS MATERIALIZED (…).
	case wordIs(prev, "as"):
		return true
	// x::numeric(10, 2).
	case prev.kind == tokOp && prev.text == ":" && start >= 2 && toks[start-2].kind == tokOp && toks[start-2].text == ":":
		return true
	// WITH t(a) AS (…), WITH RECURSIVE t(a) AS (…), …, u(b) AS (…).
	case inWith && (wordIs(prev, "with") || wordIs(prev, "recursive") || prev.kind == tokOp && prev.text == ","):
		return true
	}
	if t.kind != tokWord || d != Postgres {
		return false
	}
	switch {
	case w == "sets" && wordIs(prev, "grouping"),
		(w == "cube" || w == "rollup") && wordIs(prev, "by"),
		(w == "system" || w == "bernoulli") && wordIs(prev, "tablesample"),
		w == "materialized" && wordIs(prev, "not"),
		w == "varying" && (wordIs(prev, "character") || wordIs(prev, "char") || wordIs(prev, "bit") || wordIs(prev, "nchar")),
		w == "zone" && wordIs(prev, "time"):
		return true
	}
	return pgInfixWords[w] && isOperand(prev)
}

// isOperand reports whether t can end an operand: a name that is not a
// keyword, a literal, a parameter, a closing bracket.
func isOperand(t token) bool {
	switch t.kind {
	case tokQuoted, tokString, tokNumber, tokParam:
		return true
	case tokWord:
		return !pgSyntax[strings.ToLower(t.text)] && !pgInfixWords[strings.ToLower(t.text)]
	case tokOp:
		return t.text == ")" || t.text == "]"
	}
	return false
}
