// Package wire is the agent's HTTP of model APIs: a JSON POST whose 2xx
// answer is read as server-sent events, and the error of any other answer.
//
// The agent's model clients speak the two wire formats themselves (OpenAI
// chat completions, Anthropic Messages): the providers' SDKs, which cover
// their whole APIs, were most of the binary's size for the two calls the
// agent makes.
package wire

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// maxErrorBody bounds the part of an error answer kept in the error.
const maxErrorBody = 4 << 10

// maxEventLine bounds one line of the event stream.
const maxEventLine = 8 << 20

// APIError is a provider's answer other than 2xx.
type APIError struct {
	// StatusCode is the answer's HTTP status.
	StatusCode int
	// Response is the answer, its body read (into Message) and closed.
	Response *http.Response
	// Message is the provider's error message, or the start of the body.
	Message string
	method  string
	url     string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%s %q: %d %s %s", e.method, e.url, e.StatusCode, http.StatusText(e.StatusCode), e.Message)
}

// Post sends body to url as JSON with hc and returns the event stream of a
// 2xx answer; any other answer is an *APIError.
func Post(ctx context.Context, hc *http.Client, url string, header http.Header, body any) (*Stream, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	if header != nil {
		req.Header = header.Clone()
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		resp.Body.Close()
		return nil, &APIError{StatusCode: resp.StatusCode, Response: resp, Message: errorMessage(raw), method: req.Method, url: url}
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), maxEventLine)
	return &Stream{body: resp.Body, sc: sc}, nil
}

// errorMessage is the message of an error body in either provider's
// format ({"error": {"message": …}}), or the body itself.
func errorMessage(raw []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &e) == nil && e.Error.Message != "" {
		return e.Error.Message
	}
	return strings.TrimSpace(string(raw))
}

// Stream reads server-sent events: an event's name and its data lines,
// joined.
type Stream struct {
	body  io.ReadCloser
	sc    *bufio.Scanner
	event string
	data  []byte
	err   error
}

// Next reads the next event with data; false at the end of the stream or
// on an error (Err).
func (r *Stream) Next() bool {
	if r.err != nil {
		return false
	}
	r.event, r.data = "", r.data[:0]
	for r.sc.Scan() {
		line := r.sc.Bytes()
		switch {
		case len(line) == 0:
			if len(r.data) > 0 {
				return true
			}
			r.event = ""
		case line[0] == ':':
		default:
			field, value, _ := bytes.Cut(line, []byte(":"))
			value = bytes.TrimPrefix(value, []byte(" "))
			switch string(field) {
			case "event":
				r.event = string(value)
			case "data":
				if len(r.data) > 0 {
					r.data = append(r.data, '\n')
				}
				r.data = append(r.data, value...)
			}
		}
	}
	r.err = r.sc.Err()
	// A last event not followed by a blank line still counts.
	return r.err == nil && len(r.data) > 0 && r.finish()
}

// finish marks the stream read to its end after the last event.
func (r *Stream) finish() bool {
	r.err = io.EOF
	return true
}

// Err is the error that ended the stream, nil at its normal end.
func (r *Stream) Err() error {
	if r.err == io.EOF {
		return nil
	}
	return r.err
}

// Data is the data of the event read by Next.
func (r *Stream) Data() []byte { return r.data }

// Close closes the answer's body.
func (r *Stream) Close() error { return r.body.Close() }
