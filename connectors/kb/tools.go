package kb

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/embeddings"
	"github.com/legate-mcp/legate/search"
)

// Search limits.
const (
	defaultLimit = 5
	maxLimit     = 20
	// candidates is how many passages each ranking hands the fusion.
	candidates = 50
	// maxQueryChars bounds a query.
	maxQueryChars = 1000
	// snippetChars bounds the text of a passage in a search result; kb.read
	// gives the rest.
	snippetChars = 1500
)

// The ref kinds.
const (
	refDocument = "kbdoc"
	refPassage  = "kbpassage"
)

type searchArgs struct {
	Query string `json:"query" jsonschema:"What to look for, in words: a question or keywords"`
	Limit int    `json:"limit,omitempty" jsonschema:"Most passages returned, 1 to 20 (default 5)"`
}

// Passage is one passage found.
type Passage struct {
	Ref      string   `json:"ref" jsonschema:"Reference of this passage, for the read tool"`
	Document string   `json:"document" jsonschema:"Reference of the whole document, for the read tool"`
	Source   string   `json:"source" jsonschema:"The file's path or the page's URL"`
	Title    string   `json:"title" jsonschema:"The document's title"`
	Headings []string `json:"headings" jsonschema:"The headings above the passage, outermost first"`
	Text     string   `json:"text" jsonschema:"The passage's text (cut at 1500 characters: the read tool gives it whole)"`
	Cut      bool     `json:"cut,omitempty" jsonschema:"Set when text was cut"`
	Score    float64  `json:"score" jsonschema:"Its score by the ranking used: higher is better"`
}

// SearchResult is kb.search's result.
type SearchResult struct {
	Ranking    string    `json:"ranking" jsonschema:"bm25, or bm25+embeddings when dense ranking was fused in"`
	Passages   []Passage `json:"passages" jsonschema:"Best first"`
	Documents  int       `json:"documents" jsonschema:"Documents indexed"`
	Indexed    int       `json:"indexed" jsonschema:"Passages indexed"`
	DenseError string    `json:"dense_error,omitempty" jsonschema:"Why embeddings were not used for this search, when they are configured but failed: the ranking is BM25 alone"`
	Problems   []problem `json:"problems,omitempty" jsonschema:"Sources that could not be read, or not all of them"`
}

func (c *Connector) searchTool() connectors.Tool {
	desc := "Search the knowledge base (the handbooks, policies, runbooks and other documentation this instance indexes) for the passages that answer a question. " +
		"Returns the best passages, each with its title, headings and a ref for " + c.id + ".read."
	return connectors.Returning[SearchResult](connectors.NewTool("search", desc, legate.ClassRead, c.search))
}

func (c *Connector) search(ctx context.Context, call *connectors.Call, in *searchArgs) (*legate.Result, error) {
	q := strings.TrimSpace(in.Query)
	switch {
	case q == "":
		return nil, legate.Errorf(legate.CodeInvalidArgument, "kb: query is required")
	case utf8.RuneCountInString(q) > maxQueryChars:
		return nil, legate.Errorf(legate.CodeInvalidArgument, "kb: query is over %d characters", maxQueryChars)
	case in.Limit < 0 || in.Limit > maxLimit:
		return nil, legate.Errorf(legate.CodeInvalidArgument, "kb: limit must be between 1 and %d, got %d", maxLimit, in.Limit)
	}
	limit := in.Limit
	if limit == 0 {
		limit = defaultLimit
	}
	s, err := c.ix.ensure(ctx)
	if err != nil {
		return nil, err
	}
	out := SearchResult{Ranking: "bm25", Passages: []Passage{}, Documents: len(s.docs), Indexed: len(s.chunks), Problems: s.problems}
	if why := c.ix.storeProblem(); why != "" {
		out.Problems = append(slices.Clip(out.Problems), problem{Source: "store", Problem: why})
	}
	ranked := c.rank(ctx, call, s, q, &out)
	for _, r := range ranked[:min(limit, len(ranked))] {
		p := s.chunks[r.N]
		ch := p.chunk()
		text := truncateRunes(ch.text, snippetChars)
		out.Passages = append(out.Passages, Passage{
			Ref: c.passageRef(call, p), Document: c.documentRef(call, p.doc), Source: p.doc.source,
			Title: p.doc.title, Headings: ch.headings, Text: text, Cut: text != ch.text, Score: r.Score,
		})
	}
	return &legate.Result{Structured: out, Text: searchText(q, &out)}, nil
}

