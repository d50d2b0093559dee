package analyzer

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// box is a compact expectation: the match key and the display name.
type box struct{ key, name string }

func boxes(ms []Mailbox) []box {
	out := []box{}
	for _, m := range ms {
		out = append(out, box{m.Key, m.Name})
	}
	return out
}

func TestParseListRFC5322AppendixA(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		raw  string
		want []box
	}{
		{"A.1.1 From", "John Doe <jdoe@machine.example>", []box{{"jdoe@machine.example", "John Doe"}}},
		{"A.1.2 From", `"Joe Q. Public" <john.q.public@example.com>`, []box{{"john.q.public@example.com", "Joe Q. Public"}}},
		{"A.1.2 To", "Mary Smith <mary@x.test>, jdoe@example.org, Who? <one@y.test>", []box{
			{"mary@x.test", "Mary Smith"}, {"jdoe@example.org", ""}, {"one@y.test", "Who?"}}},
		{"A.1.2 Cc", `<boss@nil.test>, "Giant; \"Big\" Box" <sysservices@example.net>`, []box{
			{"boss@nil.test", ""}, {"sysservices@example.net", `Giant; "Big" Box`}}},
		{"A.1.3 group", "A Group:Ed Jones <c@a.test>,joe@where.test,John <jdoe@one.test>;", []box{
			{"c@a.test", "Ed Jones"}, {"joe@where.test", ""}, {"jdoe@one.test", "John"}}},
		{"A.1.3 empty group", "Undisclosed recipients:;", []box{}},
		{"A.2 quoted colon", `"Mary Smith: Personal Account" <smith@home.example>`, []box{
			{"smith@home.example", "Mary Smith: Personal Account"}}},
		{"A.5 From", `Pete(A nice \) chap) <pete(his account)@silly.test(his host)>`, []box{{"pete@silly.test", "Pete"}}},
		{"A.5 To", "A Group(Some people)\r\n     :Chris Jones <c@(Chris's host.)public.example>,\r\n" +
			"         joe@example.org,\r\n  John <jdoe@one.test> (my dear friend); (the end of the group)", []box{
			{"c@public.example", "Chris Jones"}, {"joe@example.org", ""}, {"jdoe@one.test", "John"}}},
		{"A.5 Cc", "(Empty list)(start)Hidden recipients  :(nobody(that I know))  ;", []box{}},
		{"A.6.1 From obs-phrase", "Joe Q. Public <john.q.public@example.com>", []box{{"john.q.public@example.com", "Joe Q. Public"}}},
		{"A.6.1 To", "Mary Smith <@node.test:mary@example.net>, , jdoe@test  . example", []box{
			{"mary@example.net", "Mary Smith"}, {"jdoe@test.example", ""}}},
		{"A.6.3 From", "John Doe <jdoe@machine(comment).  example>", []box{{"jdoe@machine.example", "John Doe"}}},
		{"A.6.3 To", "Mary Smith\r\n  \r\n          <mary@example.net>", []box{{"mary@example.net", "Mary Smith"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, boxes(ParseList(tt.raw)), "ParseList(%q)", tt.raw)
		})
	}
}

