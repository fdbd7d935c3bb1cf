package reference

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"
)

// attempt is one POST being processed.
type attempt struct {
	op          operation
	tenant      string
	key         string
	scope       string
	fingerprint string
	order       orderRequest
	path        string
	delay       time.Duration // the DelayHeader's extra time in the in-flight window
	recordID    string        // the id of the record to write, when drawn before the work (publish-before-commit)
}

// Problem details shared by several answers.
const (
	mismatchDetail = "Idempotency-Key was used with a different payload"
	inFlightDetail = "a request with this Idempotency-Key is in progress"
)

// create answers POST /v1/orders and POST /v1/refunds.
func (a *API) create(op operation) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
		if err != nil {
			writeProblem(w, http.StatusBadRequest, "cannot read body: "+err.Error())
			return
		}
		if at := r.Header.Get(ArrivalHeader); at != "" {
			w.Header().Set(ArrivalHeader, strconv.FormatInt(time.Now().UnixNano(), 10))
		}
		header, hasKey := r.Header["Idempotency-Key"]
		if a.cfg.Mutant == MutantReplayWithoutAuth && hasKey {
			if _, fail := a.authenticate(r); fail != nil && a.replayBeforeAuth(w, r, op, header[0]) {
				return
			}
		}
		at, status, detail := a.parseAttempt(r, op, body)
		if status != 0 {
			writeProblem(w, status, detail)
			return
		}
		// Once claimed, the work goes on when the client goes away: a real handler does not
		// abandon a charge half-way because its caller hung up.
		ctx := context.WithoutCancel(r.Context())
		if a.rawReplay(w, ctx, at) {
			return
		}
		if a.cfg.Mutant == MutantRace {
			a.checkThenInsert(w, ctx, at)
			return
		}
		res, err := a.cfg.Store.Claim(ctx, ClaimRequest{
			Scope: at.scope, Fingerprint: at.fingerprint, Now: a.cfg.Now(),
			Retention: a.retention(), LockTimeout: a.lockTimeout(),
		})
		if err != nil {
			a.cfg.Logger.Printf("claim: %v", err)
			writeProblem(w, http.StatusServiceUnavailable, "store error")
			return
		}
		switch res.Outcome {
		case Mismatch:
			writeProblem(w, a.cfg.MismatchStatus, mismatchDetail)
		case InFlight:
			if a.cfg.Mutant == MutantLoser500 {
				writeProblem(w, http.StatusInternalServerError, "concurrent request")
				return
			}
			writeInFlight(w)
		case Completed:
			if a.replayOperation(w, ctx, at, res.Response) {
				return
			}
			a.replay(w, ctx, at, res.Response)
		case Claimed:
			if a.cfg.Async {
				a.accept(w, ctx, at, res.Token)
				return
			}
			a.execute(w, ctx, at, res.Token)
		}
	}
}

// parseAttempt authenticates and validates a POST. A non-zero status is a client error.
func (a *API) parseAttempt(r *http.Request, op operation, body []byte) (attempt, int, string) {
	at := attempt{op: op, path: r.URL.Path}
	tenant, fail := a.authenticate(r)
	if fail != nil {
		return at, fail.status, fail.detail
	}
	at.tenant = tenant
	header, ok := r.Header["Idempotency-Key"]
	switch {
	case !ok:
		return at, http.StatusBadRequest, "Idempotency-Key header is required"
	case len(header) > 1:
		return at, http.StatusBadRequest, "Idempotency-Key header must be sent once"
	}
	key, err := ParseKey(header[0])
	if err == nil {
		err = a.cfg.KeyFormat.check(key)
	}
	if err != nil {
		return at, http.StatusBadRequest, err.Error()
	}
	if a.cfg.Mutant == MutantTruncatedKey && len([]rune(key)) > 64 {
		key = string([]rune(key)[:64])
	}
	at.key = key
	if at.order, err = parseOrder(body); err != nil {
		return at, http.StatusBadRequest, err.Error()
	}
	if at.fingerprint, err = Fingerprint(r.URL.Query(), body); err != nil {
		return at, http.StatusBadRequest, "body is not valid JSON"
	}
	switch a.cfg.Mutant {
	case MutantRawFingerprint:
		at.fingerprint = rawFingerprint(r.URL.RawQuery, body)
	case MutantNoFingerprint:
		at.fingerprint = ""
	case MutantFingerprintIgnoresField:
		at.fingerprint, _ = fingerprintWithout(r.URL.Query(), body, ignoredField) // body is valid JSON
	}
	if at.delay, err = a.testDelay(r); err != nil {
		return at, http.StatusBadRequest, err.Error()
	}
	at.scope = a.scope(r.Method, at)
	return at, 0, ""
}

