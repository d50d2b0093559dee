package domain

import "testing"

func TestValidAddress(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"a@x.test", "john.doe@example.com", `"john doe"@example.com`, `"a\"b"@x.test`,
		`"a@b"@x.test`, "jörg@xn--bcher-kva.example", "jörg@bücher.example", "u@[192.0.2.1]", "o'brien+tag@x.test"} {
		if !ValidAddress(s) {
			t.Errorf("ValidAddress(%q) = false; want true", s)
		}
	}
	for _, s := range []string{"", "not-an-address", "bad one", "Name <a@x.test>", "<a@x.test>", "a@", "@x.test",
		"a@b@x.test", "a..b@x.test", ".a@x.test", "a.@x.test", `"open@x.test`, "a@x..test", "a@x test", "a,b@x.test",
		"a@x.test,b@x.test", "g: a@x.test;", "a(comment)@x.test", "a\x00@x.test", string(make([]byte, 513)) + "@x.test"} {
		if ValidAddress(s) {
			t.Errorf("ValidAddress(%q) = true; want false", s)
		}
	}
}
