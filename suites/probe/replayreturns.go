package probe

import (
	"context"
	"net/http"
	"strings"

	"github.com/retrysafe/retrysafe/reports/profile"
	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// replayReturns probes replay_returns from the baseline request and its retry: original when the
// retry repeats the first answer; current when it shows the resource the first answer names as a
// fresh read finds it right after (the operation's resource block says where); reference when it
// names the first answer's operation (its async block says where) and nothing more of it.
func (p *prober) replayReturns(base *framework.Op, first, again history.Attempt) profile.Field {
	fd := p.field(profile.FieldReplayReturns, base.Def)
	fd.keep(first, framework.Send{})
	fd.keep(again, framework.Send{})
	def := base.Def
	switch {
	case !success(again):
		return fd.notProbed("the retry was answered %d, not a 2xx", again.Status)
	}
	original := len(check.Compare(first, again, p.t.Profile)) == 0
	if def.Resource != nil {
		if id, ok := def.Resource.IDOf(first.RespBody); ok {
			body, url, err := p.readResource(base, id)
			switch diffs := check.CompareBodies(body, again.RespBody, p.t.Profile.Ignore); {
			case err != nil:
				fd.note("the resource %s could not be read: %v", url, err)
			case original && len(diffs) == 0:
				fd.note("the retry repeats the first answer, and %s had not changed: a current representation would look the same", url)
			case original:
				fd.note("the retry repeats the first answer although %s changed since (a read right after it differs at %s)", url, strings.Join(diffs, ", "))
			case len(diffs) == 0:
				fd.note("the retry shows %s as a read right after it finds it", url)
				return fd.done(string(targets.ReplayCurrent))
			}
		}
	}
	if original {
		return fd.done(string(targets.ReplayOriginal))
	}
	if def.Async != nil && first.Reference != "" && first.Reference == again.Reference {
		fd.note("the retry names the first answer's operation %s", first.Reference)
		return fd.done(string(targets.ReplayReference))
	}
	return fd.notProbed("the retry neither repeats the first answer (it differs at %s), nor shows the resource's current representation (resource), nor names its operation (async)",
		strings.Join(p.differences(first, again), ", "))
}

// readResource reads the resource of id that the operation's resource block names, as the
// baseline's tenant.
func (p *prober) readResource(base *framework.Op, id string) ([]byte, string, error) {
	path, err := base.Def.Resource.PathOf(base.Vars(), id)
	if err != nil {
		return nil, "", err
	}
	url, err := targets.StatusURL(&p.t.Instances[0], path)
	if err != nil {
		return nil, path, err
	}
	ctx, cancel := context.WithTimeout(p.s.Ctx(), p.opts.AttemptTimeout)
	defer cancel()
	status, body, err := targets.Read(ctx, p.s.Observer, url, base.Tenant)
	if err == nil && (status < 200 || status > 299) {
		err = errStatus(status)
	}
	return body, url, err
}

// errStatus is a read answered with a status other than 2xx.
type errStatus int

func (e errStatus) Error() string { return "answered " + http.StatusText(int(e)) }
