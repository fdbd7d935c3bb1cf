package framework

import (
	"bytes"
	"strings"
	"testing"
	"time"
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
			capRemote(&s, []string{"https://api.example.com"}, &out)
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
