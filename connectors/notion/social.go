package notion

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/notion/internal/md"
	"github.com/legate-mcp/legate/connectors/notion/internal/readback"
	"github.com/legate-mcp/legate/connectors/notion/internal/rest"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

// Comments and users. A discussion's ref holds the page or block it is
// on and its id, so that a reply can be found again after a lost answer
// (Notion lists comments by page or block only).

// social is the comments and users toolsets.
type social struct{ *base }

// MaxCommentRunes bounds a comment's text.
const MaxCommentRunes = 2000

type listCommentsIn struct {
	saas.Page
	On string `json:"on" jsonschema:"the page or block whose comments to list: a ref, a Notion id, or a URL"`
}

type addCommentIn struct {
	On         string `json:"on,omitempty" jsonschema:"the page to comment on: a ref, a Notion id, or a URL; or give discussion"`
	Discussion string `json:"discussion,omitempty" jsonschema:"to reply in a discussion: its thread_ref, from list_comments"`
	Text       string `json:"text" jsonschema:"the comment, inline Markdown: **bold**, _italic_, code, [links](https://…)"`
}

// discussionRef is the ref of discussion on block.
func (c *social) discussionRef(call *connectors.Call, block, discussion string) string {
	return c.kit.Ref(call, kindDiscussion, block+"/"+discussion)
}

// commentOf converts a comment on block to message.v1.
func (c *social) commentOf(call *connectors.Call, block string, cm *rest.Comment) (model.Comment, error) {
	if cm == nil || cm.ID == "" {
		return model.Comment{}, saas.Mapping("notion", "a comment without an id")
	}
	out := model.Comment{
		Object:     c.kit.Object(call, model.MessageV1, "comment", cm.ID),
		ChannelRef: c.parentRef(call, cm.Parent),
		Sender:     &model.Person{ID: cm.CreatedBy.ID, Name: cm.CreatedBy.Name},
		Text:       readback.StripMarker(md.Render(cm.RichText)),
		SentAt:     utc(cm.CreatedTime),
	}
	if cm.DiscussionID != "" {
		out.ThreadRef = c.discussionRef(call, block, cm.DiscussionID)
	}
	return out, nil
}

func (c *social) listComments(ctx context.Context, call *connectors.Call, in *listCommentsIn) (*legate.Result, error) {
	_, id, err := c.resolve(call, "on", in.On, kindPage, kindBlock)
	if err != nil {
		return nil, err
	}
	p, err := c.kit.Open(call, in.Page, DefaultPage, MaxPage)
	if err != nil {
		return nil, err
	}
	q := url.Values{"block_id": {id}, "page_size": {strconv.Itoa(p.Size)}}
	if p.Token != "" {
		q.Set("start_cursor", p.Token)
	}
	var out saas.List[model.Comment]
	err = c.kit.Read(ctx, call, func(ctx context.Context, token string) error {
		var l rest.List[rest.Comment]
		if err := c.api.Send(ctx, token, rest.Request{Method: http.MethodGet, Path: "comments", Query: q}, &l); err != nil {
			return err
		}
		items, err := saas.Convert(l.Results, func(cm rest.Comment) (model.Comment, error) { return c.commentOf(call, id, &cm) })
		if err != nil {
			return err
		}
		out = saas.ListOf(c.kit, call, items, l.Next())
		return nil
	})
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d comment(s)", len(out.Items))
	for _, m := range out.Items {
		fmt.Fprintf(&b, "\n%s %s: %s", m.SentAt.Format(time.RFC3339), rest.OrID(m.Sender.Name, m.Sender.ID), m.Text)
	}
	moreText(&b, out.NextCursor)
	return &legate.Result{Structured: out, Text: b.String()}, nil
}

