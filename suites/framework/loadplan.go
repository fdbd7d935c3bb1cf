package framework

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/httpclient"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// LoadItemHeader carries a hit's plan item from the targeter to the transport, on Vegeta's
// request; the transport sends the item's own request instead, so neither this header nor
// Vegeta's X-Vegeta-* headers reach the target.
const LoadItemHeader = "X-Retrysafe-Load-Item"

// LoadRetryWindow is how many of the latest hits a sequential retry picks from.
const LoadRetryWindow = 256

// ShardSeqBase is where the sequence numbers of a sharded load start, times the number of shards:
// far above those of the baseline, and a multiple of N so that hit h's operation has a sequence
// number ≡ h (mod N), the shard that owns it.
const ShardSeqBase = 1_000_000

// Kinds of hits.
const (
	HitFresh = iota // a new operation, sent once
	HitPair         // a new operation, fired twice at once (a concurrent duplicate)
	HitRetry        // an earlier operation, sent again (a sequential duplicate)
)

// LoadPlan is the load generator's plan, a pure function of its fields: what hit h sends is
// decided by the seed and h alone, so every shard of a run knows what every other shard sends
// (and a run with the same seed sends the same again). Hit h belongs to shard h mod Shards and is
// due at round h div Shards, every shard sending one hit per round at Rate rounds per second.
type LoadPlan struct {
	// Seed is the run's seed.
	Seed int64
	// Shards is the number of shards (1: a run that is not sharded).
	Shards int
	// Rate is the hits per second of each shard (0: as fast as the workers go; the plan then
	// cannot date a hit and MaxAge is not applied).
	Rate int
	// Retry is the share of hits that repeat an operation: half sequential retries of an
	// earlier one, half concurrent pairs.
	Retry float64
	// Twins is the share of new operations that the next shard, (owner+1) mod Shards, sends too,
	// at the same due instant with the same key and body (a client that failed over).
	Twins float64
	// MaxAge bounds the age of the operation a retry repeats (0: any).
	MaxAge time.Duration
	// Ops, Tenants and Instances are how many operations, tenants and instances the target has.
	Ops, Tenants, Instances int
	// Base is the sequence number of hit 0's operation.
	Base int64
}

// PlannedHit is what the plan says of one hit.
type PlannedHit struct {
	// H is the hit's index in the plan, Owner the shard that sends it, Round when (Round/Rate
	// seconds after the start).
	H           int64
	Owner       int
	Round       int64
	Kind        int
	Seq         int64 // the operation's sequence number (of the repeated one for a retry)
	Op, Tenant  int   // indexes into the target's operations and tenants (-1: no tenant)
	Instance    int   // where the hit goes
	PairOn      int   // where a pair's twin goes
	Twin        bool  // the next shard sends this operation too, at the same instant
	TwinOn      int   // where the cross-shard twin goes
	RetryOf     int64 // the hit whose operation a retry repeats (-1: none)
	RepeatsFrom int   // the shard that started the operation a retry repeats
}

// draws is a counter-based random stream: the i-th number of hit h is a hash of (seed, h, i).
type draws struct {
	seed, h uint64
	i       uint64
}