// rank orders the passages for q: BM25 alone, or fused by reciprocal rank
// with the cosine of embeddings when they are configured and answer.
func (c *Connector) rank(ctx context.Context, call *connectors.Call, s *snapshot, q string, out *SearchResult) []embeddings.Scored {
	hits := s.bm25.Search(q, search.Options{Limit: candidates})
	if c.embed == nil {
		ranked := make([]embeddings.Scored, len(hits))
		for i, h := range hits {
			ranked[i] = embeddings.Scored{N: h.Doc, Score: h.Score}
		}
		return ranked
	}
	lexical := make([]int, len(hits))
	for i, h := range hits {
		lexical[i] = h.Doc
	}
	out.DenseError = c.embed.Paused(time.Now())
	var (
		vectors, qv [][]float32
		err         error
	)
	if out.DenseError == "" {
		vectors, err = c.embed.vectors(ctx, call.Credentials, s)
		if err == nil {
			qv, err = c.embed.embed(ctx, call.Credentials, []string{q})
		}
		if err != nil {
			out.DenseError = err.Error()
			if ctx.Err() == nil { // the endpoint's failure, not the call's end
				c.embed.NoteFailure(out.DenseError)
			}
		}
	}
	if out.DenseError != "" {
		ranked := make([]embeddings.Scored, len(hits))
		for i, h := range hits {
			ranked[i] = embeddings.Scored{N: h.Doc, Score: h.Score}
		}
		return ranked
	}
	out.Ranking = "bm25+embeddings"
	return embeddings.Fuse(lexical, embeddings.Rank(qv[0], len(vectors), func(i int) []float32 { return vectors[i] }, candidates))
}

func searchText(q string, r *SearchResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d passages for %q (%s, %d documents indexed)\n", len(r.Passages), q, r.Ranking, r.Documents)
	for i, p := range r.Passages {
		fmt.Fprintf(&b, "\n%d. %s", i+1, p.Title)
		if len(p.Headings) > 1 {
			fmt.Fprintf(&b, " › %s", strings.Join(p.Headings[1:], " › "))
		}
		fmt.Fprintf(&b, "\n   source: %s\n   ref: %s\n%s\n", p.Source, p.Ref, indent(p.Text))
	}
	if r.DenseError != "" {
		fmt.Fprintf(&b, "\nembeddings not used: %s\n", r.DenseError)
	}
	for _, p := range r.Problems {
		fmt.Fprintf(&b, "\nnot indexed: %s: %s", p.Source, p.Problem)
	}
	return b.String()
}

func indent(s string) string {
	return "   " + strings.ReplaceAll(s, "\n", "\n   ")
}

// passageRef is the signed ref of a passage: its document's source and
// its content hash, so that it names the same passage on every replica
// and names nothing once the passage has changed.
func (c *Connector) passageRef(call *connectors.Call, p passage) string {
	return c.kit.Ref(call, refPassage, p.chunk().hash+" "+p.doc.source)
}

func (c *Connector) documentRef(call *connectors.Call, d *document) string {
	return c.kit.Ref(call, refDocument, d.source)
}

type readArgs struct {
	Ref      string `json:"ref" jsonschema:"A ref the search tool returned: a passage's (ref) or a document's (document)"`
	Offset   int    `json:"offset,omitempty" jsonschema:"Character to start from (default 0): next_offset of the previous read"`
	MaxChars int    `json:"max_chars,omitempty" jsonschema:"Most characters returned (default and ceiling: the instance's max_read_chars)"`
}

