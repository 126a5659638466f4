package termprogress

import (
	"os"

	"golang.org/x/sys/unix"
)

// IsTerminal tells whether f is a terminal.
func IsTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// Width is the terminal f's width in columns, 0 if it does not say.
func Width(f *os.File) int {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}

// Wanted tells whether podrun's progress should be a live status: on a
// terminal (tty), not in CI (the CI variable, which CI systems set, is
// empty) and on a terminal that moves the cursor (TERM set and not dumb).
func Wanted(tty bool, ci, term string) bool {
	return tty && ci == "" && term != "" && term != "dumb"
}
