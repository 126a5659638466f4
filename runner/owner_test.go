package runner

import (
	"fmt"
	"os"
	"strconv"
	"testing"
)

// statLine builds a /proc/<pid>/stat line with the given command name and
// starttime (field 22).
func statLine(comm string, start uint64) string {
	// Fields 3..21, then 22 = starttime, then a few more.
	s := fmt.Sprintf("1234 (%s) S", comm)
	for f := 4; f <= 21; f++ {
		s += " " + strconv.Itoa(f)
	}
	return s + fmt.Sprintf(" %d 23 24 25\n", start)
}

func TestParseStatStartTime(t *testing.T) {
	cases := []struct {
		name    string
		stat    string
		want    uint64
		wantErr bool
	}{
		{name: "a plain command name", stat: statLine("podrun", 123456), want: 123456},
		{name: "a command name with spaces", stat: statLine("my pod run", 77), want: 77},
		{name: "a command name with parentheses and spaces", stat: statLine("a) S 1 2 (b", 987654321), want: 987654321},
		{name: "a command name that is just ')'", stat: statLine(")", 5), want: 5},
		{name: "no closing parenthesis", stat: "1234 podrun S 1 2 3", wantErr: true},
		{name: "too few fields", stat: "1234 (podrun) S 1 2 3\n", wantErr: true},
		{name: "a non-numeric starttime", stat: "1 (x) S 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 abc 23", wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStatStartTime(tc.stat)
			if tc.wantErr {
				if err == nil {
					t.Errorf("parseStatStartTime = %d, want an error", got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("parseStatStartTime = %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

// deadPID returns a PID that no process has.
func deadPID(t *testing.T) int {
	t.Helper()
	for pid := 4194000; pid > 1000; pid-- {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); os.IsNotExist(err) {
			return pid
		}
	}
	t.Fatal("no free PID found")
	return 0
}

func TestOwnerAlive(t *testing.T) {
	me, err := newOwner(false)
	if err != nil {
		t.Fatal(err)
	}
	if me.PID != os.Getpid() || me.PIDStart == 0 || len(me.RunID) != 12 || me.Detached {
		t.Errorf("newOwner = %+v", me)
	}
	other, _ := newOwner(true)
	if other.RunID == me.RunID || !other.Detached {
		t.Errorf("newOwner(true) = %+v: want a new run ID, detached", other)
	}
	cases := []struct {
		name string
		o    Owner
		want bool
	}{
		{"this process is alive", me, true},
		{"this process without a recorded start time is alive", Owner{PID: me.PID}, true},
		{"a dead PID is not alive", Owner{PID: deadPID(t), PIDStart: me.PIDStart}, false},
		{"a live PID with another start time is a reused PID: not alive", Owner{PID: me.PID, PIDStart: me.PIDStart + 1}, false},
		{"PID 0 is not alive", Owner{}, false},
		{"a negative PID is not alive", Owner{PID: -1}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.o.Alive(); got != tc.want {
				t.Errorf("Alive(%+v) = %v, want %v", tc.o, got, tc.want)
			}
		})
	}
}
