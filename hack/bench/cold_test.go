package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestColdLinks(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		bad  bool
	}{
		{"per-connection,shared", []string{"per-connection", "shared"}, false},
		{"shared, per-connection", []string{"shared", "per-connection"}, false},
		{"per-connection", []string{"per-connection"}, false},
		{"shared,shared", nil, true},
		{"", nil, true},
		{"fast", nil, true},
	} {
		got, err := coldLinks(tc.in)
		if (err != nil) != tc.bad || !slices.Equal(got, tc.want) {
			t.Errorf("coldLinks(%q) = %q, %v; want %q, error %v", tc.in, got, err, tc.want, tc.bad)
		}
	}
}

func TestColdVerdict(t *testing.T) {
	for _, tc := range []struct {
		ratio, goal float64
		link, want  string
	}{
		{0.55, 0.6, "per-connection", "meets the goal"},
		{0.60, 0.6, "per-connection", "meets the goal"},
		{0.61, 0.6, "per-connection", "MISSES the goal"},
		{0.84, 0.6, "shared", "not judged"},
		{0.84, 0.6, "shared", "would miss it"},
		{0.40, 0.5, "shared", "would meet it"},
	} {
		if got := coldVerdict(tc.ratio, tc.goal, tc.link); !strings.Contains(got, tc.want) {
			t.Errorf("coldVerdict(%.2f, %.2f, %s) = %q, want it to say %q", tc.ratio, tc.goal, tc.link, got, tc.want)
		}
	}
}

func TestFloorNote(t *testing.T) {
	for _, tc := range []struct {
		floor, other time.Duration
		goal         float64
		want         string
		below        bool
	}{
		{4800 * time.Millisecond, 9300 * time.Millisecond, 0.5, "is 0.52 of it", true},
		{4800 * time.Millisecond, 8900 * time.Millisecond, 0.6, "is 0.54 of it", false},
		{3000 * time.Millisecond, 6000 * time.Millisecond, 0.5, "is 0.50 of it", false},
	} {
		got := floorNote(tc.floor, tc.other, tc.goal)
		if !strings.Contains(got, tc.want) || strings.Contains(got, "below the floor") != tc.below {
			t.Errorf("floorNote(%v, %v, %.2f) = %q, want %q and below the floor %v", tc.floor, tc.other, tc.goal, got, tc.want, tc.below)
		}
	}
}
