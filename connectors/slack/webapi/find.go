package webapi

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/slack-go/slack"

	"github.com/legate-mcp/legate"
)

// findPages bounds the history read looking for a lost post;
// findFirstPage is the size of the first page of a channel's.
const findPages, findFirstPage = 5, 20

// FindPost looks through api for the message match tells in channel (or
// in the thread of threadTS), posted since since: the post of an earlier
// attempt; metadata asks for the messages' metadata (where markers are).
// It returns slack-go's errors as they come, for the connector to map.
func FindPost(ctx context.Context, api Reads, channel, threadTS string, match func(slack.Message) bool, since time.Time, metadata bool) (*slack.Message, error) {
	oldest := strconv.FormatInt(since.Unix(), 10)
	cursor := ""
	// The channel's history comes newest first, and a lost post is
	// among the newest: a short first page, then full ones.
	limit := findFirstPage
	for range findPages {
		var msgs []slack.Message
		var next string
		if threadTS == "" {
			resp, err := api.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{
				ChannelID: channel, Oldest: oldest, Cursor: cursor, Limit: limit, IncludeAllMetadata: metadata})
			limit = 200
			if err != nil {
				return nil, err
			}
			msgs, next = resp.Messages, resp.ResponseMetaData.NextCursor
		} else {
			var err error
			msgs, _, next, err = api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{
				ChannelID: channel, Timestamp: threadTS, Oldest: oldest, Cursor: cursor, Limit: 200, IncludeAllMetadata: metadata})
			if err != nil {
				return nil, err
			}
		}
		if i := slices.IndexFunc(msgs, match); i >= 0 {
			return &msgs[i], nil
		}
		if next == "" {
			return nil, nil
		}
		cursor = next
	}
	// Not in the pages read: so many messages since that the post, if
	// any, is out of reach; sending again could duplicate it.
	return nil, legate.Errorf(legate.CodeConflict, "slack: cannot tell whether an earlier attempt posted: more than %d pages of messages since; check the channel", findPages)
}
