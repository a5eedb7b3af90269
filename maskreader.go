package legate

import "io"

// Reader masks body as it is read (see maskReader).
func (s *Secrets) Reader(body io.ReadCloser) io.ReadCloser {
	return &maskReader{body: body, secrets: s}
}

// maskReader masks a stream as it is read. What may be the start of a
// secret at the end of what has been read is held back until the next read
// completes or rules it out; an event stream, whose events end in blank
// lines, is never held back past an event's end.
type maskReader struct {
	body    io.ReadCloser
	secrets *Secrets
	buf     []byte // masked, not yet returned
	ready   int    // how much of buf may be returned
	chunk   []byte
	err     error
}

func (m *maskReader) Read(p []byte) (int, error) {
	for m.ready == 0 && m.err == nil {
		m.fill()
	}
	if m.ready == 0 {
		return 0, m.err
	}
	n := copy(p, m.buf[:m.ready])
	m.buf = append(m.buf[:0], m.buf[n:]...)
	m.ready -= n
	return n, nil
}

// fill reads once from the body and masks what is held with what came.
func (m *maskReader) fill() {
	if m.chunk == nil {
		m.chunk = make([]byte, 4<<10)
	}
	n, err := m.body.Read(m.chunk)
	m.buf = m.secrets.Mask(append(m.buf, m.chunk[:n]...), false)
	m.err = err
	if err != nil {
		m.ready = len(m.buf)
		return
	}
	m.ready = len(m.buf) - m.secrets.Partial(m.buf)
}

func (m *maskReader) Close() error { return m.body.Close() }