func (c *social) addComment(ctx context.Context, call *connectors.Call, in *addCommentIn) (*legate.Result, error) {
	if err := checkText("text", in.Text, MaxCommentRunes); err != nil {
		return nil, err
	}
	var block, discussion string
	parent := map[string]any{}
	switch {
	case in.Discussion != "" && in.On != "":
		return nil, legate.Errorf(legate.CodeInvalidArgument, "notion: give on (a new discussion on a page) or discussion (a reply), not both")
	case in.Discussion != "":
		held, err := c.kit.Resolve(call, kindDiscussion, in.Discussion)
		if err != nil {
			return nil, err
		}
		block, discussion, _ = strings.Cut(held, "/")
	case in.On != "":
		_, id, err := c.resolve(call, "on", in.On, kindPage)
		if err != nil {
			return nil, err
		}
		block = id
		parent = map[string]any{"page_id": id}
	default:
		return nil, legate.Errorf(legate.CodeInvalidArgument, "notion: on: give the page to comment on, or discussion to reply in one")
	}
	out, err := saas.WriteOnce(ctx, c.kit, call, saas.Write[model.Comment]{
		Send: func(ctx context.Context, token, marker string) (*model.Comment, error) {
			body := map[string]any{"rich_text": c.find.CommentText(in.Text, marker)}
			if discussion != "" {
				body["discussion_id"] = discussion
			} else {
				body["parent"] = parent
			}
			var cm rest.Comment
			if err := c.api.Send(ctx, token, rest.Request{Method: http.MethodPost, Path: "comments", Body: body}, &cm); err != nil {
				return nil, err
			}
			m, err := c.commentOf(call, block, &cm)
			return &m, err
		},
		Find: func(ctx context.Context, token, marker string, since time.Time) (*model.Comment, error) {
			cm, err := c.find.Comment(ctx, token, block, discussion, in.Text, marker, since)
			if err != nil || cm == nil {
				return nil, err
			}
			m, err := c.commentOf(call, block, cm)
			return &m, err
		},
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: "commented: " + out.Text}, nil
}

type listUsersIn struct {
	saas.Page
}

type getUserIn struct {
	User string `json:"user" jsonschema:"the user: a ref from list_users or a Notion user id"`
}

// userOf converts a user to user.v1.
func (c *social) userOf(call *connectors.Call, u *rest.User) (model.User, error) {
	if u == nil || u.ID == "" {
		return model.User{}, saas.Mapping("notion", "a user without an id")
	}
	out := model.User{Object: c.kit.Object(call, model.UserV1, kindUser, u.ID), Name: u.Name, Type: u.Type}
	if u.Person != nil {
		out.Email = u.Person.Email
	}
	if u.Bot != nil && u.Bot.WorkspaceName != "" {
		out.ProviderMetadata = map[string]any{"workspace_name": u.Bot.WorkspaceName}
	}
	return out, nil
}

func userText(u model.User) string {
	s := rest.OrID(u.Name, u.ExternalID) + " (" + u.Type
	if u.Email != "" {
		s += ", " + u.Email
	}
	return s + ")"
}

func (c *social) listUsers(ctx context.Context, call *connectors.Call, in *listUsersIn) (*legate.Result, error) {
	p, err := c.kit.Open(call, in.Page, DefaultPage, MaxPage)
	if err != nil {
		return nil, err
	}
	q := url.Values{"page_size": {strconv.Itoa(p.Size)}}
	if p.Token != "" {
		q.Set("start_cursor", p.Token)
	}
	var out saas.List[model.User]
	err = c.kit.Read(ctx, call, func(ctx context.Context, token string) error {
		var l rest.List[rest.User]
		if err := c.api.Send(ctx, token, rest.Request{Method: http.MethodGet, Path: "users", Query: q}, &l); err != nil {
			return err
		}
		items, err := saas.Convert(l.Results, func(u rest.User) (model.User, error) { return c.userOf(call, &u) })
		if err != nil {
			return err
		}
		out = saas.ListOf(c.kit, call, items, l.Next())
		return nil
	})
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d user(s)", len(out.Items))
	for _, u := range out.Items {
		b.WriteString("\n" + userText(u))
	}
	moreText(&b, out.NextCursor)
	return &legate.Result{Structured: out, Text: b.String()}, nil
}

func (c *social) getUser(ctx context.Context, call *connectors.Call, in *getUserIn) (*legate.Result, error) {
	_, id, err := c.resolve(call, "user", in.User, kindUser)
	if err != nil {
		return nil, err
	}
	var out model.User
	err = c.kit.Read(ctx, call, func(ctx context.Context, token string) error {
		var u rest.User
		if err := c.api.Send(ctx, token, rest.Request{Method: http.MethodGet, Path: "users/" + id}, &u); err != nil {
			return err
		}
		out, err = c.userOf(call, &u)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: userText(out)}, nil
}