// next returns the stream's next number (splitmix64 of its position).
func (d *draws) next() uint64 {
	d.i++
	z := d.seed ^ (d.h * 0x9e3779b97f4a7c15) ^ (d.i * 0xbf58476d1ce4e5b9)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (d *draws) intn(n int) int         { return int(d.next() % uint64(n)) }
func (d *draws) float() float64         { return float64(d.next()>>11) / (1 << 53) }
func (p *LoadPlan) shards() int         { return max(p.Shards, 1) }
func (p *LoadPlan) round(h int64) int64 { return h / int64(p.shards()) }

// Hit returns what hit h sends.
func (p *LoadPlan) Hit(h int64) PlannedHit {
	hit := p.fresh(h)
	hit.RetryOf = -1
	if hit.Kind != HitRetry {
		return hit
	}
	d := draws{seed: uint64(p.Seed), h: uint64(h), i: 200}
	prev := h - 1 - int64(d.intn(int(min(h, LoadRetryWindow))))
	if orig := p.fresh(prev); orig.Kind != HitRetry && p.young(h, prev) {
		hit.RetryOf, hit.Twin = prev, false
		hit.Seq, hit.Op, hit.Tenant, hit.RepeatsFrom = orig.Seq, orig.Op, orig.Tenant, orig.Owner
		return hit
	}
	hit.Kind = HitPair // drew a retry but found nothing to repeat: a concurrent pair instead
	return hit
}

// fresh is hit h as a new operation: the kind it draws (HitRetry when it draws a retry, which
// Hit resolves), its operation, tenant and instances.
func (p *LoadPlan) fresh(h int64) PlannedHit {
	n := p.shards()
	d := draws{seed: uint64(p.Seed), h: uint64(h)}
	hit := PlannedHit{H: h, Owner: int(h % int64(n)), Round: p.round(h), Seq: p.Base + h, Tenant: -1}
	hit.Op = d.intn(max(p.Ops, 1))
	if p.Tenants > 0 {
		hit.Tenant = d.intn(p.Tenants)
	}
	ins := max(p.Instances, 1)
	hit.Instance = d.intn(ins)
	hit.PairOn = (hit.Instance + 1) % ins
	hit.TwinOn = d.intn(ins)
	hit.Twin = n > 1 && d.float() < p.Twins
	e := draws{seed: uint64(p.Seed), h: uint64(h), i: 100}
	switch r := e.float(); {
	case r < p.Retry/2 && h > 0:
		hit.Kind = HitRetry
	case r < p.Retry:
		hit.Kind = HitPair
	default:
		hit.Kind = HitFresh
	}
	return hit
}

// young reports whether the operation of hit prev is still young enough to be retried at hit h.
func (p *LoadPlan) young(h, prev int64) bool {
	if p.MaxAge <= 0 || p.Rate <= 0 {
		return true
	}
	return p.Due(h)-p.Due(prev) < p.MaxAge
}

// Due is when hit h is due, after the start.
func (p *LoadPlan) Due(h int64) time.Duration {
	if p.Rate <= 0 {
		return 0
	}
	return time.Duration(p.round(h)) * time.Second / time.Duration(p.Rate)
}

// Rounds is how many rounds the plan has over d (0 when the rate is unlimited).
func (p *LoadPlan) Rounds(d time.Duration) int64 {
	return int64(p.Rate) * int64(d) / int64(time.Second)
}

// ShardHits are the hits shard i sends at round k: its own hit, and the cross-shard twin of the
// previous shard's hit of the round when that hit has one.
func (p *LoadPlan) ShardHits(i int, k int64) (own PlannedHit, twin *PlannedHit) {
	n := int64(p.shards())
	own = p.Hit(k*n + int64(i))
	if n > 1 {
		prev := p.Hit(k*n + (int64(i)+n-1)%n)
		if prev.Twin && prev.Kind != HitRetry {
			twin = &prev
		}
	}
	return own, twin
}

// loadPlan is the running load generator: it walks a LoadPlan round by round for one shard and
// decides what each Vegeta hit sends. Its targeter is called from many goroutines.
type loadPlan struct {
	s     *S
	plan  LoadPlan
	shard int

	mu     sync.Mutex
	round  int64
	ops    map[int64]*Op // by sequence number
	owners map[*Op]int   // the shard that started each
	order  []*Op         // in the order they were first sent
	table  HitTable[loadItem]
	counts [4]int // hits by kind, and cross-shard twins

	together atomic.Int64 // concurrent duplicates whose two attempts were in flight at once
}

// loadItem is one hit: the request the harness sends for it and, for a pair, its twin
// (the same request when both go to the same instance: the client never modifies one), and for
// a cross-shard twin the other shard's operation.
type loadItem struct {
	req  *http.Request
	body []byte
	meta httpclient.Meta

	twin     *http.Request
	twinBody []byte
	twinMeta httpclient.Meta

	cross     *http.Request
	crossBody []byte
	crossMeta httpclient.Meta
}

// newLoadPlan prepares the load generator of a spec: the run's own plan when sharded
// (Settings.Shard), else a plan of one shard whose sequence numbers follow the run's.
func newLoadPlan(s *S, retry float64) *loadPlan {
	e := s.Env
	t := e.Target
	p := LoadPlan{Seed: e.Settings.Seed, Shards: 1, Rate: e.Settings.LoadRate, Retry: retry,
		Ops: len(t.Operations), Tenants: len(t.Tenants), Instances: len(t.Instances)}
	shard := 0
	if sh := e.Settings.Shard; sh != nil {
		p.Shards, p.Twins, shard = sh.N, sh.Twins, sh.I
		p.Base = int64(ShardSeqBase) * int64(sh.N)
	} else {
		p.Base = e.seq.Load() + 1
	}
	if r := t.Retention; r > 0 {
		p.MaxAge = r / 2 // an older key might expire before its retry arrives
	}
	return &loadPlan{s: s, plan: p, shard: shard, ops: map[int64]*Op{}, owners: map[*Op]int{}}
}

// targeter returns the Vegeta targeter of the plan: one round per call.
func (p *loadPlan) targeter() vegeta.Targeter {
	return func(t *vegeta.Target) error {
		p.mu.Lock()
		k := p.round
		p.round++
		p.mu.Unlock()
		own, cross := p.plan.ShardHits(p.shard, k)
		op := p.op(own)
		req, body, meta, err := p.render(op, own.Instance)
		if err != nil {
			return fmt.Errorf("load: %w", err)
		}
		it := &loadItem{req: req, body: body, meta: meta}
		if own.Kind == HitPair {
			if own.PairOn == own.Instance {
				it.twin, it.twinBody, it.twinMeta = req, body, meta
			} else if it.twin, it.twinBody, it.twinMeta, err = p.render(op, own.PairOn); err != nil {
				return fmt.Errorf("load: %w", err)
			}
		}
		if cross != nil {
			if it.cross, it.crossBody, it.crossMeta, err = p.render(p.op(*cross), cross.TwinOn); err != nil {
				return fmt.Errorf("load: %w", err)
			}
		}
		p.mu.Lock()
		p.counts[own.Kind]++
		if cross != nil {
			p.counts[3]++
		}
		p.mu.Unlock()
		id := p.table.Put(it)
		// Vegeta paces, counts and times the hit; what goes over the wire is the item's
		// request, sent by the transport. Vegeta's own request only carries the item's id.
		t.Method, t.URL = req.Method, req.URL.String()
		t.Header = http.Header{LoadItemHeader: {strconv.FormatUint(id, 10)}}
		return nil
	}
}

// op returns the operation a planned hit sends (made once per sequence number). Unlike NewOp it
// does not add the key to the spec's evidence: a load run has thousands.
func (p *loadPlan) op(h PlannedHit) *Op {
	p.mu.Lock()
	defer p.mu.Unlock()
	if op := p.ops[h.Seq]; op != nil {
		return op
	}
	e := p.s
	def := e.Target.Operations[h.Op]
	op := &Op{s: p.s, Def: def, Key: e.KeyFor(def, h.Seq), Ref: e.Ref(h.Seq)}
	if h.Tenant >= 0 {
		op.Tenant = e.Target.Tenants[h.Tenant]
	}
	p.ops[h.Seq] = op
	p.owners[op] = int(h.Seq % int64(p.plan.shards()))
	p.order = append(p.order, op)
	return op
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

// operations returns every operation the plan sent, in the order they were first sent.
func (p *loadPlan) operations() []*Op {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*Op(nil), p.order...)
}

// hits returns the number of hits of each kind: fresh, pairs, retries, and the cross-shard twins
// sent.
func (p *loadPlan) hits() (fresh, pairs, retries, twins int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.counts[HitFresh], p.counts[HitPair], p.counts[HitRetry], p.counts[3]
}

// rounds returns how many rounds the plan has sent.
func (p *loadPlan) rounds() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.round
}
