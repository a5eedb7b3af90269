package toolresult

import (
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/provenance"
)

// Mask returns res with every form of every secret of s in it replaced
// by legate.Redacted. The shape Native makes (text contents, raw
// structured content) is masked in place; any other is masked as its
// JSON, decoded again only when it held a secret, and withheld whole if
// the masked JSON no longer decodes.
func Mask(s *legate.Secrets, res *mcp.CallToolResult) *mcp.CallToolResult {
	if s.Empty() || res == nil {
		return res
	}
	name, byAuthor := provenance.AuthorIn(res.Meta) // a connector's author, masked as text is
	simple := res.Meta == nil || byAuthor
	for _, c := range res.Content {
		if _, ok := c.(*mcp.TextContent); !ok {
			simple = false
		}
	}
	raw, rawOK := res.StructuredContent.(json.RawMessage)
	if simple && (res.StructuredContent == nil || rawOK) {
		for _, c := range res.Content {
			t := c.(*mcp.TextContent)
			t.Text = s.MaskString(t.Text)
		}
		if rawOK {
			res.StructuredContent = json.RawMessage(s.Mask(raw, false))
		}
		if byAuthor {
			res.Meta = provenance.Author(s.MaskString(name))
		}
		return res
	}
	if out := MaskJSON(s, res); out != nil {
		return out
	}
	return &mcp.CallToolResult{IsError: res.IsError, Content: []mcp.Content{&mcp.TextContent{Text: legate.Redacted}}}
}

// MaskJSON masks v as its JSON, decoded again only when it held a
// secret; nil when the masked JSON no longer decodes (a secret's form
// straddled the JSON's structure).
func MaskJSON[T any](s *legate.Secrets, v *T) *T {
	b, err := json.Marshal(v)
	if err != nil || !s.Contains(b) {
		return v
	}
	var out T
	if json.Unmarshal(s.Mask(b, false), &out) != nil {
		return nil
	}
	return &out
}

// MaskError masks the text a client or the log sees of err. A
// *legate.Error keeps its code, an upstream's *jsonrpc.Error stays a
// protocol error; err itself is returned when it holds no secret.
func MaskError(s *legate.Secrets, err error) error {
	if s.Empty() || err == nil {
		return err
	}
	var ce *legate.Error
	if errors.As(err, &ce) {
		if !s.Contains([]byte(ce.Error())) {
			return err
		}
		masked := *ce
		masked.Message = s.MaskString(ce.Message)
		if ce.Err != nil {
			masked.Err = errors.New(s.MaskString(ce.Err.Error()))
		}
		return &masked
	}
	var re *jsonrpc.Error
	if errors.As(err, &re) {
		if !s.Contains([]byte(re.Message)) && !s.Contains(re.Data) {
			return err
		}
		masked := *re
		masked.Message = s.MaskString(re.Message)
		if re.Data != nil {
			masked.Data = s.Mask(re.Data, false)
		}
		return &masked
	}
	if !s.Contains([]byte(err.Error())) {
		return err
	}
	return &legate.Error{Code: legate.CodeOf(err), Message: s.MaskString(err.Error())}
}
