package runner

import (
	"os"
	"path/filepath"
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestParseEnvFile(t *testing.T) {
	cases := []struct {
		name, content, key string
		want               string
		found, err         bool
	}{
		{"a single-quoted value", "A='x'\n", "A", "x", true, false},
		{"the corpus file: two keys", "DB_ADDRESS='address'\nREST_ENDPOINT='endpoint'\n", "REST_ENDPOINT", "endpoint", true, false},
		{"the value is literal", "A='$HOME \\n \"q\"'", "A", `$HOME \n "q"`, true, false},
		{"a value may span lines", "A='one\ntwo'\nB='b'", "A", "one\ntwo", true, false},
		{"comments, blank lines and leading blanks are skipped", "# c\n\n   A='x' # trailing\n", "A", "x", true, false},
		{"the first assignment wins", "A='1'\nA='2'\n", "A", "1", true, false},
		{"blank after '=' is an empty value", "A= 'x'\n", "A", "", true, false},
		{"a missing key is not found", "A='x'\n", "B", "", false, false},
		{"an unquoted value is an error", "A=x\n", "A", "", false, true},
		{"whitespace before '=' is an error", "A ='x'\n", "A", "", false, true},
		{"a line without '=' is an error", "A\n", "A", "", false, true},
		{"an unterminated quote is an error", "A='x\n", "A", "", false, true},
		{"text after the closing quote is an error", "A='x' y\n", "A", "", false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, found, err := parseEnvFile(tc.content, tc.key)
			if (err != nil) != tc.err || found != tc.found || got != tc.want {
				t.Errorf("parseEnvFile = %q, %v, %v; want %q, %v, error %v", got, found, err, tc.want, tc.found, tc.err)
			}
		})
	}
}

func TestFileKeyValue(t *testing.T) {
	podDir := t.TempDir()
	vol := filepath.Join(podDir, "volumes", "kubernetes.io~empty-dir", "config")
	os.MkdirAll(vol, 0o755)
	os.WriteFile(filepath.Join(vol, "config.env"), []byte("DB_ADDRESS='address'\n"), 0o644)
	os.Symlink("/etc/passwd", filepath.Join(vol, "escape.env"))
	pod := &v1.Pod{Spec: v1.PodSpec{Volumes: []v1.Volume{
		{Name: "config", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
		{Name: "host", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/etc"}}},
	}}}
	yes := true
	ref := func(vol, path, key string, optional bool) *v1.FileKeySelector {
		r := &v1.FileKeySelector{VolumeName: vol, Path: path, Key: key}
		if optional {
			r.Optional = &yes
		}
		return r
	}
	if v, skip, err := fileKeyValue(pod, podDir, ref("config", "config.env", "DB_ADDRESS", false)); v != "address" || skip || err != nil {
		t.Errorf("the key of the file: %q %v %v", v, skip, err)
	}
	if _, skip, err := fileKeyValue(pod, podDir, ref("config", "config.env", "NOPE", true)); !skip || err != nil {
		t.Errorf("an optional missing key is skipped: %v %v", skip, err)
	}
	if _, _, err := fileKeyValue(pod, podDir, ref("config", "config.env", "NOPE", false)); err == nil {
		t.Error("a missing key that is not optional must fail")
	}
	if _, _, err := fileKeyValue(pod, podDir, ref("config", "escape.env", "root", false)); err == nil {
		t.Error("a symlink out of the volume must not be followed")
	}
	if _, _, err := fileKeyValue(pod, podDir, ref("config", "../x", "A", false)); err == nil {
		t.Error("a path with .. must be refused")
	}
	if _, _, err := fileKeyValue(pod, podDir, ref("host", "passwd", "root", false)); err == nil {
		t.Error("only emptyDir volumes may hold env files")
	}
}
