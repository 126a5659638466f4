package main

import (
	"strings"
	"testing"
	"time"
)

func TestPressureFull(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     time.Duration
		ok       bool
	}{
		{"io", "some avg10=21.66 avg60=5.08 avg300=2.31 total=1034856668\nfull avg10=16.26 avg60=3.80 avg300=1.37 total=285299259\n",
			285299259 * time.Microsecond, true},
		{"no full line", "some avg10=0.00 avg60=0.00 avg300=0.00 total=12\n", 0, false},
		{"no PSI", "", 0, false},
		{"bad total", "full avg10=0.00 total=x\n", 0, false},
		{"negative", "full avg10=0.00 total=-5\n", 0, false},
	} {
		got, ok := pressureFull(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: pressureFull = %v, %v; want %v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

func TestStallNote(t *testing.T) {
	quiet := []sample{{wall: 20 * time.Second, ioStall: 3 * time.Millisecond}, {wall: 21 * time.Second, ioStall: -1}}
	if n := stallNote("podrun", quiet); n != "" {
		t.Errorf("quiet rounds noted: %q", n)
	}
	stalled := append(quiet, sample{wall: 41 * time.Second, ioStall: 18 * time.Second})
	n := stallNote("podrun", stalled)
	if !strings.HasPrefix(n, "podrun's runs") || !strings.Contains(n, "round 3: 18.0 s of its 41.0 s") || strings.Contains(n, "round 1") {
		t.Errorf("stallNote = %q, want round 3 alone", n)
	}
}
