package analyzer

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// role is a compact expectation: "sender From a@b" or "recipient To c@d".
func roleStrings(as []Address) []string {
	out := []string{}
	for _, a := range as {
		out = append(out, fmt.Sprintf("%s %s %s", a.Role, a.Header, a.Key))
	}
	return out
}

func TestRoles(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		fields []Field
		want   []string
	}{
		{"every From mailbox and every From field", []Field{
			{"From", "a@x.example, B <b@x.example>"},
			{"Subject", "hi"},
			{"From", "c@x.example"},
		}, []string{"sender From a@x.example", "sender From b@x.example", "sender From c@x.example"}},
		{"Sender, Resent-From, Resent-Sender, Return-Path", []Field{
			{"Sender", "Secretary <sec@x.example>"},
			{"Resent-From", "Mary <mary@y.example>"},
			{"Resent-Sender", "rs@y.example"},
			{"Return-Path", "<bounce@z.example>"},
		}, []string{"sender Sender sec@x.example", "sender Resent-From mary@y.example",
			"sender Resent-Sender rs@y.example", "sender Return-Path bounce@z.example"}},
		{"null Return-Path", []Field{{"Return-Path", "<>"}}, []string{}},
		{"To, Cc, Bcc and Resent recipients", []Field{
			{"To", "t@x.example"}, {"Cc", "c@x.example"}, {"Bcc", "b@x.example"},
			{"Resent-To", "rt@x.example"}, {"Resent-Cc", "rc@x.example"}, {"Resent-Bcc", "rb@x.example"},
		}, []string{"recipient To t@x.example", "recipient Cc c@x.example", "recipient Bcc b@x.example",
			"recipient Resent-To rt@x.example", "recipient Resent-Cc rc@x.example", "recipient Resent-Bcc rb@x.example"}},
		{"trace headers carrying envelope recipients", []Field{
			{"Delivered-To", "d@x.example"}, {"X-Original-To", "o@x.example"},
			{"Envelope-To", "e@x.example"}, {"X-Envelope-To", "<xe@x.example>"},
		}, []string{"recipient Delivered-To d@x.example", "recipient X-Original-To o@x.example",
			"recipient Envelope-To e@x.example", "recipient X-Envelope-To xe@x.example"}},
		{"Received for, Reply-To and others are not roles", []Field{
			{"Received", "from a by b for <r@x.example>; Mon, 1 Jan 2024 00:00:00 +0000"},
			{"Reply-To", "rt@x.example"}, {"Disposition-Notification-To", "n@x.example"},
			{"Message-ID", "<id@x.example>"},
		}, []string{}},
		{"names matched case-insensitively, white space before the colon trimmed", []Field{
			{"FROM  ", "a@x.example"}, {"to\t", "b@x.example"}, {"rEtUrN-pAtH ", "<c@x.example>"},
		}, []string{"sender From a@x.example", "recipient To b@x.example", "sender Return-Path c@x.example"}},
		{"a field name folded onto the next line", []Field{
			{"To\r\n ", "Mary <mary@example.net>"}, {"\r\n Cc", "c@x.example"},
		}, []string{"recipient To mary@example.net", "recipient Cc c@x.example"}},
		{"group members count", []Field{
			{"To", "A Group:Ed Jones <c@a.test>,joe@where.test,John <jdoe@one.test>;"},
			{"Cc", "Undisclosed recipients:;"},
		}, []string{"recipient To c@a.test", "recipient To joe@where.test", "recipient To jdoe@one.test"}},
		{"every repetition counts", []Field{
			{"To", "a@x.example"}, {"To", "a@x.example"}, {"Delivered-To", "a@x.example"},
		}, []string{"recipient To a@x.example", "recipient To a@x.example", "recipient Delivered-To a@x.example"}},
		{"same address as sender and recipient", []Field{
			{"From", "me@x.example"}, {"To", "ME@X.example"},
		}, []string{"sender From me@x.example", "recipient To me@x.example"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, roleStrings(Roles(tt.fields)))
		})
	}
}

func TestEnvelopeRoles(t *testing.T) {
	t.Parallel()
	got := EnvelopeRoles("<Bounce@X.example>", []string{"<a@y.example>", "b@y.example", "<>", "junk"})
	assert.Equal(t, []string{"sender MAIL FROM bounce@x.example",
		"recipient RCPT TO a@y.example", "recipient RCPT TO b@y.example"}, roleStrings(got))
	assert.Empty(t, EnvelopeRoles("<>", nil), "the null reverse-path has no address")
}

func TestDistinct(t *testing.T) {
	t.Parallel()
	as := Roles([]Field{
		{"From", "a@x.example"}, {"To", "a@x.example, b@x.example"}, {"Cc", "B@X.example"}, {"From", "A@x.example"},
	})
	assert.Equal(t, []string{"sender From a@x.example", "recipient To a@x.example", "recipient To b@x.example"},
		roleStrings(Distinct(as)))
}

func TestRoleString(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "sender", Sender.String())
	assert.Equal(t, "recipient", Recipient.String())
	assert.Equal(t, "Role(7)", Role(7).String())
}
