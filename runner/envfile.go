package runner

import (
	"fmt"
	"path/filepath"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/podrun/podrun/volumes"
)

// maxEnvFileSize bounds what podrun reads of an env file (fileKeyRef).
const maxEnvFileSize = 1 << 20

// fileKeyValue resolves a fileKeyRef (the EnvFiles feature): the key of an
// env file at path inside an emptyDir volume of the pod, read from the
// volume's host dir after the earlier (init) containers wrote it. skip
// means optional and the file or key is missing.
func fileKeyValue(pod *v1.Pod, podDir string, ref *v1.FileKeySelector) (string, bool, error) {
	var vol *v1.Volume
	for i := range pod.Spec.Volumes {
		if pod.Spec.Volumes[i].Name == ref.VolumeName {
			vol = &pod.Spec.Volumes[i]
		}
	}
	if vol == nil || vol.EmptyDir == nil {
		return "", false, fmt.Errorf("fileKeyRef: volume %q must be an emptyDir volume of the pod", ref.VolumeName)
	}
	dir := filepath.Join(podDir, "volumes", volumes.PluginEmptyDir, ref.VolumeName)
	b, err := volumes.ReadFileBeneath(dir, ref.Path, maxEnvFileSize)
	if err != nil {
		if isTrue(ref.Optional) {
			return "", true, nil
		}
		return "", false, fmt.Errorf("couldn't read env file %q in volume %q: %v", ref.Path, ref.VolumeName, err)
	}
	v, found, err := parseEnvFile(string(b), ref.Key)
	if err != nil {
		return "", false, fmt.Errorf("env file %q in volume %q: %v", ref.Path, ref.VolumeName, err)
	}
	if !found {
		if isTrue(ref.Optional) {
			return "", true, nil
		}
		return "", false, fmt.Errorf("couldn't find key %v in env file %q in volume %q", ref.Key, ref.Path, ref.VolumeName)
	}
	return v, false, nil
}

// parseEnvFile finds key in an env file in the strict subset of POSIX shell
// syntax the kubelet's EnvFiles parser accepts:
//
//   - NAME='value': the value is single-quoted and kept literally (no
//     escapes, no expansion) and may span lines;
//   - a comment may follow the closing quote; lines starting with '#' and
//     blank lines are skipped; leading whitespace is ignored;
//   - whitespace before '=' is an error; whitespace right after '=' makes
//     the value empty; an unquoted value is an error.
//
// The first assignment of key wins.
func parseEnvFile(content, key string) (string, bool, error) {
	lines := strings.Split(content, "\n")
	for n := 0; n < len(lines); n++ {
		line := strings.TrimLeft(lines[n], " \t")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		eq := strings.IndexByte(line, '=')
		if eq < 0 {
			return "", false, fmt.Errorf("line %d: missing '='", n+1)
		}
		name := line[:eq]
		if name == "" {
			return "", false, fmt.Errorf("line %d: empty variable name", n+1)
		}
		if strings.TrimRight(name, " \t") != name {
			return "", false, fmt.Errorf("line %d: whitespace before '='", n+1)
		}
		rest := line[eq+1:]
		var value string
		switch {
		case rest == "" || rest[0] == ' ' || rest[0] == '\t':
			// An empty assignment; anything after the blank is ignored.
		case rest[0] == '\'':
			body := rest[1:]
			for !strings.Contains(body, "'") {
				if n+1 >= len(lines) {
					return "", false, fmt.Errorf("line %d: unterminated single quote", n+1)
				}
				n++
				body += "\n" + lines[n]
			}
			end := strings.IndexByte(body, '\'')
			value = body[:end]
			if after := strings.TrimLeft(body[end+1:], " \t"); after != "" && !strings.HasPrefix(after, "#") {
				return "", false, fmt.Errorf("line %d: unexpected text after the closing quote", n+1)
			}
		default:
			return "", false, fmt.Errorf("line %d: the value of %s must be enclosed in single quotes", n+1, name)
		}
		if name == key {
			return value, true, nil
		}
	}
	return "", false, nil
}
