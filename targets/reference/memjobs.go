package reference

import (
	"context"
	"slices"
)

// The memory store's jobs (jobs.go): a list under the store's lock, written beside the key's
// answer by Complete.

var _ Jobs = (*MemoryStore)(nil)

// addJob appends a job (nothing for nil); m.mu is held.
func (m *MemoryStore) addJob(j *Job) {
	if j == nil {
		return
	}
	c := *j
	c.Created = storeTime(j.Created)
	if c.State == "" {
		c.State = JobPending
	}
	m.jobs = append(m.jobs, c)
}

// AddJob implements Jobs.
func (m *MemoryStore) AddJob(_ context.Context, j Job) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.addJob(&j)
	return nil
}

// PendingJobs implements Jobs.
func (m *MemoryStore) PendingJobs(_ context.Context, n int) ([]Job, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Job
	for _, j := range m.jobs {
		if len(out) == n {
			break
		}
		if j.State == JobPending {
			out = append(out, j)
		}
	}
	return out, nil
}

// FinishJob implements Jobs.
func (m *MemoryStore) FinishJob(_ context.Context, id string, state JobState, rec *Record) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	i := slices.IndexFunc(m.jobs, func(j Job) bool { return j.ID == id })
	if i < 0 || m.jobs[i].State != JobPending {
		return false, nil
	}
	m.jobs[i].State = state
	if rec != nil {
		m.jobs[i].RecordID = rec.ID
		m.addRecord(*rec)
	}
	return true, nil
}

// OperationJobs implements Jobs.
func (m *MemoryStore) OperationJobs(_ context.Context, tenant, operation string) ([]Job, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Job
	for _, j := range m.jobs {
		if j.Operation == operation && j.Tenant == tenant {
			out = append(out, j)
		}
	}
	return out, nil
}