// ReadResult is kb.read's result.
type ReadResult struct {
	Source     string   `json:"source" jsonschema:"The file's path or the page's URL"`
	Title      string   `json:"title" jsonschema:"The document's title"`
	Headings   []string `json:"headings,omitempty" jsonschema:"For a passage, the headings above it, outermost first"`
	Document   string   `json:"document" jsonschema:"Reference of the whole document"`
	Text       string   `json:"text" jsonschema:"The text from offset, at most max_chars characters"`
	Offset     int      `json:"offset" jsonschema:"Where text starts, in characters"`
	TotalChars int      `json:"total_chars" jsonschema:"Characters of the whole passage or document"`
	NextOffset int      `json:"next_offset,omitempty" jsonschema:"Where the next read starts; absent at the end"`
}

func (c *Connector) readTool() connectors.Tool {
	desc := "Read a passage of the knowledge base, or all of its document, by a ref " + c.id + ".search returned, in parts: " +
		"the next part starts at next_offset."
	return connectors.Returning[ReadResult](connectors.NewTool("read", desc, legate.ClassRead, c.read))
}

func (c *Connector) read(ctx context.Context, call *connectors.Call, in *readArgs) (*legate.Result, error) {
	max := in.MaxChars
	switch {
	case in.Ref == "":
		return nil, legate.Errorf(legate.CodeInvalidArgument, "kb: ref is required")
	case in.Offset < 0:
		return nil, legate.Errorf(legate.CodeInvalidArgument, "kb: offset must not be negative, got %d", in.Offset)
	case max < 0 || max > c.cfg.MaxReadChars:
		return nil, legate.Errorf(legate.CodeInvalidArgument, "kb: max_chars must be between 1 and %d, got %d", c.cfg.MaxReadChars, max)
	case max == 0:
		max = c.cfg.MaxReadChars
	}
	s, err := c.ix.ensure(ctx)
	if err != nil {
		return nil, err
	}
	var out ReadResult
	var text string
	switch {
	case strings.HasPrefix(in.Ref, refPassage+"://"):
		v, err := c.kit.Resolve(call, refPassage, in.Ref)
		if err != nil {
			return nil, err
		}
		hash, source, _ := strings.Cut(v, " ")
		d, ch := s.docs[source], (*chunk)(nil)
		if d != nil {
			for i := range d.chunks {
				if d.chunks[i].hash == hash {
					ch = &d.chunks[i]
					break
				}
			}
		}
		if ch == nil {
			return nil, legate.Errorf(legate.CodeNotFound, "kb: the passage is no longer in %s: it changed or was removed since the search; search again", source)
		}
		out = ReadResult{Source: source, Title: d.title, Headings: ch.headings, Document: c.documentRef(call, d)}
		text = ch.text
	default:
		source, err := c.kit.Resolve(call, refDocument, in.Ref)
		if err != nil {
			return nil, err
		}
		d := s.docs[source]
		if d == nil {
			return nil, legate.Errorf(legate.CodeNotFound, "kb: %s is no longer indexed", source)
		}
		out = ReadResult{Source: source, Title: d.title, Document: in.Ref}
		text = d.text
	}
	rs := []rune(text)
	out.TotalChars = len(rs)
	if in.Offset > len(rs) {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "kb: offset %d is past the end (%d characters)", in.Offset, len(rs))
	}
	end := min(in.Offset+max, len(rs))
	out.Offset, out.Text = in.Offset, string(rs[in.Offset:end])
	if end < len(rs) {
		out.NextOffset = end
	}
	return &legate.Result{Structured: out, Text: readText(&out)}, nil
}

func readText(r *ReadResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s)", r.Title, r.Source)
	if len(r.Headings) > 1 {
		fmt.Fprintf(&b, " › %s", strings.Join(r.Headings[1:], " › "))
	}
	fmt.Fprintf(&b, "\ncharacters %d–%d of %d\n\n%s", r.Offset, r.Offset+utf8.RuneCountInString(r.Text), r.TotalChars, r.Text)
	if r.NextOffset > 0 {
		fmt.Fprintf(&b, "\n\n[more: read again with offset %d]", r.NextOffset)
	}
	return b.String()
}

// truncateRunes cuts s to at most n characters.
func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}