func TestParseListObsoleteSyntax(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		raw  string
		want []box
	}{
		{"route of two domains", "<@route1.example,@route2.example:user@host.example>", []box{{"user@host.example", ""}}},
		{"route with empty elements and CFWS", "Joe < , @a.example , (c) ,@b.example : joe @ host.example>", []box{{"joe@host.example", "Joe"}}},
		{"comment inside local part", "john.(comment)doe@example.com", []box{{"john.doe@example.com", ""}}},
		{"CFWS around local dots", "john . doe\r\n .x @ example . com", []box{{"john.doe.x@example.com", ""}}},
		{"obs-local-part of quoted words", `"john"."doe"@example.com`, []box{{"john.doe@example.com", ""}}},
		{"empty elements", ",, a@x.example ,,, b@y.example,", []box{{"a@x.example", ""}, {"b@y.example", ""}}},
		{"obs-phrase with dots", "J. R. R. Tolkien <jrrt@middle.example>", []box{{"jrrt@middle.example", "J. R. R. Tolkien"}}},
		{"comment as the name of a bare address", "jdoe@one.test (John Doe)", []box{{"jdoe@one.test", "John Doe"}}},
		{"nested comments", "a@b.example (x (y (z)) w), c@d.example", []box{{"a@b.example", "x (y (z)) w"}, {"c@d.example", ""}}},
		{"domain literal", "u@[192.0.2.1], v@[IPv6:2001:DB8::1]", []box{{"u@[192.0.2.1]", ""}, {"v@[ipv6:2001:db8::1]", ""}}},
		{"trailing dot of a domain", "a@example.com.", []box{{"a@example.com", ""}}},
		{"group with members and comments", "team (the team): a@x.example, (none) ;, b@y.example", []box{{"a@x.example", ""}, {"b@y.example", ""}}},
		{"mixed case", "John.Doe@Example.COM", []box{{"john.doe@example.com", ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, boxes(ParseList(tt.raw)), "ParseList(%q)", tt.raw)
		})
	}
}

func TestParseListQuotedAndInternational(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		raw  string
		want []box
	}{
		{"unnecessary quotes", `"john"@x.example`, []box{{"john@x.example", ""}}},
		{"quotes around a dot-atom", `"John.Doe"@x.example`, []box{{"john.doe@x.example", ""}}},
		{"quotes needed", `"john doe"@example.com`, []box{{`"john doe"@example.com`, ""}}},
		{"quoted pair kept quoted", `"a\"b"@x.example, "a\bc"@x.example`, []box{{`"a\"b"@x.example`, ""}, {"abc@x.example", ""}}},
		{"quoted local with an at sign", `"a@b"@x.example`, []box{{`"a@b"@x.example`, ""}}},
		{"consecutive dots", "abc..def.@docomo.example", []box{{`"abc..def."@docomo.example`, ""}}},
		{"Unicode domain", "a@Bücher.example", []box{{"a@xn--bcher-kva.example", ""}}},
		{"xn-- domain", "a@XN--BCHER-KVA.example", []box{{"a@xn--bcher-kva.example", ""}}},
		{"full-width dot", "a@bücher。example", []box{{"a@xn--bcher-kva.example", ""}}},
		{"RFC 6532 address", `"Jöhn Doe" <jdöe@mächine.example>`, []box{{"jdöe@xn--mchine-bua.example", "Jöhn Doe"}}},
		{"Unicode local part case-folded", "ÄRGER@x.example", []box{{"ärger@x.example", ""}}},
		{"decomposed local part composed (NFC)", "a\u0308@x.example", []box{{"ä@x.example", ""}}},
		{"encoded word name", "=?utf-8?q?J=C3=B6hn_Doe?= <j@x.example>", []box{{"j@x.example", "Jöhn Doe"}}},
		{"encoded words joined", "=?utf-8?q?J=C3=B6hn?= =?utf-8?q?_Doe?= <j@x.example>", []box{{"j@x.example", "Jöhn Doe"}}},
		{"encoded word with a comma", "=?utf-8?b?RG9lLCBKb2hu?= <j@x.example>, k@y.example", []box{{"j@x.example", "Doe, John"}, {"k@y.example", ""}}},
		{"encoded word, Latin-1", "=?iso-8859-1?q?J=F6rg?= <j@x.example>", []box{{"j@x.example", "Jörg"}}},
		{"encoded word, KOI8-R", "=?koi8-r?b?8NLJ18XU?= <p@x.example>", []box{{"p@x.example", "Привет"}}},
		{"encoded word in quotes", `"=?utf-8?q?J=C3=B6hn?=" <j@x.example>`, []box{{"j@x.example", "Jöhn"}}},
		{"encoded word never decoded in an address", "<=?utf-8?q?j?=@x.example>", []box{{"=?utf-8?q?j?=@x.example", ""}}},
		{"raw 8-bit Latin-1 name", "J\xf6rg <j@x.example>", []box{{"j@x.example", "Jörg"}}},
		{"raw UTF-8 name", "Jörg <j@x.example>", []box{{"j@x.example", "Jörg"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, boxes(ParseList(tt.raw)), "ParseList(%q)", tt.raw)
		})
	}
}