// scope is the key's scope: (tenant, method, path, key), or what a mutant makes of it.
func (a *API) scope(method string, at attempt) string {
	switch a.cfg.Mutant {
	case MutantUnscoped:
		return scopeID("", method, at.path, at.key)
	case MutantPathBlind:
		return scopeID(at.tenant, "", "", at.key)
	case MutantBodyDedupe:
		return scopeID(at.tenant, method, at.path, "body:"+at.fingerprint)
	case MutantRawStoreKey:
		return rawScope(at.tenant, method, at.path, at.key)
	}
	return scopeID(at.tenant, method, at.path, at.key)
}

// replay answers with a stored response.
func (a *API) replay(w http.ResponseWriter, ctx context.Context, at attempt, resp Response) {
	switch {
	case a.cfg.Mutant == MutantReplayReexecutes && resp.Status < 300:
		rec := a.newRecord(at)
		if err := a.cfg.Store.AddRecord(ctx, rec); err != nil {
			a.cfg.Logger.Printf("replay-reexecutes: %v", err)
		}
	case a.cfg.Mutant == MutantReplayRepublishes && resp.Status < 300:
		a.republish(ctx, at, resp)
	case a.cfg.Mutant == MutantStuckAfterError && resp.Status == stuckMarker.Status:
		writeInFlight(w) // the stored marker: to a retry, the key is still in progress
		return
	case a.cfg.Mutant == MutantErrorReplayDiffers && resp.Status >= 400:
		resp.Body = problemBody(resp.Status, "a previous attempt with this Idempotency-Key failed")
	}
	writeStored(w, resp, true)
}

// writeInFlight answers a retry while the key's first attempt is in progress.
func writeInFlight(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "1")
	writeProblem(w, http.StatusConflict, inFlightDetail)
}

// stuckMarker is what the stuck-after-error mutant stores instead of a handler error: its
// replay answers as if the key were still in progress, and no lock timeout ever ends that
// (the correct API never stores a 409).
var stuckMarker = Response{Status: http.StatusConflict, Body: problemBody(http.StatusConflict, inFlightDetail)}

// execute runs a claimed attempt: the downstream call, then the record and the key's
// completion in one commit.
func (a *API) execute(w http.ResponseWriter, ctx context.Context, at attempt, token int64) {
	if a.cfg.Mutant == MutantPublishBeforeCommit && at.op.kind == "orders" {
		at.recordID = at.op.prefix + randomHex(12)
		if err := a.publishNow(ctx, at); err != nil {
			// Nothing was done yet: the claim is released for a retry, as a handler that failed
			// before its work would, although the broker may have taken the event.
			if err := a.cfg.Store.Release(ctx, at.scope, token); err != nil {
				a.cfg.Logger.Printf("release: %v", err)
			}
			writeProblem(w, http.StatusServiceUnavailable, "the order's event could not be published")
			return
		}
	}
	resp, rec := a.perform(ctx, at)
	if rec == nil && resp.Status >= 500 && a.cfg.Mutant == MutantNoErrorCache {
		if err := a.cfg.Store.Release(ctx, at.scope, token); err != nil {
			a.cfg.Logger.Printf("release: %v", err)
		}
		writeStored(w, resp, false)
		return
	}
	if rec == nil && resp.Status >= 500 && a.cfg.Mutant == MutantErrorRecordAfterAnswer {
		writeStored(w, resp, false)
		go a.completeLater(at, token, resp) // fire-and-forget: the retry finds the key in flight
		return
	}
	if a.cfg.Mutant == MutantLostWrite {
		rec = nil
	}
	stored := resp
	if rec == nil && resp.Status >= 500 && a.cfg.Mutant == MutantStuckAfterError {
		stored = stuckMarker
	}
	ok, err := a.cfg.Store.Complete(ctx, Completion{
		Scope: at.scope, Token: token, Now: a.cfg.Now(), Record: rec, Response: stored, Event: a.eventOf(rec, resp),
		Split: a.cfg.Mutant == MutantSplitWrite,
	})
	a.wakeRelay(ok && err == nil)
	if ok && err == nil {
		a.publishAfterCommit(ctx, rec, resp)
		a.cacheAnswer(ctx, http.MethodPost, at, stored)
	}
	switch {
	case err != nil:
		a.cfg.Logger.Printf("complete: %v", err)
		writeProblem(w, http.StatusServiceUnavailable, "store error")
	case !ok:
		writeProblem(w, http.StatusConflict, "this attempt was superseded by a retry after the lock timeout")
	default:
		writeStored(w, resp, false)
	}
}

