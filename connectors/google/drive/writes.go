package drive

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"google.golang.org/api/drive/v3"
	"google.golang.org/api/googleapi"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/google/gcore"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

// MaxUploadBytes bounds the content of an uploaded file.
const MaxUploadBytes = 5 << 20

// markerKey is the appProperties key of the marker a created file
// carries with markers on: private to the OAuth app, not shown in Drive.
const markerKey = "legate_operation"

type uploadIn struct {
	Name     string `json:"name" jsonschema:"the file's name"`
	Content  string `json:"content" jsonschema:"the file's content, text"`
	MimeType string `json:"mime_type,omitempty" jsonschema:"the content's MIME type (default text/plain); give application/vnd.google-apps.document to have Drive convert the text into a Google Doc, application/vnd.google-apps.spreadsheet to convert CSV into a spreadsheet"`
	Folder   string `json:"folder,omitempty" jsonschema:"ref of the folder to put it in (default: My Drive's root)"`
	FolderID string `json:"folder_id,omitempty" jsonschema:"the folder's Drive id, instead of folder"`
}

type shareIn struct {
	fileArg
	Type         string `json:"type" jsonschema:"who to share with: user, group, domain or anyone (anyone only when the instance allows public sharing)"`
	Role         string `json:"role" jsonschema:"reader, commenter or writer"`
	EmailAddress string `json:"email_address,omitempty" jsonschema:"the user's or group's email, for type user or group"`
	Domain       string `json:"domain,omitempty" jsonschema:"the domain, for type domain"`
	Notify       bool   `json:"notify,omitempty" jsonschema:"have Google email the person or group (default false)"`
}

// permission is a sharing of a file.
type permission struct {
	ID           string `json:"id"`
	File         string `json:"file_ref"`
	Type         string `json:"type"`
	Role         string `json:"role"`
	EmailAddress string `json:"email_address,omitempty"`
	Domain       string `json:"domain,omitempty"`
}

// uploadConversions are the Google types a text upload may be converted to.
var uploadConversions = map[string]string{MimeDocument: "text/plain", MimeSpreadsheet: "text/csv", MimePresentation: "text/plain"}

func (t Tools) uploadFile(ctx context.Context, call *connectors.Call, in *uploadIn) (*legate.Result, error) {
	switch {
	case strings.TrimSpace(in.Name) == "" || len(in.Name) > 1000:
		return nil, legate.Errorf(legate.CodeInvalidArgument, "google: name: between 1 and 1000 bytes")
	case len(in.Content) > MaxUploadBytes:
		return nil, legate.Errorf(legate.CodeInvalidArgument, "google: content: at most %d bytes", MaxUploadBytes)
	}
	mime, media := in.MimeType, in.MimeType
	if mime == "" {
		mime, media = "text/plain", "text/plain"
	}
	if conv, ok := uploadConversions[mime]; ok {
		media = conv
	} else if strings.HasPrefix(mime, "application/vnd.google-apps.") {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "google: mime_type: %s cannot be made from text; give a Docs, Sheets or Slides type, or the content's own", mime)
	}
	parent := ""
	if in.Folder != "" || in.FolderID != "" {
		var err error
		if parent, err = t.Core.FileID(call, in.Folder, in.FolderID, "folder", "folder_id"); err != nil {
			return nil, err
		}
	}
	out, err := saas.WriteOnce(ctx, t.Core.Kit, call, saas.Write[model.File]{
		Send: func(ctx context.Context, token, marker string) (*model.File, error) {
			api, err := t.api(ctx, token)
			if err != nil {
				return nil, err
			}
			f := &drive.File{Name: in.Name, MimeType: mime}
			if parent != "" {
				f.Parents = []string{parent}
			}
			if t.Core.Kit.Markers() {
				f.AppProperties = map[string]string{markerKey: marker}
			}
			made, err := api.Files.Create(f).Media(strings.NewReader(in.Content), googleapi.ContentType(media)).
				Fields(fileFields).SupportsAllDrives(true).Context(ctx).Do()
			if err != nil {
				return nil, gcore.MapError(ctx, err)
			}
			file, err := t.fileOf(call, made)
			return &file, err
		},
		Find: func(ctx context.Context, token, marker string, since time.Time) (*model.File, error) {
			q := "trashed = false and name = " + quote(in.Name) + " and createdTime > " + quote(since.UTC().Format(time.RFC3339))
			if t.Core.Kit.Markers() {
				q += " and appProperties has { key=" + quote(markerKey) + " and value=" + quote(marker) + " }"
			}
			if parent != "" {
				q += " and " + quote(parent) + " in parents"
			}
			return t.findFile(ctx, call, token, q)
		},
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: "created " + fileText(*out)}, nil
}