func TestParseListDisplayNameIsNeverAnAddress(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		raw  string
		want []box
	}{
		{"quoted name like an address, local-only angle", `"xxxxx@xxxxx" <matmail>`, []box{}},
		{"quoted name like an address", `"a@b.example" <c@d.example>`, []box{{"c@d.example", "a@b.example"}}},
		{"unquoted name like an address", `a@b.example <c@d.example>`, []box{{"c@d.example", "a@b.example"}}},
		{"group name like an address", `a@b.example: c@d.example;`, []box{{"c@d.example", ""}}},
		{"local-only address ignored", "root, <postmaster>, a@b.example", []box{{"a@b.example", ""}}},
		{"quoted string alone", `"someone@example.com"`, []box{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, boxes(ParseList(tt.raw)), "ParseList(%q)", tt.raw)
		})
	}
}

func TestParseListRecoversFromBrokenLists(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		raw  string
		want []box
	}{
		{"addresses separated by spaces", "tim@powerupdev.com concierge@powerupdev.com", []box{
			{"tim@powerupdev.com", ""}, {"concierge@powerupdev.com", ""}}},
		{"missing comma between angle addresses", `"A" <a@x.example> "B" <b@y.example>`, []box{{"a@x.example", "A"}, {"b@y.example", "B"}}},
		{"unclosed angle bracket", "Foo <a@b.example, Bar <c@d.example>", []box{{"a@b.example", "Foo"}, {"c@d.example", "Bar"}}},
		{"unclosed angle bracket at the end", "c@d.example, Foo <a@b.example", []box{{"c@d.example", ""}, {"a@b.example", "Foo"}}},
		{"unclosed quote", `"Smith, John <js@x.example>, b@y.example`, []box{{"js@x.example", "John"}, {"b@y.example", ""}}},
		{"unclosed comment", "a@b.example (unclosed, c@d.example", []box{{"a@b.example", ""}, {"c@d.example", ""}}},
		{"unclosed domain literal", "a@[1.2.3.4, c@d.example", []box{{"c@d.example", ""}}},
		{"mailto inside angle brackets", "Foo <mailto:a@b.example>", []box{{"a@b.example", "Foo"}}},
		{"doubled angle brackets", "<<a@b.example>>", []box{{"a@b.example", ""}}},
		{"name without angle brackets", `"John Doe" john@x.example`, []box{{"john@x.example", "John Doe"}}},
		{"stray closing bracket", "a@b.example>, c@d.example", []box{{"a@b.example", ""}, {"c@d.example", ""}}},
		{"junk between", "@@@, ;;; a@b.example :::", []box{}},
		{"semicolon separated", "a@b.example; c@d.example", []box{{"a@b.example", ""}, {"c@d.example", ""}}},
		{"NUL and controls are white space", "a\x00b@x.example, c@d\x01.example", []box{{"b@x.example", "a"}, {"c@d.example", ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, boxes(ParseList(tt.raw)), "ParseList(%q)", tt.raw)
		})
	}
}

func TestParseListWritten(t *testing.T) {
	t.Parallel()
	ms := ParseList(`Pete(x) <Pete(his account)@Silly.Test(his host)>, "john doe"@Example.COM, j . doe @ Bücher.example`)
	got := []string{}
	for _, m := range ms {
		got = append(got, m.Written)
	}
	assert.Equal(t, []string{"Pete@Silly.Test", `"john doe"@Example.COM`, "j.doe@Bücher.example"}, got)
}
