package consumer

import "github.com/retrysafe/retrysafe/targets"

// slowFor readies the consumer's slow hook for handlings of ms milliseconds: nothing to do for a
// header hook (each delivery that asks for it carries it), a restart of every instance with the
// hook's environment for an env hook (hooks.slow.env), which the spec's end heals (the
// instances restarted without it).
func (s *S) slowFor(c *targets.Consumer, ms int64) error {
	if !c.Hooks.SlowByEnv() {
		return nil
	}
	f, err := s.Faults.ConsumerSlowEnv(c, ms)
	if err != nil {
		return err
	}
	if c.IsQueue() { // nothing of an earlier spec's in flight while the consumer restarts
		if err := s.waitBrokerQuiet(c); err != nil {
			return err
		}
	}
	s.atEnd = append(s.atEnd, f)
	if err := s.Inject(f); err != nil {
		return err
	}
	s.Observer.CloseIdleConnections()
	s.Client.CloseIdle()
	return nil
}