// findFile returns the newest file of q, nil when there is none.
func (t Tools) findFile(ctx context.Context, call *connectors.Call, token, q string) (*model.File, error) {
	api, err := t.api(ctx, token)
	if err != nil {
		return nil, err
	}
	list, err := api.Files.List().Q(q).OrderBy("createdTime desc").PageSize(1).Fields("files(" + fileFields + ")").
		SupportsAllDrives(true).IncludeItemsFromAllDrives(true).Context(ctx).Do()
	if err != nil {
		return nil, gcore.MapError(ctx, err)
	}
	if len(list.Files) == 0 {
		return nil, nil
	}
	f, err := t.fileOf(call, list.Files[0])
	return &f, err
}

// FindFile is findFile for the other services' writes that create a
// Drive file (a document, a spreadsheet): the newest file named name of
// type mime the token's account created since.
func FindFile(ctx context.Context, core *gcore.Core, call *connectors.Call, token, name, mime string, since time.Time) (*model.File, error) {
	q := "trashed = false and 'me' in owners and name = " + quote(name) + " and mimeType = " + quote(mime) +
		" and createdTime > " + quote(since.UTC().Format(time.RFC3339))
	return Tools{Core: core}.findFile(ctx, call, token, q)
}

func (t Tools) shareFile(ctx context.Context, call *connectors.Call, in *shareIn) (*legate.Result, error) {
	id, err := t.Core.FileID(call, in.File, in.FileID, "file", "file_id")
	if err != nil {
		return nil, err
	}
	if err := t.checkShare(in); err != nil {
		return nil, err
	}
	perm := &drive.Permission{Type: in.Type, Role: in.Role, EmailAddress: in.EmailAddress, Domain: in.Domain}
	out, err := saas.WriteOnce(ctx, t.Core.Kit, call, saas.Write[permission]{
		Send: func(ctx context.Context, token, _ string) (*permission, error) {
			api, err := t.api(ctx, token)
			if err != nil {
				return nil, err
			}
			p, err := api.Permissions.Create(id, perm).SendNotificationEmail(in.Notify).SupportsAllDrives(true).
				Fields("id,type,role,emailAddress,domain").Context(ctx).Do()
			if err != nil {
				return nil, gcore.MapError(ctx, err)
			}
			return t.permissionOf(call, id, p), nil
		},
		// The sharing is the file's state: look for it.
		Find: func(ctx context.Context, token, _ string, _ time.Time) (*permission, error) {
			api, err := t.api(ctx, token)
			if err != nil {
				return nil, err
			}
			list, err := api.Permissions.List(id).SupportsAllDrives(true).Fields("permissions(id,type,role,emailAddress,domain)").Context(ctx).Do()
			if err != nil {
				return nil, gcore.MapError(ctx, err)
			}
			i := slices.IndexFunc(list.Permissions, func(p *drive.Permission) bool {
				return p.Type == in.Type && p.Role == in.Role && strings.EqualFold(p.EmailAddress, in.EmailAddress) && strings.EqualFold(p.Domain, in.Domain)
			})
			if i < 0 {
				return nil, nil
			}
			return t.permissionOf(call, id, list.Permissions[i]), nil
		},
	})
	if err != nil {
		return nil, err
	}
	who := out.Type
	if w := out.EmailAddress + out.Domain; w != "" {
		who += " " + w
	}
	return &legate.Result{Structured: out, Text: fmt.Sprintf("shared with %s as %s (permission %s)", who, out.Role, out.ID)}, nil
}

func (t Tools) checkShare(in *shareIn) error {
	if !slices.Contains([]string{"reader", "commenter", "writer"}, in.Role) {
		return legate.Errorf(legate.CodeInvalidArgument, "google: role: reader, commenter or writer, got %q", in.Role)
	}
	switch in.Type {
	case "user", "group":
		if !strings.Contains(in.EmailAddress, "@") || in.Domain != "" {
			return legate.Errorf(legate.CodeInvalidArgument, "google: type %s: give email_address, and no domain", in.Type)
		}
	case "domain":
		if in.Domain == "" || in.EmailAddress != "" {
			return legate.Errorf(legate.CodeInvalidArgument, "google: type domain: give domain, and no email_address")
		}
	case "anyone":
		if !t.Public {
			return legate.Errorf(legate.CodePermissionDenied, "google: sharing with anyone (a public link) is off for this instance; share with a user, group or domain, or ask the operator to set allow_public_sharing")
		}
		if in.Domain != "" || in.EmailAddress != "" {
			return legate.Errorf(legate.CodeInvalidArgument, "google: type anyone: give no email_address or domain")
		}
	default:
		return legate.Errorf(legate.CodeInvalidArgument, "google: type: user, group, domain or anyone, got %q", in.Type)
	}
	return nil
}

func (t Tools) permissionOf(call *connectors.Call, file string, p *drive.Permission) *permission {
	return &permission{ID: p.Id, File: t.Core.Kit.Ref(call, gcore.KindFile, file), Type: p.Type, Role: p.Role, EmailAddress: p.EmailAddress, Domain: p.Domain}
}
