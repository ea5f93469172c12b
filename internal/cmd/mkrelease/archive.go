package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// member is one file of an archive or package.
type member struct {
	name string
	mode fs.FileMode
	data []byte
}

// writeArchive writes members, in order, at the archive's root (no wrapping
// directory: Homebrew, Scoop and a user's `tar -xzf` all take the binary
// from there), as a zip or a gzipped tar, every member dated mtime, and
// returns its SHA-256.
func writeArchive(path string, asZip bool, members []member, mtime time.Time) (string, error) {
	var buf bytes.Buffer
	var err error
	if asZip {
		err = writeZip(&buf, members, mtime)
	} else {
		err = writeTarGz(&buf, members, mtime)
	}
	if err != nil {
		return "", fmt.Errorf("archive %s: %w", path, err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	sum := sha256.Sum256(buf.Bytes())
	return hex.EncodeToString(sum[:]), nil
}

// writeTarGz writes a gzipped tar, each member owned by root, with no gzip
// name or time: the same members make the same bytes.
func writeTarGz(buf *bytes.Buffer, members []member, mtime time.Time) error {
	gz := gzip.NewWriter(buf)
	tw := tar.NewWriter(gz)
	for _, m := range members {
		h := &tar.Header{
			Typeflag: tar.TypeReg,
			Name:     m.name,
			Mode:     int64(m.mode.Perm()),
			Size:     int64(len(m.data)),
			ModTime:  mtime,
			Format:   tar.FormatPAX,
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(m.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func writeZip(buf *bytes.Buffer, members []member, mtime time.Time) error {
	zw := zip.NewWriter(buf)
	for _, m := range members {
		h := &zip.FileHeader{Name: m.name, Method: zip.Deflate, Modified: mtime}
		h.SetMode(m.mode.Perm())
		w, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		if _, err := w.Write(m.data); err != nil {
			return err
		}
	}
	return zw.Close()
}
