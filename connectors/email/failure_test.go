package email_test

import (
	"bytes"
	"context"
	"log"
	"log/slog"
	"net"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/connectortest"
)

func TestRefusedLoginIsAuthExpiredNamingTheCredential(t *testing.T) {
	s := newStandin(t)
	for tool, cred := range map[string]string{"search": "imap_password", "send": "smtp_password"} {
		t.Run(tool, func(t *testing.T) {
			in := build(t, s, "email", "")
			in.creds = connectortest.Creds{"imap_password": imapPassword, "smtp_password": smtpPassword}
			in.creds[cred] = "wrong-" + in.creds[cred]
			args := `{}`
			if tool == "send" {
				args = `{"to":["bob@example.com"],"subject":"x","text":"y"}`
			}
			res, err := in.call(t, "t1", tool, args, "op-1")
			le := wantCode(t, err, legate.CodeAuthExpired)
			if !strings.Contains(le.Message, cred) || !strings.Contains(le.Message, user) {
				t.Errorf("message %q does not name the credential and the user", le.Message)
			}
			noSecret(t, texts(res, err)...)
			if strings.Contains(err.Error(), "wrong-") {
				t.Errorf("the refused value shows in %q", err)
			}
		})
	}
	// A credential the instance does not configure is CONFIG_ERROR (not an
	// expired login), before any connection.
	in := build(t, s, "email", "")
	in.creds = connectortest.Creds{"smtp_password": smtpPassword}
	_, err := in.call(t, "t1", "search", `{}`, "")
	if le := wantCode(t, err, legate.CodeConfigError); !strings.Contains(le.Message, "imap_password") {
		t.Errorf("message %q", le.Message)
	}
}

func TestUnreachableServerIsTransient(t *testing.T) {
	s := newStandin(t)
	// A port nothing listens on: take one and give it back.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	s.imapAddr, s.smtpAddr = "127.0.0.1:"+port, "127.0.0.1:"+port
	in := build(t, s, "email", "")
	for tool, args := range map[string]string{"search": `{}`, "draft": `{"to":["bob@example.com"],"subject":"x","text":"y"}`, "send": `{"to":["bob@example.com"],"subject":"x","text":"y"}`} {
		res, err := in.call(t, "t1", tool, args, "op-"+tool)
		wantCode(t, err, legate.CodeTransient)
		noSecret(t, texts(res, err)...)
	}
}

// A private address is refused unless the instance allows it.
func TestPrivateAddressNeedsAllowing(t *testing.T) {
	ct, _ := connectors.Lookup("email")
	s := newStandin(t)
	cfg := strings.Replace(config(s, ""), "allow_private_networks: true", "allow_private_networks: false", 1)
	var node yaml.Node
	if err := yaml.Unmarshal([]byte(cfg), &node); err != nil {
		t.Fatal(err)
	}
	_, err := connectors.Build(ct, "email", &node, "c")
	if err == nil || !strings.Contains(err.Error(), "imap_host") || !strings.Contains(err.Error(), "smtp_host") {
		t.Fatalf("validate: %v", err)
	}
}

// Every result, error, report line and log line the connector causes is
// free of both passwords.
func TestPasswordsNeverShow(t *testing.T) {
	var logs bytes.Buffer
	defer log.SetOutput(log.Writer())
	log.SetOutput(&logs)
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))

	s := newStandin(t)
	seedInbox(t, s, 3)
	in := build(t, s, "email", "")
	var seen []string
	run := func(tool, args, op string) {
		res, err := in.call(t, "t1", tool, args, op)
		seen = append(seen, texts(res, err)...)
	}
	run("search", `{"limit":1}`, "")
	run("draft", `{"to":["bob@example.com"],"subject":"x","text":"y"}`, "op-d")
	run("send", `{"to":["bob@example.com"],"subject":"x","text":"y"}`, "op-s")
	s.onData = func(int, delivery) error { return errDrop }
	run("send", `{"to":["bob@example.com"],"subject":"x","text":"y"}`, "op-lost")
	var lines []string
	ctx := connectors.WithReporter(context.Background(), func(l string) { lines = append(lines, l) })
	err := in.c.Test(ctx, in.creds)
	seen = append(seen, texts(nil, err)...)
	in.creds = connectortest.Creds{"imap_password": imapPassword + "x", "smtp_password": smtpPassword + "x"}
	run("search", `{}`, "")
	run("send", `{"to":["bob@example.com"],"subject":"x","text":"y"}`, "op-bad")
	err = in.c.Test(ctx, in.creds)
	seen = append(seen, texts(nil, err)...)
	seen = append(seen, lines...)
	seen = append(seen, logs.String())
	noSecret(t, seen...)
	if len(lines) < 8 {
		t.Errorf("report too short: %v", lines)
	}
}

func TestConnectionTestReports(t *testing.T) {
	s := newStandin(t)
	in := build(t, s, "email", "")
	report := func(in *instance) ([]string, error) {
		var lines []string
		ctx := connectors.WithReporter(context.Background(), func(l string) { lines = append(lines, l) })
		return lines, in.c.Test(ctx, in.creds)
	}
	lines, err := report(in)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(lines, "\n")
	t.Logf("report:\n%s", all)
	for _, want := range []string{
		"imap: logged in to 127.0.0.1:", "(insecure) as " + user,
		`imap: 4 folder(s): "Archive", "Drafts", "INBOX", "Trash"`,
		`imap: drafts folder "Drafts": ok`,
		"smtp: EHLO to 127.0.0.1:",
		"smtp: STARTTLS: not offered",
		"smtp: AUTH mechanisms: PLAIN",
		"smtp: AUTH plain as " + user + ": ok",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("report lacks %q", want)
		}
	}

	missing := build(t, s, "email", "drafts_folder: Brouillons")
	lines, err = report(missing)
	if le := wantCode(t, err, legate.CodeNotFound); !strings.Contains(le.Message, "Brouillons") {
		t.Errorf("error %q", le.Message)
	}
	if all := strings.Join(lines, "\n"); !strings.Contains(all, `drafts folder "Brouillons": MISSING`) {
		t.Errorf("report:\n%s", all)
	}

	in.creds = connectortest.Creds{"imap_password": "nope", "smtp_password": "nope"}
	lines, err = report(in)
	wantCode(t, err, legate.CodeAuthExpired)
	if all := strings.Join(lines, "\n"); !strings.Contains(all, "imap_password") || !strings.Contains(all, "smtp_password") {
		t.Errorf("report does not name both credentials:\n%s", all)
	}
}
