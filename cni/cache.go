package cni

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/containernetworking/cni/pkg/invoke"
)

// Validating a network configuration runs every plugin binary once
// (VERSION), which costs a few milliseconds each on every podrun run. A
// successful validation is therefore remembered in a state file, keyed by
// everything it depended on: the dirs, the configuration file's bytes and
// the identity (device, inode, size, modification time) of each plugin
// binary found. Any change re-validates.

// validationKey returns the key of a validation of file's network list
// with the given plugin types, or "" when one cannot be formed (a file or
// plugin is missing: then validation runs and says why).
func validationKey(d Dirs, file string, types []string) string {
	h := sha256.New()
	fmt.Fprintf(h, "podrun-cni-validation-v1\x00%s\x00%s\x00%v\x00", d.ConfDir, strings.Join(d.BinDirs, ":"), d.Loopback)
	b, err := os.ReadFile(file)
	if err != nil {
		return ""
	}
	fmt.Fprintf(h, "%s\x00%d:", file, len(b))
	h.Write(b)
	if d.Loopback {
		types = append(types, "loopback")
	}
	for _, t := range types {
		path, err := invoke.FindInPath(t, d.BinDirs)
		if err != nil {
			return ""
		}
		fi, err := os.Stat(path)
		if err != nil {
			return ""
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return ""
		}
		fmt.Fprintf(h, "\x00%s=%s:%d:%d:%d:%d", t, path, st.Dev, st.Ino, fi.Size(), fi.ModTime().UnixNano())
	}
	return hex.EncodeToString(h.Sum(nil))
}

// validatedBefore reports whether stateFile records key.
func validatedBefore(stateFile, key string) bool {
	if stateFile == "" || key == "" {
		return false
	}
	b, err := os.ReadFile(stateFile)
	return err == nil && strings.TrimSpace(string(b)) == key
}

// rememberValidation records key in stateFile, atomically; a failure only
// costs a validation next time.
func rememberValidation(stateFile, key string) {
	if stateFile == "" || key == "" {
		return
	}
	if err := os.MkdirAll(filepath.Dir(stateFile), 0o750); err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(stateFile), ".cni-validated-")
	if err != nil {
		return
	}
	_, werr := tmp.WriteString(key + "\n")
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), stateFile) != nil {
		os.Remove(tmp.Name())
	}
}
