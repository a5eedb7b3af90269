package google

// SetMaxAnswerBytes bounds API answers to n bytes until restore is called.
func SetMaxAnswerBytes(n int64) (restore func()) {
	old := maxAnswerBytes
	maxAnswerBytes = n
	return func() { maxAnswerBytes = old }
}
