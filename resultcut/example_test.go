package resultcut_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/resultcut"
)

// A log of 5,000 lines cut to a budget of 300 tokens: its first and last
// lines around the notice, within the budget.
func ExampleCut() {
	var log strings.Builder
	for i := 1; i <= 5000; i++ {
		fmt.Fprintf(&log, "12:00:%02d GET /items/%d 200\n", i%60, i)
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: log.String()}}}
	keep := resultcut.Keep{Ref: "rexample", ReadTool: "legate__result_read", Retention: time.Hour}
	cut, c := resultcut.Cut(res, 300, keep, false)
	text := cut.Content[0].(*mcp.TextContent).Text
	lines := strings.Split(strings.TrimSpace(text), "\n")
	fmt.Println(lines[0])
	fmt.Println(lines[len(lines)-1])
	fmt.Println(resultcut.ResultTokens(cut) <= 300, c.Tokens, c.Pages)
	// Output:
	// 12:00:01 GET /items/1 200
	// 12:00:20 GET /items/5000 200
	// true 35974 178
}
