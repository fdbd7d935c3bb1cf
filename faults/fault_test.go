package faults

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

// fakeFault records what was done to it and can be told to fail.
type fakeFault struct {
	name    string
	log     *[]string
	mu      *sync.Mutex
	failFor int // heals that fail before one succeeds
	active  bool
}

func (f *fakeFault) Name() string { return f.name }

func (f *fakeFault) Inject(context.Context) error {
	f.note("inject " + f.name)
	f.active = true
	return nil
}

func (f *fakeFault) Heal(context.Context) error {
	f.note("heal " + f.name)
	if f.failFor > 0 {
		f.failFor--
		return errors.New("cannot heal " + f.name)
	}
	f.active = false
	return nil
}

func (f *fakeFault) note(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	*f.log = append(*f.log, s)
}

func fakes(names ...string) ([]*fakeFault, *[]string) {
	log, mu := &[]string{}, &sync.Mutex{}
	var out []*fakeFault
	for _, n := range names {
		out = append(out, &fakeFault{name: n, log: log, mu: mu})
	}
	return out, log
}

func TestNemesisHealAllHealsLatestFirst(t *testing.T) {
	fs, log := fakes("a", "b", "c")
	n := NewNemesis()
	ctx := context.Background()
	for _, f := range fs {
		if err := n.Inject(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	if err := n.Heal(ctx, fs[1]); err != nil {
		t.Fatal(err)
	}
	if err := n.HealAll(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{"inject a", "inject b", "inject c", "heal b", "heal c", "heal a"}
	if !slices.Equal(*log, want) {
		t.Errorf("actions = %v, want %v", *log, want)
	}
	if got := n.Injected(); len(got) != 0 {
		t.Errorf("Injected() after HealAll = %v, want none", got)
	}
	if err := n.HealAll(ctx); err != nil || len(*log) != len(want) {
		t.Errorf("second HealAll: err %v, actions %v; want nothing more done", err, *log)
	}
}

func TestNemesisKeepsFaultsThatFailToHeal(t *testing.T) {
	fs, _ := fakes("stuck", "fine")
	fs[0].failFor = 1
	n := NewNemesis()
	ctx := context.Background()
	_ = n.Inject(ctx, fs[0])
	_ = n.Inject(ctx, fs[1])
	err := n.HealAll(ctx)
	if err == nil || !strings.Contains(err.Error(), "heal stuck: cannot heal stuck") {
		t.Fatalf("HealAll: err %v, want the failure of stuck", err)
	}
	if got := n.Injected(); len(got) != 1 || got[0] != Fault(fs[0]) {
		t.Errorf("Injected() = %v, want [stuck]", got)
	}
	if err := n.HealAll(ctx); err != nil || fs[0].active || fs[1].active {
		t.Errorf("second HealAll: err %v, stuck active %v, fine active %v; want all healed", err, fs[0].active, fs[1].active)
	}
}

func TestNemesisRemembersFailedInjects(t *testing.T) {
	healed := false
	f := Func(KindOther, "test", "half", func(context.Context) error { return errors.New("half done") },
		func(context.Context) error { healed = true; return nil })
	n := NewNemesis()
	if err := n.Inject(context.Background(), f); err == nil || !strings.Contains(err.Error(), "inject half: half done") {
		t.Errorf("Inject: err %v, want the fault's error", err)
	}
	if err := n.HealAll(context.Background()); err != nil || !healed {
		t.Errorf("HealAll after a failed inject: err %v, healed %v; want it healed", err, healed)
	}
}

func TestNemesisTimeline(t *testing.T) {
	fs, _ := fakes("x")
	fs[0].failFor = 1
	n := NewNemesis()
	ctx := context.Background()
	_ = n.Inject(ctx, fs[0])
	_ = n.Inject(ctx, fs[0]) // remembered once
	_ = n.HealAll(ctx)
	_ = n.HealAll(ctx)
	got := n.Timeline()
	want := []struct {
		action Action
		err    string
	}{{ActionInject, ""}, {ActionInject, ""}, {ActionHeal, "cannot heal x"}, {ActionHeal, ""}}
	if len(got) != len(want) {
		t.Fatalf("timeline %v, want %d events", got, len(want))
	}
	for i, e := range got {
		if e.Fault != "x" || e.Action != want[i].action || e.Error != want[i].err {
			t.Errorf("event %d = %+v, want %s of x with error %q", i, e, want[i].action, want[i].err)
		}
		if i > 0 && e.Time.Before(got[i-1].Time) {
			t.Errorf("event %d at %v is before event %d at %v", i, e.Time, i-1, got[i-1].Time)
		}
	}
	if s := got[2].String(); !strings.HasSuffix(s, "heal x: cannot heal x") {
		t.Errorf("Event.String() = %q", s)
	}
}

func TestNemesisConcurrentUse(t *testing.T) {
	n := NewNemesis()
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			f := Func(KindOther, "test", fmt.Sprint(i), nil, nil)
			_ = n.Inject(context.Background(), f)
			_ = n.Heal(context.Background(), f)
			_ = n.Timeline()
		})
	}
	wg.Wait()
	if got := len(n.Timeline()); got != 32 {
		t.Errorf("%d events, want 32", got)
	}
	if got := n.Injected(); len(got) != 0 {
		t.Errorf("Injected() = %v, want none", got)
	}
}

func TestNoop(t *testing.T) {
	n := NewNemesis()
	if err := errors.Join(n.Inject(context.Background(), Noop{}), n.HealAll(context.Background())); err != nil {
		t.Fatal(err)
	}
	if tl := n.Timeline(); len(tl) != 2 || tl[0].Fault != "noop" {
		t.Errorf("timeline %v, want inject and heal of noop", tl)
	}
}

func TestUncomparableFaultsDoNotPanic(t *testing.T) {
	n := NewNemesis()
	f := sliceFault{names: []string{"a"}}
	_ = n.Inject(context.Background(), f)
	_ = n.Inject(context.Background(), f)
	if err := n.HealAll(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// sliceFault is a fault value that == cannot compare.
type sliceFault struct{ names []string }

func (sliceFault) Name() string                 { return "slice" }
func (sliceFault) Inject(context.Context) error { return nil }
func (sliceFault) Heal(context.Context) error   { return nil }

// A heal of a fault the nemesis does not hold does nothing and records nothing: every heal on
// the timeline follows an inject of the same fault.
func TestNemesisHealsOnlyWhatItHolds(t *testing.T) {
	fs, log := fakes("held", "never")
	n := NewNemesis()
	ctx := context.Background()
	if err := n.Inject(ctx, fs[0]); err != nil {
		t.Fatal(err)
	}
	for _, f := range []Fault{fs[0], fs[0], fs[1]} { // healed twice, and one never injected
		if err := n.Heal(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"inject held", "heal held"}; !slices.Equal(*log, want) {
		t.Errorf("actions = %v, want %v", *log, want)
	}
	var got []string
	for _, e := range n.Timeline() {
		got = append(got, string(e.Action)+" "+e.Fault)
	}
	if want := []string{"inject held", "heal held"}; !slices.Equal(got, want) {
		t.Errorf("timeline = %v, want %v", got, want)
	}
}
