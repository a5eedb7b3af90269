package email_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every connection the tests open, pooled or not, is closed by the end.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
