// Package faults holds retrysafe's nemesis: faults that can be injected into a target and
// healed, and the processes the harness starts and may kill.
package faults

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sync"
	"syscall"
	"time"
)

// Process is a process the harness started, in its own process group, so that it and
// every child it spawned can be signalled together. Only processes started here are ever
// signalled.
type Process struct {
	Name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error

	readyLine *regexp.Regexp // closes ready at the first line it matches (nil: none)
	ready     chan struct{}
	tee       io.Writer    // a copy of each line of its output (nil: none)
	onLine    func(string) // called with each line of its output (nil: none)

	mu     sync.Mutex
	output []string // the last lines it printed, for error messages
}

// Processes tracks every process started by a run, so that all of them are reaped when the
// run ends, also on failure, deadline or interrupt.
type Processes struct {
	mu    sync.Mutex
	procs []*Process
	tee   io.Writer // receives every line of every process's output, after its name (nil: none)
}

// TeeTo makes every process started from now on copy each line of its output to w, after
// the process's name.
func (ps *Processes) TeeTo(w io.Writer) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.tee = w
}

// maxKeptLines bounds the output a process keeps for error messages.
const maxKeptLines = 20

// Start starts argv with extra environment entries in its own process group.
func (ps *Processes) Start(name string, argv, env []string) (*Process, error) {
	return ps.StartIn(name, argv, env, "")
}

// StartIn is Start in a working directory ("" = the harness's).
func (ps *Processes) StartIn(name string, argv, env []string, dir string) (*Process, error) {
	return ps.StartWatching(name, argv, env, dir, nil)
}

// StartWatching is StartIn for a process whose readiness is a line it prints: Ready is closed
// once a line of its output matches readyLine (never when readyLine is nil).
func (ps *Processes) StartWatching(name string, argv, env []string, dir string, readyLine *regexp.Regexp) (*Process, error) {
	return ps.start(name, argv, env, dir, readyLine, nil)
}

// StartReading is StartIn for a process whose output the caller reads as it comes: onLine is
// called with each line, in order, from one goroutine, before Done is closed.
func (ps *Processes) StartReading(name string, argv, env []string, dir string, onLine func(line string)) (*Process, error) {
	return ps.start(name, argv, env, dir, nil, onLine)
}

// start starts a process, watching its output for readyLine and handing each line to onLine.
func (ps *Processes) start(name string, argv, env []string, dir string, readyLine *regexp.Regexp, onLine func(string)) (*Process, error) {
	if len(argv) == 0 {
		return nil, errors.New("empty command")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	ps.mu.Lock()
	tee := ps.tee
	ps.mu.Unlock()
	p := &Process{Name: name, cmd: cmd, done: make(chan struct{}), readyLine: readyLine, ready: make(chan struct{}), tee: tee, onLine: onLine}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = cmd.Stdout // one pipe: ordered output
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	ps.mu.Lock()
	ps.procs = append(ps.procs, p)
	ps.mu.Unlock()
	go func() {
		p.read(stdout) // to the end first: Wait closes the pipe, and Done promises the whole output
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// read keeps the last lines of output until the pipe closes.
func (p *Process) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if p.tee != nil {
			fmt.Fprintf(p.tee, "%s | %s\n", p.Name, line)
		}
		if p.onLine != nil {
			p.onLine(line)
		}
		if p.readyLine != nil && p.readyLine.MatchString(line) {
			p.readyLine = nil // only this goroutine reads it
			close(p.ready)
		}
		p.mu.Lock()
		p.output = append(p.output, line)
		if len(p.output) > maxKeptLines {
			p.output = p.output[1:]
		}
		p.mu.Unlock()
	}
}

// Output returns the last lines the process printed.
func (p *Process) Output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.output) == 0 {
		return "(no output)"
	}
	s := ""
	for _, l := range p.output {
		s += "\n  " + l
	}
	return s
}

// ExitCode returns the exit status of a process that has exited: -1 when a signal ended it, or
// while it runs.
func (p *Process) ExitCode() int {
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
	default:
		return -1
	}
}

// Pid returns the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Ready is closed once the process printed a line matching the pattern it was started
// watching for (StartWatching); never otherwise.
func (p *Process) Ready() <-chan struct{} { return p.ready }

// Done is closed when the process has exited and been reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// Signal sends sig to the process's whole group (no-op once it has exited).
func (p *Process) Signal(sig syscall.Signal) error {
	select {
	case <-p.done:
		return nil
	default:
	}
	return syscall.Kill(-p.cmd.Process.Pid, sig)
}

// Kill SIGKILLs the process group and waits until the process is reaped.
func (p *Process) Kill() {
	_ = p.Signal(syscall.SIGKILL)
	<-p.done
}

// Stop asks the process group to terminate (SIGTERM), and SIGKILLs it after grace.
func (p *Process) Stop(grace time.Duration) {
	_ = p.Signal(syscall.SIGCONT) // a paused process cannot act on SIGTERM
	_ = p.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		p.Kill()
	}
	// Children that outlived their parent are still in the group.
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
}

// StopAll stops every process started through ps and waits for each.
func (ps *Processes) StopAll(grace time.Duration) {
	ps.mu.Lock()
	procs := ps.procs
	ps.procs = nil
	ps.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.Stop(grace)
		}()
	}
	wg.Wait()
}
