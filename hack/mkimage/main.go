// Command mkimage writes a deterministic OCI image layout from one or more
// root filesystem directories, one gzip layer per directory.
//
// It exists because the testbed has no Docker engine: hack/testbed.sh builds
// a busybox rootfs on disk, turns it into OCI layouts with this program and
// pushes them to the local registries with skopeo.
//
// Determinism: entries are sorted, owned by 0:0, stamped with a fixed mtime
// and gzip'ed without a name or time, so the same inputs give the same
// digests on every run (and skopeo skips blobs the registry already has).
//
// Usage:
//
//	mkimage -out DIR -layer ROOTFS [-layer ROOTFS2] [-entrypoint '["/bin/x"]']
//	        [-cmd '["sh"]'] [-env K=V ...] [-expose 80/tcp] [-workdir /]
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// epoch is the fixed timestamp of every tar entry and of the config.
var epoch = time.Unix(0, 0).UTC()

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

func main() {
	var (
		out        = flag.String("out", "", "output OCI layout directory (recreated)")
		entrypoint = flag.String("entrypoint", "", "JSON array for the image Entrypoint")
		cmd        = flag.String("cmd", "", "JSON array for the image Cmd")
		workdir    = flag.String("workdir", "/", "image WorkingDir")
		layers     listFlag
		envs       listFlag
		exposes    listFlag
	)
	flag.Var(&layers, "layer", "rootfs directory to pack as a layer (repeatable, bottom first)")
	flag.Var(&envs, "env", "KEY=VALUE for the image Env (repeatable)")
	flag.Var(&exposes, "expose", "port/proto for ExposedPorts (repeatable)")
	flag.Parse()
	if *out == "" || len(layers) == 0 {
		fmt.Fprintln(os.Stderr, "mkimage: -out and at least one -layer are required")
		os.Exit(2)
	}
	if err := run(*out, layers, *entrypoint, *cmd, *workdir, envs, exposes); err != nil {
		fmt.Fprintln(os.Stderr, "mkimage:", err)
		os.Exit(1)
	}
}

func run(out string, layers []string, entrypoint, cmd, workdir string, envs, exposes []string) error {
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	blobs := filepath.Join(out, "blobs", "sha256")
	if err := os.MkdirAll(blobs, 0o755); err != nil {
		return err
	}
	writeBlob := func(b []byte) (string, error) {
		sum := sha256.Sum256(b)
		h := hex.EncodeToString(sum[:])
		return "sha256:" + h, os.WriteFile(filepath.Join(blobs, h), b, 0o644)
	}
	// writeJSONBlob writes v as a JSON blob and returns its descriptor.
	writeJSONBlob := func(mediaType string, v any) (descriptor, error) {
		b, err := json.Marshal(v)
		if err != nil {
			return descriptor{}, err
		}
		d, err := writeBlob(b)
		return descriptor{MediaType: mediaType, Digest: d, Size: int64(len(b))}, err
	}

	var layerDescs []descriptor
	var diffIDs []string
	for _, dir := range layers {
		tarBytes, err := tarDir(dir)
		if err != nil {
			return fmt.Errorf("pack %s: %w", dir, err)
		}
		sum := sha256.Sum256(tarBytes)
		diffIDs = append(diffIDs, "sha256:"+hex.EncodeToString(sum[:]))
		var gz bytes.Buffer
		zw, err := gzip.NewWriterLevel(&gz, gzip.BestCompression)
		if err != nil {
			return err
		}
		// Header left zero (no name, no mtime) for determinism.
		if _, err := zw.Write(tarBytes); err != nil {
			return err
		}
		if err := zw.Close(); err != nil {
			return err
		}
		d, err := writeBlob(gz.Bytes())
		if err != nil {
			return err
		}
		layerDescs = append(layerDescs, descriptor{
			MediaType: "application/vnd.oci.image.layer.v1.tar+gzip",
			Digest:    d, Size: int64(gz.Len()),
		})
	}

	imgConfig := map[string]any{
		"Env":        envs,
		"WorkingDir": workdir,
	}
	if entrypoint != "" {
		var v []string
		if err := json.Unmarshal([]byte(entrypoint), &v); err != nil {
			return fmt.Errorf("-entrypoint: %w", err)
		}
		imgConfig["Entrypoint"] = v
	}
	if cmd != "" {
		var v []string
		if err := json.Unmarshal([]byte(cmd), &v); err != nil {
			return fmt.Errorf("-cmd: %w", err)
		}
		imgConfig["Cmd"] = v
	}
	if len(exposes) > 0 {
		ports := map[string]struct{}{}
		for _, p := range exposes {
			ports[p] = struct{}{}
		}
		imgConfig["ExposedPorts"] = ports
	}
	config := map[string]any{
		"created":      epoch.Format(time.RFC3339),
		"architecture": "amd64",
		"os":           "linux",
		"config":       imgConfig,
		"rootfs":       map[string]any{"type": "layers", "diff_ids": diffIDs},
		"history":      []map[string]any{{"created": epoch.Format(time.RFC3339), "created_by": "podrun hack/mkimage"}},
	}
	configDesc, err := writeJSONBlob("application/vnd.oci.image.config.v1+json", config)
	if err != nil {
		return err
	}
	manifest := map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"config":        configDesc,
		"layers":        layerDescs,
	}
	manifestDesc, err := writeJSONBlob("application/vnd.oci.image.manifest.v1+json", manifest)
	if err != nil {
		return err
	}
	manifestDesc.Annotations = map[string]string{"org.opencontainers.image.ref.name": "latest"}
	index := map[string]any{
		"schemaVersion": 2,
		"manifests":     []descriptor{manifestDesc},
	}
	indexBytes, err := json.Marshal(index)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "index.json"), indexBytes, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "oci-layout"), []byte(`{"imageLayoutVersion":"1.0.0"}`), 0o644)
}

// tarDir packs dir as an uncompressed tar with sorted entries, 0:0 owners
// and fixed times. Regular files, directories and symlinks only.
func tarDir(dir string) ([]byte, error) {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, p := range paths {
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return nil, err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return nil, err
		}
		hdr := &tar.Header{
			Name:    filepath.ToSlash(rel),
			Mode:    int64(fi.Mode().Perm()),
			ModTime: epoch,
			Format:  tar.FormatPAX,
		}
		if fi.Mode()&fs.ModeSticky != 0 {
			hdr.Mode |= 0o1000
		}
		if fi.Mode()&fs.ModeSetuid != 0 {
			hdr.Mode |= 0o4000
		}
		if fi.Mode()&fs.ModeSetgid != 0 {
			hdr.Mode |= 0o2000
		}
		switch {
		case fi.Mode().IsDir():
			hdr.Typeflag = tar.TypeDir
			hdr.Name += "/"
		case fi.Mode().IsRegular():
			hdr.Typeflag = tar.TypeReg
			hdr.Size = fi.Size()
		case fi.Mode()&fs.ModeSymlink != 0:
			hdr.Typeflag = tar.TypeSymlink
			if hdr.Linkname, err = os.Readlink(p); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("%s: unsupported file type %v", p, fi.Mode().Type())
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if hdr.Typeflag == tar.TypeReg {
			f, err := os.Open(p)
			if err != nil {
				return nil, err
			}
			_, err = io.Copy(tw, f)
			f.Close()
			if err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
