package mimetext

import (
	"testing"
	"unicode/utf8"
)

func TestDecodeText(t *testing.T) {
	tests := map[string]struct {
		raw  string
		part TextPart
		want string
	}{
		"quoted-printable latin-1": {"Caf=E9 cr=E8me =\r\nbr=FBl=E9e", TextPart{Encoding: "quoted-printable", Charset: "ISO-8859-1"}, "Café crème brûlée"},
		"base64 cut mid-quantum":   {"aGVsbG8gd29y\r\nbGQ", TextPart{Encoding: "base64"}, "hello wor"},
		"qp cut mid-escape":        {"caf=C3=A9 =C3", TextPart{Encoding: "quoted-printable", Charset: "utf-8"}, "café "},
		"windows-1252":             {"\x93quoted\x94", TextPart{Charset: "windows-1252"}, "“quoted”"},
		"unknown charset kept":     {"plain", TextPart{Charset: "x-unknown"}, "plain"},
		"invalid utf-8 replaced":   {"a\xffb", TextPart{}, "a\uFFFDb"},
		"html part":                {"<p>x</p>", TextPart{HTML: true}, "x"},
		"crlf":                     {"a\r\nb", TextPart{}, "a\nb"},
	}
	for name, tc := range tests {
		if got := DecodeText([]byte(tc.raw), tc.part); got != tc.want {
			t.Errorf("%s: got %q; want %q", name, got, tc.want)
		}
	}
}

func TestCutAndSnippet(t *testing.T) {
	s, cut := CutText("ééé", 3)
	if s != "é" || !cut || !utf8.ValidString(s) {
		t.Errorf("CutText: %q %v", s, cut)
	}
	if s, cut := CutText("abc", 3); s != "abc" || cut {
		t.Errorf("CutText: %q %v", s, cut)
	}
	long := ""
	for range 300 {
		long += "é "
	}
	if sn := Snippet(long); utf8.RuneCountInString(sn) != SnippetRunes || !utf8.ValidString(sn) {
		t.Errorf("snippet of %d runes", utf8.RuneCountInString(sn))
	}
	if sn := Snippet(" a\n\tb  "); sn != "a b" {
		t.Errorf("snippet %q", sn)
	}
}
