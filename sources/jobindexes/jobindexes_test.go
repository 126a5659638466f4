package jobindexes

import (
	"slices"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    []int
		wantErr string
	}{
		{in: "", want: nil},
		{in: "0", want: []int{0}},
		{in: "0,2-4,7", want: []int{0, 2, 3, 4, 7}},
		{in: "1-2", want: []int{1, 2}},
		{in: "8", wantErr: `too large index: "8"`},
		{in: "3,1", wantErr: "non-increasing order, previous: 3, current: 1"},
		{in: "3-3", wantErr: "non-increasing order, previous: 3, current: 3"},
		{in: "1-2-3", wantErr: `the fragment "1-2-3" violates the requirement that an index interval can have at most two parts separated by '-'`},
		{in: "a", wantErr: `cannot convert string to integer for index: "a"`},
	} {
		got, err := Parse(tc.in, 8)
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("Parse(%q) error = %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("Parse(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		in   []int
		want string
	}{
		{nil, ""},
		{[]int{0}, "0"},
		{[]int{1, 2}, "1,2"},
		{[]int{4, 0, 1, 2, 7, 2}, "0-2,4,7"},
	} {
		if got := Format(tc.in); got != tc.want {
			t.Errorf("Format(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
