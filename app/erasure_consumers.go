package app

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/erasure"
	"github.com/mailledger/mailledger/eventstore"
)

// Names of the erasure consumers: their offsets' keys in consumer_offsets, and the actors
// of the events they record.
const (
	AssessorConsumer = "erasure-assessor"
	ExecutorConsumer = "erasure-executor"
	assessorActor    = "system:assessor"
	executorActor    = "system:executor"
)

// Register adds the assessor and executor consumers to b.
func (e *Erasure) Register(b *Background) {
	b.AddHandler(AssessorConsumer, e.HandleAssessment)
	b.AddHandler(ExecutorConsumer, e.HandleExecution)
}

// HandleAssessment is the assessor consumer. After erasure.request_created it starts the
// automatic assessment (when the request is still pending) and finishes it; after
// erasure.assessment_started (POST assess) it finishes the assessment: it counts the
// scope, checks the legal holds and records AssessmentCompleted or AssessmentBlocked. It
// is idempotent: a request that has moved on is left alone, and a lost race
// (eventstore.ErrConcurrentModification) is returned so that the event is retried.
func (e *Erasure) HandleAssessment(ctx context.Context, rec eventstore.Record) error {
	if rec.StreamType != erasure.StreamType ||
		rec.EventType != erasure.EventCreated && rec.EventType != erasure.EventAssessmentStarted {
		return nil
	}
	r, md, err := e.loadFor(ctx, rec, assessorActor)
	if err != nil {
		return err
	}
	if r.Status == erasure.StatusPending {
		ev, err := r.StartAssessment(md.Actor)
		if err != nil {
			return err
		}
		if err := e.append(ctx, r, ev, md); err != nil {
			return err
		}
	}
	if r.Status != erasure.StatusAssessing {
		return nil
	}
	return e.finishAssessment(ctx, r, md)
}

func (e *Erasure) finishAssessment(ctx context.Context, r *erasure.Request, md domain.Metadata) error {
	scope, holds, reason, err := e.arc.Assess(ctx, r.TenantID, r.Addresses)
	if err != nil {
		return err
	}
	counts := erasure.Counts{EmailsAsSender: scope.AsSender, EmailsAsRecipient: scope.AsRecipient,
		AttachmentsCount: scope.Attachments, AffectedEmails: scope.Affected}
	ev, err := r.FinishAssessment(counts, holdIDs(holds), reason)
	if err != nil {
		return err
	}
	return e.append(ctx, r, ev, md)
}

// HandleExecution is the executor consumer. After erasure.execution_started it erases
// the request's messages (archive.Erase: in batches, skipping messages under an active
// hold, resuming after a crash) and records ExecutionCompleted with the number erased.
// It is idempotent: a request that is no longer executing is left alone, and a second
// run after a crash finishes the erasure and counts every message marked for it.
func (e *Erasure) HandleExecution(ctx context.Context, rec eventstore.Record) error {
	if rec.StreamType != erasure.StreamType || rec.EventType != erasure.EventExecutionStarted {
		return nil
	}
	r, md, err := e.loadFor(ctx, rec, executorActor)
	if err != nil {
		return err
	}
	if r.Status != erasure.StatusExecuting {
		return nil
	}
	n, err := e.arc.Erase(ctx, archive.EraseRequest{
		Tenant: r.TenantID, RequestID: r.RequestID, Addresses: r.Addresses,
		Today: e.cfg.Clock(), Batch: e.cfg.EraseBatch, Lock: eventstore.LockHead,
	})
	if err != nil {
		return err
	}
	ev, err := r.Complete(n)
	if err != nil {
		return err
	}
	if err := e.append(ctx, r, ev, md); err != nil {
		return err
	}
	e.cfg.Logger.InfoContext(ctx, "erasure completed", "request_id", r.RequestID, "tenant", r.TenantID, "deleted", n,
		"correlation_id", md.CorrelationID)
	return nil
}

// loadFor loads the request that rec belongs to, with the metadata of the system events
// a consumer records in answer (the trigger's correlation id carried over).
func (e *Erasure) loadFor(ctx context.Context, rec eventstore.Record, actor string) (*erasure.Request, domain.Metadata, error) {
	md := domain.Metadata{Actor: actor}
	var trigger domain.Metadata
	if err := json.Unmarshal(rec.Metadata, &trigger); err == nil {
		md.CorrelationID = trigger.CorrelationID
	}
	var ids struct {
		RequestID string `json:"request_id"`
	}
	if err := json.Unmarshal(rec.Data, &ids); err != nil || ids.RequestID == "" {
		return nil, md, errors.Join(errors.New("erasure event without request_id"), err)
	}
	r, err := e.load(ctx, AllTenants, ids.RequestID)
	return r, md, err
}
