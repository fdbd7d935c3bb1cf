package framework

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/httpclient"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// LoadItemHeader carries a hit's plan item from the targeter to the transport, on Vegeta's
// request; the transport sends the item's own request instead, so neither this header nor
// Vegeta's X-Vegeta-* headers reach the target.
const LoadItemHeader = "X-Retrysafe-Load-Item"

// LoadRetryWindow is how many of the latest operations a sequential retry picks from.
const LoadRetryWindow = 256

// Kinds of hits.
const (
	hitFresh = iota // a new operation, sent once
	hitPair         // a new operation, fired twice at once (a concurrent duplicate)
	hitRetry        // an earlier operation, sent again (a sequential duplicate)
)

// loadPlan is the generator of the load property: it decides what each Vegeta hit sends.
// Its targeter is called from many goroutines.
type loadPlan struct {
	s      *S
	retry  float64       // share of hits that repeat an operation
	maxAge time.Duration // retries only of operations younger than this; 0 = any

	mu     sync.Mutex
	rng    *rand.Rand
	ops    []*Op
	born   []time.Time // when each of ops was first sent
	table  HitTable[loadItem]
	counts [3]int // hits by kind
}

// loadItem is one hit: the request the harness sends for it and, for a pair, its twin
// (the same request when both go to the same instance: the client never modifies one).
type loadItem struct {
	req  *http.Request
	body []byte
	meta httpclient.Meta

	twin     *http.Request
	twinBody []byte
	twinMeta httpclient.Meta
}

func newLoadPlan(s *S, retry float64) *loadPlan {
	e := s.Env
	p := &loadPlan{
		s: s, retry: retry,
		rng: rand.New(rand.NewPCG(uint64(e.Settings.Seed), 0x10ad)),
	}
	if r := e.Target.Retention; r > 0 {
		p.maxAge = r / 2 // an older key might expire before its retry arrives
	}
	return p
}

// targeter returns the Vegeta targeter of the plan.
func (p *loadPlan) targeter() vegeta.Targeter {
	return func(t *vegeta.Target) error {
		kind, op, ins, twinIns := p.choose()
		req, body, meta, err := p.render(op, ins)
		if err != nil {
			return fmt.Errorf("load: %w", err)
		}
		it := &loadItem{req: req, body: body, meta: meta}
		if kind == hitPair {
			if twinIns == ins {
				it.twin, it.twinBody, it.twinMeta = req, body, meta
			} else if it.twin, it.twinBody, it.twinMeta, err = p.render(op, twinIns); err != nil {
				return fmt.Errorf("load: %w", err)
			}
		}
		id := p.table.Put(it)
		// Vegeta paces, counts and times the hit; what goes over the wire is the item's
		// request, sent by the transport. Vegeta's own request only carries the item's id.
		t.Method, t.URL = req.Method, req.URL.String()
		t.Header = http.Header{LoadItemHeader: {strconv.FormatUint(id, 10)}}
		return nil
	}
}

// render renders one attempt of an operation on an instance: the request, the exact body
// bytes it carries, and its labels for the history.
func (p *loadPlan) render(op *Op, ins int) (*http.Request, []byte, httpclient.Meta, error) {
	in := &p.s.Target.Instances[ins]
	req, body, err := op.Def.Build(targets.BuildInput{Context: p.s.ctx, Instance: in, Tenant: op.Tenant, Vars: op.Vars()})
	if err != nil {
		return nil, nil, httpclient.Meta{}, err
	}
	meta := httpclient.Meta{Op: op.Def.Name, Key: op.Key, Instance: in.URL.Host}
	if op.Tenant != nil {
		meta.Tenant = op.Tenant.Name
	}
	return req, body, meta, nil
}

// choose picks the next hit: its kind, operation and instances.
func (p *loadPlan) choose() (kind int, op *Op, ins, twinIns int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.s.Target.Instances)
	ins = p.rng.IntN(n)
	twinIns = (ins + 1) % n
	r := p.rng.Float64()
	if r < p.retry/2 && len(p.ops) > 0 {
		i := len(p.ops) - 1 - p.rng.IntN(min(len(p.ops), LoadRetryWindow))
		if p.maxAge <= 0 || time.Since(p.born[i]) < p.maxAge {
			p.counts[hitRetry]++
			return hitRetry, p.ops[i], ins, twinIns
		}
	}
	kind = hitFresh
	if r < p.retry {
		kind = hitPair
	}
	op = p.newOp()
	p.ops = append(p.ops, op)
	p.born = append(p.born, time.Now())
	p.counts[kind]++
	return kind, op, ins, twinIns
}

// newOp starts a fresh operation on a random declared operation, as a random tenant. Unlike
// NewOp it does not add the key to the spec's evidence: a load run has thousands.
func (p *loadPlan) newOp() *Op {
	e := p.s
	n := e.Next()
	def := e.Target.Operations[p.rng.IntN(len(e.Target.Operations))]
	op := &Op{s: p.s, Def: def, Key: e.KeyFor(def, n), Ref: e.Ref(n)}
	if ts := e.Target.Tenants; len(ts) > 0 {
		op.Tenant = ts[p.rng.IntN(len(ts))]
	}
	return op
}

// operations returns every operation the plan started.
func (p *loadPlan) operations() []*Op {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*Op(nil), p.ops...)
}

// hits returns the number of hits of each kind: fresh, pairs, retries.
func (p *loadPlan) hits() (fresh, pairs, retries int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.counts[hitFresh], p.counts[hitPair], p.counts[hitRetry]
}
