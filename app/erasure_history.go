package app

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/erasure"
	"github.com/mailledger/mailledger/eventstore"
)

// HistoryEntry is one event of a request's stream and the request's state after it, as
// the domain code replays it: what an auditor reads to follow the request step by step and
// check each step against the ledger (the hashes are the event's leaf and chain hashes).
type HistoryEntry struct {
	Position   int64        `json:"position"`
	Type       string       `json:"type"`
	Actor      string       `json:"actor"`
	IPAddress  *string      `json:"ip_address"`
	RecordedAt time.Time    `json:"recorded_at"`
	LeafHash   string       `json:"leaf_hash"`
	ChainHash  string       `json:"chain_hash"`
	State      RequestState `json:"state"`
}

// RequestState is a request's state after one event of its history.
type RequestState struct {
	Status             string   `json:"status"`
	EmailsAsSender     int      `json:"emails_as_sender"`
	EmailsAsRecipient  int      `json:"emails_as_recipient"`
	AttachmentsCount   int      `json:"attachments_count"`
	BlockedByLegalHold bool     `json:"blocked_by_legal_hold"`
	LegalHoldIDs       []string `json:"legal_hold_ids"`
	BlockedReason      *string  `json:"blocked_reason"`
	ApprovedBy         *string  `json:"approved_by"`
	RejectionReason    *string  `json:"rejection_reason"`
	DeletedCount       int      `json:"deleted_count"`
	Version            int64    `json:"version"`
}

// History replays request requestID of tenant from the ledger, oldest event first, with
// its state after each event; ErrNotFound when tenant has no such request.
func (e *Erasure) History(ctx context.Context, tenant, requestID string) ([]HistoryEntry, error) {
	out := []HistoryEntry{}
	err := e.requests.history(ctx, tenant, requestID, func(rec *eventstore.Record, r *erasure.Request) {
		var md domain.Metadata
		_ = json.Unmarshal(rec.Metadata, &md) // metadata written by this service; an odd one shows empty
		entry := HistoryEntry{Position: rec.Position, Type: rec.EventType, Actor: md.Actor, RecordedAt: rec.RecordedAt,
			LeafHash: rec.LeafHash.String(), ChainHash: rec.ChainHash.String(), State: stateOf(r)}
		if md.ClientIP != "" {
			ip := md.ClientIP
			entry.IPAddress = &ip
		}
		out = append(out, entry)
	})
	return out, err
}

func stateOf(r *erasure.Request) RequestState {
	return RequestState{Status: r.Status, EmailsAsSender: r.Counts.EmailsAsSender, EmailsAsRecipient: r.Counts.EmailsAsRecipient,
		AttachmentsCount: r.Counts.AttachmentsCount, BlockedByLegalHold: r.BlockedByHold,
		LegalHoldIDs: append([]string{}, r.LegalHoldIDs...), BlockedReason: optional(r.BlockedReason),
		ApprovedBy: optional(r.ApprovedBy), RejectionReason: optional(r.RejectionReason),
		DeletedCount: r.DeletedCount, Version: r.Version}
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
