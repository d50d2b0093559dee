package app_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/certificate"
	"github.com/mailledger/mailledger/domain/erasure"
)

// tampering is one change to a bundle and the words of the reason it must be refused for.
type tampering struct {
	change func(b *certificate.Bundle)
	reason string
}

// tamperings lists changes to every part of a bundle: the body, each event, a proof, the
// chain link and the checkpoint, and removed or reordered events.
func tamperings(t *testing.T, good *certificate.Bundle) map[string]tampering {
	t.Helper()
	n := len(good.Events)
	require.GreaterOrEqual(t, n, 5, "created, assessment started and completed, approved, execution started and completed")
	out := map[string]tampering{
		"one byte of the body": {func(b *certificate.Bundle) {
			b.Certificate.Body = replaceFirst(t, b.Certificate.Body, `"deleted_count":(\d)`, "9")
		}, "certificate: hash"},
		"the body and its hash": {func(b *certificate.Bundle) {
			b.Certificate.Body = replaceFirst(t, b.Certificate.Body, `"deleted_count":(\d+)`, "999")
			sum := sha256.Sum256([]byte(b.Certificate.Body))
			b.Certificate.Hash = hex.EncodeToString(sum[:])
		}, "certificate body does not match the body derived from the events: deleted_count is 999"},
		"the certificate hash": {func(b *certificate.Bundle) {
			b.Certificate.Hash = flipHex(b.Certificate.Hash)
		}, "certificate: hash"},
		"a proof hash": {func(b *certificate.Bundle) {
			raw, err := base64.StdEncoding.DecodeString(b.Events[1].InclusionProof[0])
			require.NoError(t, err)
			raw[0] ^= 0x01
			b.Events[1].InclusionProof[0] = base64.StdEncoding.EncodeToString(raw)
		}, "event 2 (position"},
		"a removed proof hash": {func(b *certificate.Bundle) {
			b.Events[0].InclusionProof = b.Events[0].InclusionProof[1:]
		}, "event 1 (position"},
		"the checkpoint root": {func(b *certificate.Bundle) {
			lines := strings.SplitN(b.Checkpoint, "\n", 4)
			lines[2] = string(lines[2][0]^0x01) + lines[2][1:]
			b.Checkpoint = strings.Join(lines, "\n")
		}, "checkpoint: does not verify with the public key"},
		"the checkpoint size": {func(b *certificate.Bundle) {
			b.Checkpoint = strings.Replace(b.Checkpoint, "\n", "\n1", 1)
		}, "checkpoint: does not verify with the public key"},
		"the checkpoint signature": {func(b *certificate.Bundle) {
			i := strings.LastIndex(b.Checkpoint, " ") + 5
			b.Checkpoint = b.Checkpoint[:i] + string(b.Checkpoint[i]^0x01) + b.Checkpoint[i+1:]
		}, "checkpoint"},
		"the signature's unused base64 bits": {func(b *certificate.Bundle) {
			b.Checkpoint = flipPaddingBit(t, b.Checkpoint, strings.LastIndex(b.Checkpoint, "=")-1)
		}, "checkpoint: signature of mailledger"},
		"a proof hash's unused base64 bits": {func(b *certificate.Bundle) {
			p := b.Events[0].InclusionProof[0]
			b.Events[0].InclusionProof[0] = flipPaddingBit(t, p, len(p)-2)
		}, "inclusion proof hash 1"},
		"the previous chain hash": {func(b *certificate.Bundle) {
			b.Completion.PreviousChainHash = flipHex(b.Completion.PreviousChainHash)
		}, "completion: chain link broken"},
		"the completion chain hash": {func(b *certificate.Bundle) {
			b.Completion.ChainHash = flipHex(b.Completion.ChainHash)
		}, "completion: chain link broken"},
		"a leaf index":            {func(b *certificate.Bundle) { b.Events[2].LeafIndex++ }, "event 3 (position"},
		"the first event removed": {func(b *certificate.Bundle) { b.Events = b.Events[1:] }, "stream_version 2; want 1"},
		"a middle event removed": {func(b *certificate.Bundle) {
			b.Events = append(b.Events[:2], b.Events[3:]...)
		}, "event 3 (position"},
		"the completion removed": {func(b *certificate.Bundle) { b.Events = b.Events[:n-1] }, "completion: chain link is for position"},
		"two events swapped": {func(b *certificate.Bundle) {
			b.Events[1], b.Events[2] = b.Events[2], b.Events[1]
		}, "stream_version 3; want 2"},
		"no events":  {func(b *certificate.Bundle) { b.Events = nil }, "no events"},
		"the format": {func(b *certificate.Bundle) { b.Format = "mailledger-erasure-bundle/v0" }, "format"},
	}
	for i, ev := range good.Events {
		out[fmt.Sprintf("event %d request id", i+1)] = tampering{func(b *certificate.Bundle) {
			b.Events[i].Record = replaceFirst(t, ev.Record, `"request_id":"GDPR-(\d)`, "3")
		}, fmt.Sprintf("event %d (position %d, %s): inclusion proof", i+1, ev.LeafIndex+1, eventType(t, ev))}
		out[fmt.Sprintf("event %d middle byte", i+1)] = tampering{func(b *certificate.Bundle) {
			r := []byte(ev.Record)
			r[len(r)/2] ^= 0x01
			b.Events[i].Record = string(r)
		}, fmt.Sprintf("event %d", i+1)}
	}
	return out
}

func eventType(t *testing.T, ev certificate.BundleEvent) string {
	t.Helper()
	m := regexp.MustCompile(`"event_type":"([^"]+)"`).FindStringSubmatch(ev.Record)
	require.NotNil(t, m)
	require.True(t, strings.HasPrefix(m[1], "erasure."))
	require.Contains(t, []string{erasure.EventCreated, erasure.EventAssessmentStarted, erasure.EventAssessmentCompleted,
		erasure.EventApproved, erasure.EventExecutionStarted, erasure.EventExecutionCompleted}, m[1])
	return m[1]
}

// replaceFirst replaces the first submatch of pattern in s with repl, which must differ.
func replaceFirst(t *testing.T, s, pattern, repl string) string {
	t.Helper()
	loc := regexp.MustCompile(pattern).FindStringSubmatchIndex(s)
	require.NotNil(t, loc, "%s in %s", pattern, s)
	if s[loc[2]:loc[3]] == repl {
		repl = "8"
	}
	return s[:loc[2]] + repl + s[loc[3]:]
}

// flipPaddingBit changes the base64 digit at i of s to the digit whose value differs in
// the lowest bit: in the last digit before "=", that bit is unused padding.
func flipPaddingBit(t *testing.T, s string, i int) string {
	t.Helper()
	const digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	v := strings.IndexByte(digits, s[i])
	require.GreaterOrEqual(t, v, 0, "%q is not a base64 digit", s[i])
	require.Equal(t, byte('='), s[i+1], "the last digit before the padding")
	return s[:i] + string(digits[v^1]) + s[i+1:]
}

// flipHex changes the first hex digit of h to another hex digit.
func flipHex(h string) string {
	c := byte('0')
	if h[0] == '0' {
		c = '1'
	}
	return string(c) + h[1:]
}
