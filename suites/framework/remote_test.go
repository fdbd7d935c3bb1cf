package framework

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/targets"
)

func TestCapRemote(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		in                      Settings
		burst, rounds, replays  int
		loadDuration            time.Duration
		wantLine, wantNotInLine string
	}{
		{"defaults", Settings{}, 4, 5, 5, 0, "modest defaults --burst 4, --rounds 5, --replays 5, --load-rate 20", "hard"},
		{"rounds given", Settings{RaceRounds: 9}, 4, 9, 5, 0, "--burst 4, --replays 5, --load-rate 20", "--rounds"},
		{"all given", Settings{RaceK: 16, RaceRounds: 20, ReplayN: 10, LoadRate: 20}, 16, 20, 10, 0, "", ""},
		{"over the hard caps", Settings{RaceK: 500, RaceRounds: 1000, ReplayN: 99, LoadRate: 20, LoadDuration: 10 * time.Minute},
			RemoteHardBurst, RemoteHardRounds, RemoteHardReplays, RemoteHardLoadDuration,
			"hard caps --burst 32, --rounds 50, --replays 20, --load-duration 1m0s", "modest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.in
			var out bytes.Buffer
			limits := capRemote(&s, []string{"https://api.example.com"}, nil, &out)
			if !strings.Contains(limits, "100 hits/s for 1m0s") {
				t.Errorf("limits in force %q, want the hard caps", limits)
			}
			if s.RaceK != tc.burst || s.RaceRounds != tc.rounds || s.ReplayN != tc.replays || s.LoadRate != RemoteLoadRate ||
				s.LoadDuration != tc.loadDuration {
				t.Errorf("burst, rounds, replays, load rate, duration = %d, %d, %d, %d, %v; want %d, %d, %d, %d, %v",
					s.RaceK, s.RaceRounds, s.ReplayN, s.LoadRate, s.LoadDuration, tc.burst, tc.rounds, tc.replays, RemoteLoadRate, tc.loadDuration)
			}
			line := out.String()
			if (tc.wantLine == "") != (line == "") || !strings.Contains(line, tc.wantLine) ||
				(tc.wantNotInLine != "" && strings.Contains(line, tc.wantNotInLine)) {
				t.Errorf("printed %q, want a line with %q", line, tc.wantLine)
			}
			if line != "" && !strings.Contains(line, "https://api.example.com") {
				t.Errorf("the line does not name the target: %q", line)
			}
		})
	}
}

func TestCapRemoteLiftedByTheTargetsLoadLimits(t *testing.T) {
	s := Settings{LoadRate: 2000, LoadDuration: 20 * time.Minute}
	var out bytes.Buffer
	limits := capRemote(&s, []string{"https://api.example.com"}, &targets.LoadLimits{MaxRate: 1000, MaxDuration: 10 * time.Minute}, &out)
	if s.LoadRate != 1000 || s.LoadDuration != 10*time.Minute {
		t.Fatalf("load rate %d for %v, want the declared 1000 for 10m", s.LoadRate, s.LoadDuration)
	}
	if !strings.Contains(limits, "1000 hits/s for 10m0s") || !strings.Contains(limits, "load_limits") {
		t.Fatalf("limits in force %q", limits)
	}
	s = Settings{LoadRate: 500, LoadDuration: 5 * time.Minute}
	capRemote(&s, []string{"https://api.example.com"}, &targets.LoadLimits{MaxRate: 1000, MaxDuration: 10 * time.Minute}, &out)
	if s.LoadRate != 500 || s.LoadDuration != 5*time.Minute {
		t.Fatalf("settings under the declared limits changed: %d for %v", s.LoadRate, s.LoadDuration)
	}
}
