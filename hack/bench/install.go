package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// installedCopy copies the binary at path into dir with plain writes, as
// dpkg, install(1) or a download write a binary, and returns the copy's
// path. A binary fresh from the Go linker (make build, go build -o) has its
// pages in the page cache as the linker wrote them, through a mapping of
// the file, and exec maps those at a higher cost: on the testbed one
// podrun pod took 1.5 to 2 ms more CPU (of about 21) from bin/podrun than
// from a copy with the same bytes, and nothing once bin/podrun's pages were
// dropped and read back (docs/benchmark.md, A run's first milliseconds).
// A node runs an installed binary, so the bench does too, on both sides.
func installedCopy(path, dir string) (string, error) {
	dst := filepath.Join(dir, "installed", filepath.Base(path))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", fmt.Errorf("copying the binary to measure: %w", err)
	}
	// Copied by the kernel (copy_file_range), not through a buffer of the
	// bench's: a child's peak RSS counts the bench's own memory at the
	// moment it execs (the kernel carries the old mapping's high-water mark
	// into the new program's), and a 27 MB buffer showed as podrun's.
	if err := copyFile(path, dst); err != nil {
		return "", fmt.Errorf("copying the binary to measure: %w", err)
	}
	return dst, nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
