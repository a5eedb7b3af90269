package email_test

import (
	"bytes"
	"errors"
	"net/http"

	"github.com/emersion/go-sasl"
)

// xoauth2Server is the server side of SASL XOAUTH2 (Google's and
// Microsoft's): "user=" user "\x01auth=Bearer " token "\x01\x01"; a
// refusal is a JSON challenge the client answers with an empty line.
func xoauth2Server(login func(username, token string) error) sasl.Server {
	return &xoauth2{login: login}
}

type xoauth2 struct {
	login  func(username, token string) error
	failed error
}

func (x *xoauth2) Next(resp []byte) ([]byte, bool, error) {
	if x.failed != nil {
		return nil, true, x.failed
	}
	if resp == nil {
		return []byte{}, false, nil
	}
	fields := bytes.Split(bytes.TrimSuffix(resp, []byte("\x01\x01")), []byte("\x01"))
	var username, token string
	for _, f := range fields {
		switch {
		case bytes.HasPrefix(f, []byte("user=")):
			username = string(f[len("user="):])
		case bytes.HasPrefix(f, []byte("auth=Bearer ")):
			token = string(f[len("auth=Bearer "):])
		}
	}
	if username == "" || token == "" {
		return nil, true, errors.New("malformed XOAUTH2 response")
	}
	if err := x.login(username, token); err != nil {
		x.failed = err
		return []byte(`{"status":"401","schemes":"bearer","scope":"https://mail.google.com/"}`), false, nil
	}
	return nil, true, nil
}

// bearer reports whether token is an access token the OAuth stand-in
// issued and still honours, recording the call as an API's would.
func (s *standin) bearer(username, token string) bool {
	if username == "" {
		return false
	}
	_, ok := s.oauth.Bearer(&http.Request{Header: http.Header{"Authorization": {"Bearer " + token}}})
	return ok
}
