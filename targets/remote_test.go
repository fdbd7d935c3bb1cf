package targets

import (
	"net/url"
	"slices"
	"testing"
)

func TestIsLoopbackHost(t *testing.T) {
	for _, tc := range []struct {
		host string
		want bool
	}{
		{"localhost", true},
		{"LocalHost", true},
		{"LOCALHOST", true},
		{"127.0.0.1", true},
		{"127.1.2.3", true},
		{"127.9.8.7", true},
		{"::1", true},
		{"::ffff:127.0.0.1", true},
		{"0.0.0.0", false},
		{"10.0.0.1", false},
		{"128.0.0.1", false},
		{"::", false},
		{"::ffff:8.8.8.8", false},
		{"localhost.example.com", false},
		{"127.0.0.1.nip.io", false},
		{"api.example.invalid", false},
		{"api.stripe.com", false},
		{"", false},
	} {
		if got := IsLoopbackHost(tc.host); got != tc.want {
			t.Errorf("IsLoopbackHost(%q) = %v, want %v", tc.host, got, tc.want)
		}
	}
}

// TestIsLoopbackHostOfURL: the host is taken from a URL with Hostname (port and brackets off).
func TestIsLoopbackHostOfURL(t *testing.T) {
	tests := []struct {
		url  string
		want bool
	}{
		{"http://127.0.0.1:8080", true},
		{"http://127.9.8.7", true},
		{"http://[::1]:80", true},
		{"https://LOCALHOST:8443/api", true},
		{"http://localhost.example.com", false},
		{"http://10.0.0.1:8080", false},
		{"https://api.stripe.com", false},
		{"http://0.0.0.0:8080", false},
		{"http://[::ffff:8.8.8.8]", false},
	}
	for _, tt := range tests {
		u, err := url.Parse(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := IsLoopbackHost(u.Hostname()); got != tt.want {
			t.Errorf("IsLoopbackHost(%s) = %v, want %v", tt.url, got, tt.want)
		}
	}
}

func TestRemoteInstances(t *testing.T) {
	var tg Target
	for i, raw := range []string{"http://127.0.0.1:8080", "https://user:secret@api.example.invalid/base",
		"http://[::1]:80", "https://user:secret@api.example.invalid/base", "http://10.0.0.1:8080"} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		tg.Instances = append(tg.Instances, Instance{URL: u, Index: i})
	}
	want := []string{"https://user:xxxxx@api.example.invalid/base", "http://10.0.0.1:8080"}
	if got := tg.RemoteInstances(); !slices.Equal(got, want) {
		t.Errorf("RemoteInstances() = %q, want %q", got, want)
	}
	local := Target{Instances: tg.Instances[:1]}
	if got := local.RemoteInstances(); got != nil {
		t.Errorf("RemoteInstances() of a local target = %q, want none", got)
	}
}
