package email_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors/connectortest"
)

// selfSigned is a certificate for 127.0.0.1 that no machine trusts.
func selfSigned(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// The TLS settings are kept: a certificate the machine does not trust,
// TLS against a plain port, or STARTTLS required of a server that does not
// offer it fail as configuration errors naming the setting, without
// logging in in the clear.
func TestTLSPoliciesAreKept(t *testing.T) {
	s := newStandin(t)
	mem := imapmemserver.New()
	mem.AddUser(imapmemserver.NewUser(user, imapPassword))
	srv := imapserver.New(&imapserver.Options{
		NewSession: func(*imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			return mem.NewSession(), nil, nil
		},
		Logger: log.New(io.Discard, "", 0),
	})
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{selfSigned(t)}})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close(); ln.Close() })

	tests := map[string]struct {
		imapAddr, extra, tool, setting string
	}{
		"imap tls, untrusted certificate": {ln.Addr().String(), "imap_security: tls", "search", "imap_security"},
		"imap tls on a plain port":        {"", "imap_security: tls", "search", "imap_security"},
		"imap starttls not offered":       {"", "imap_security: starttls", "search", "imap_security"},
		"smtp starttls not offered":       {"", "smtp_security: starttls", "send", "smtp_security"},
		"smtp tls on a plain port":        {"", "smtp_security: tls", "send", "smtp_security"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			st := standin{imapAddr: s.imapAddr, smtpAddr: s.smtpAddr}
			if tc.imapAddr != "" {
				st.imapAddr = tc.imapAddr
			}
			cfg := strings.Replace(config(&st, ""), strings.SplitN(tc.extra, ":", 2)[0]+": insecure", tc.extra, 1)
			in := build(t, &st, "email", "")
			in.c = connectortest.Build(t, "email", "email", cfg)
			args := `{}`
			if tc.tool == "send" {
				args = `{"to":["bob@example.com"],"subject":"x","text":"y"}`
			}
			before := len(s.delivered())
			res, err := in.call(t, "t1", tc.tool, args, "op-1")
			le := wantCode(t, err, legate.CodeInvalidArgument)
			if !strings.Contains(le.Message, tc.setting) {
				t.Errorf("message %q does not name %s", le.Message, tc.setting)
			}
			if len(s.delivered()) != before {
				t.Error("a message was sent")
			}
			noSecret(t, texts(res, err)...)
		})
	}
}