// checkThenInsert is the race mutant: look the key up, process, then insert, with nothing
// atomic between the lookup and the insert.
func (a *API) checkThenInsert(w http.ResponseWriter, ctx context.Context, at attempt) {
	row, err := a.cfg.Store.Lookup(ctx, at.scope)
	if err != nil {
		writeProblem(w, http.StatusServiceUnavailable, "store error")
		return
	}
	req := ClaimRequest{Scope: at.scope, Fingerprint: at.fingerprint, Now: a.cfg.Now(),
		Retention: a.retention(), LockTimeout: a.lockTimeout()}
	switch outcome, _ := Decide(row, req); outcome {
	case Mismatch:
		writeProblem(w, a.cfg.MismatchStatus, mismatchDetail)
		return
	case Completed:
		a.replay(w, ctx, at, row.Response)
		return
	}
	resp, rec := a.perform(ctx, at)
	if _, err := a.cfg.Store.Complete(ctx, Completion{Scope: at.scope, Fingerprint: at.fingerprint,
		Now: a.cfg.Now(), Record: rec, Response: resp, Event: a.eventOf(rec, resp), Force: true}); err != nil {
		writeProblem(w, http.StatusServiceUnavailable, "store error")
		return
	}
	a.wakeRelay(true)
	writeStored(w, resp, false)
}

// replayBeforeAuth is the replay-without-auth mutant: it looks the key up under every
// tenant before authenticating and replays what it finds.
func (a *API) replayBeforeAuth(w http.ResponseWriter, r *http.Request, op operation, header string) bool {
	key, err := ParseKey(header)
	if err != nil {
		return false
	}
	for _, tenant := range a.cfg.Tenants {
		row, err := a.cfg.Store.Lookup(r.Context(), scopeID(tenant, r.Method, r.URL.Path, key))
		if err == nil && row != nil && row.State == StateDone {
			writeStored(w, row.Response, true)
			return true
		}
	}
	return false
}

// perform does the work of a claimed attempt and returns the response to store and the
// record to write (nil on failure).
func (a *API) perform(ctx context.Context, at attempt) (Response, *Record) {
	failStatus := a.takeFailure() // the attempt that claims first fails, not the one that ends first
	if delay := a.cfg.WorkDelay + at.delay; delay > 0 {
		select {
		case <-time.After(delay):
		case <-ctx.Done():
		}
	}
	if failStatus != 0 {
		a.cfg.Logger.Printf("injected failure: %d", failStatus)
		return injectedFailure(failStatus), nil
	}
	if a.cfg.Downstream != "" {
		if err := a.callDownstream(ctx, at); err != nil {
			a.cfg.Logger.Printf("downstream: %v", err)
			return Response{Status: http.StatusBadGateway,
				Body: problemBody(http.StatusBadGateway, "downstream provider failed: "+downstreamFailure(err))}, nil
		}
	}
	rec := a.newRecord(at)
	body, _ := json.Marshal(orderBody{rec.ID, at.op.object, rec.Ref, rec.Amount, rec.Currency})
	return Response{Status: http.StatusCreated, Body: body}, &rec
}

// newRecord builds a business record with a fresh id (or the one drawn before the work).
func (a *API) newRecord(at attempt) Record {
	id := at.recordID
	if id == "" {
		id = at.op.prefix + randomHex(12)
	}
	return Record{ID: id, Tenant: at.tenant, Kind: at.op.kind,
		Ref: at.order.Ref, Amount: at.order.Amount, Currency: at.order.Currency, Created: a.cfg.Now()}
}

// callDownstream POSTs the charge to the downstream provider with a key derived from the
// operation, so every attempt of one operation sends the same downstream key.
func (a *API) callDownstream(ctx context.Context, at attempt) error {
	key := downstreamKey(at.tenant, at.op.kind, at.key)
	if a.cfg.Mutant == MutantFreshDownstreamKey {
		key = "rs_" + randomHex(20)
	}
	payload, _ := json.Marshal(map[string]any{"tenant": at.tenant, "operation": at.op.kind,
		"ref": at.order.Ref, "amount": at.order.Amount, "currency": at.order.Currency})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.cfg.Downstream, bytes.NewReader(payload))
	if err != nil {
		return err
	}
	req.GetBody = nil // never let the transport re-send the charge behind our back
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	resp, err := a.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, maxBodyBytes))
	if resp.StatusCode/100 != 2 {
		return statusError(resp.StatusCode)
	}
	return nil
}

// downstreamFailure describes a downstream error without internal addresses.
func downstreamFailure(err error) string {
	var se statusError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("status %d", int(se))
	case errors.Is(err, context.DeadlineExceeded), os.IsTimeout(err):
		return "timeout"
	}
	return "no answer"
}

// statusError is a non-2xx downstream answer.
type statusError int

func (e statusError) Error() string { return fmt.Sprintf("status %d", int(e)) }

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// completeLater is the error-record-after-answer mutant's store of a handler error, written
// errorRecordDelay after the error was answered.
func (a *API) completeLater(at attempt, token int64, resp Response) {
	time.Sleep(errorRecordDelay)
	if _, err := a.cfg.Store.Complete(context.Background(), Completion{Scope: at.scope, Token: token, Now: a.cfg.Now(), Response: resp}); err != nil {
		a.cfg.Logger.Printf("error-record-after-answer: complete: %v", err)
	}
}
