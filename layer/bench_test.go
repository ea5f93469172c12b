package layer

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkBuild10000 builds an index of 10,000 objects in 100 directories,
// each with a realistic front matter and a body of about 1.5 KB.
func BenchmarkBuild10000(b *testing.B) {
	root := b.TempDir()
	body := strings.Repeat("Rules are read by agents; keep them short, concrete and testable.\n", 24)
	kinds := []string{"rule", "prompt", "adr", "skill", "knowledge"}
	for d := range 100 {
		dir := filepath.Join(root, ".ai", "repo", kinds[d%len(kinds)]+"s", fmt.Sprintf("area%02d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for i := range 100 {
			n := d*100 + i
			content := fmt.Sprintf(`---
id: area%02d.item%04d
kind: %s
version: %d
title: Item %d of area %d
description: A generated object used to measure how fast the index builds.
status: active
tags: [area%02d, generated, bench]
depends_on: [area%02d.item%04d]
---
# Item %d
%s`, d, n, kinds[d%len(kinds)], 1+n%3, n, d, d, d, max(n-1, 0), n, body)
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("item%04d.md", n)), []byte(content), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		ix, err := Build(root, 1)
		if err != nil {
			b.Fatal(err)
		}
		if len(ix.Objects) != 10000 || ix.State() != "ok" {
			b.Fatalf("%d objects, state %s: %v", len(ix.Objects), ix.State(), ix.Diagnostics)
		}
	}
}

// BenchmarkParseObject parses one typical object (no file system).
func BenchmarkParseObject(b *testing.B) {
	data := []byte(`---
id: area01.item0101
kind: rule
version: 2
title: Item 101 of area 1
description: A generated object used to measure how fast the index builds.
status: active
tags: [area01, generated, bench]
depends_on: [area01.item0100]
---
# Item 101
` + strings.Repeat("Rules are read by agents; keep them short, concrete and testable.\n", 24))
	b.ReportAllocs()
	for b.Loop() {
		if r := parseObject(".ai/repo/x.md", data); !r.ok {
			b.Fatal(r.diags)
		}
	}
}

// BenchmarkSearch searches indexes of 1,000 and 10,000 generated objects
// (about 900 bytes of random words each, as B7 writes them) for two words.
func BenchmarkSearch(b *testing.B) {
	words := strings.Fields("agent board checkout commit context error lease layer manifest peer probe prompt release review rule schema")
	for i := range 200 {
		words = append(words, fmt.Sprintf("w%03d", i))
	}
	for _, n := range []int{1000, 10000} {
		root := b.TempDir()
		rng := rand.New(rand.NewPCG(uint64(n), 7))
		some := func(k int) string {
			w := make([]string, k)
			for i := range w {
				w[i] = words[rng.IntN(len(words))]
			}
			return strings.Join(w, " ")
		}
		for i := range n {
			dir := filepath.Join(root, ".ai", "repo", fmt.Sprintf("d%03d", i/100))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				b.Fatal(err)
			}
			content := fmt.Sprintf("---\nid: bench.o%05d\nkind: rule\ntitle: %s\ndescription: %s\ntags: [%s]\n---\n\n%s.\n\n%s.\n",
				i, some(4), some(10), some(1), some(60), some(60))
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("o%05d.md", i)), []byte(content), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		ix, err := Build(root, 1)
		if err != nil || len(ix.Objects) != n {
			b.Fatalf("%d objects: %v", len(ix.Objects), err)
		}
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			for b.Loop() {
				ix.Search(some(2), "", 10)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/object")
		})
	}
}

// BenchmarkRenderBraces renders a body of 1 MiB that is all "{{" and one
// placeholder at its end: each "{{" is read once, not once for each "{{"
// before it.
func BenchmarkRenderBraces(b *testing.B) {
	o := Object{Body: strings.Repeat("{{", 1<<19) + "{{topic}}", Arguments: []Argument{{Name: "topic"}}}
	for b.Loop() {
		if _, err := o.Render(map[string]string{"topic": "x"}); err != nil {
			b.Fatal(err)
		}
	}
}
