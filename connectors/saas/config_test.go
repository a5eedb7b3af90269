package saas_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate/connectors/httpkit"
	"github.com/legate-mcp/legate/connectors/saas"
)

func TestRetriesValidate(t *testing.T) {
	ok := saas.Retries{Timeout: time.Second, MaxAttempts: 3, RetryBackoff: time.Millisecond, MaxRetryWait: time.Second}
	if errs := ok.Validate(); len(errs) != 0 {
		t.Fatalf("valid settings: %v", errs)
	}
	bad := saas.Retries{MaxAttempts: 11, MaxRetryWait: -1, RateLimit: httpkit.RateLimit{PerSecond: -1}}
	got := errors.Join(bad.Validate()...).Error()
	for _, key := range []string{"timeout", "max_attempts", "retry_backoff", "max_retry_wait", "rate_limit"} {
		if !strings.Contains(got, key) {
			t.Errorf("no error names %s:\n%s", key, got)
		}
	}
}

func TestCheckURL(t *testing.T) {
	for raw, want := range map[string]string{
		"https://api.example.com/":         "",
		"ftp://api.example.com/":           "must be an http or https URL",
		"https://u:p@api.example.com/?x=1": "no user, password, query or fragment",
		"http://127.0.0.1:8080/":           "127.0.0.1",
	} {
		u, errs := saas.CheckURL("base_url", raw, false)
		got := errors.Join(errs...)
		switch {
		case want == "" && (got != nil || u == nil):
			t.Errorf("%s: %v", raw, got)
		case want != "" && (got == nil || !strings.Contains(got.Error(), want) || !strings.Contains(got.Error(), "base_url")):
			t.Errorf("%s: %v, want an error about base_url with %q", raw, got, want)
		}
	}
	if _, errs := saas.CheckURL("base_url", "http://127.0.0.1:8080/", true); len(errs) != 0 {
		t.Errorf("allowed private: %v", errs)
	}
}
