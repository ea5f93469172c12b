package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// layerSizes are the generated object counts of B7.
var layerSizes = []int{100, 1000, 10000}

// vocabulary is what generated objects and queries are made of; the w-words
// widen it so that terms are selective.
var vocabulary = func() []string {
	words := strings.Fields(`agent board checkout commit context error lease layer manifest peer probe
		prompt release review rule schema search server session signal stream test token trace wrap
		cache index deploy logging metric network retry timeout quorum replica shard backup audit`)
	for i := range 200 {
		words = append(words, fmt.Sprintf("w%03d", i))
	}
	return words
}()

var kinds = []string{"rule", "adr", "prompt", "note"}

// writeObjects adds n generated objects under .ai/repo/bench/ of a
// checkout, a hundred to a directory: YAML front matter and a Markdown body
// of about 120 words (~900 bytes), deterministic.
func writeObjects(dir string, n int) error {
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	word := func() string { return vocabulary[rng.IntN(len(vocabulary))] }
	words := func(k int) string {
		w := make([]string, k)
		for i := range w {
			w[i] = word()
		}
		return strings.Join(w, " ")
	}
	for i := range n {
		sub := filepath.Join(dir, ".ai", "repo", "bench", fmt.Sprintf("d%03d", i/100))
		if i%100 == 0 {
			if err := os.MkdirAll(sub, 0o755); err != nil {
				return err
			}
		}
		var sb strings.Builder
		fmt.Fprintf(&sb, "---\nid: bench.o%05d\nversion: 1\nkind: %s\ntitle: %s\ndescription: %s\nstatus: active\ntags: [%s, %s]\n---\n\n",
			i, kinds[i%len(kinds)], words(4), words(10), word(), word())
		fmt.Fprintf(&sb, "# %s\n\n%s.\n\n%s.\n\n- %s\n- %s\n", words(3), words(50), words(50), words(8), words(8))
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("o%05d.md", i)), []byte(sb.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// layerRun is one size's measures.
type layerRun struct {
	took, built, ready, rebuilt, search *series
}

// B7: index load (the "layer built" line's took field) and
// majordomus_search round trips at each size, through --standalone.
func (b *bench) b7() ([]Figure, error) {
	loads := min(b.runs, 5)
	var out []layerRun
	for _, n := range layerSizes {
		dir, err := b.checkout()
		if err != nil {
			return nil, err
		}
		if err := writeObjects(dir, n); err != nil {
			return nil, fmt.Errorf("B7 writing %d objects: %w", n, err)
		}
		r := layerRun{newSeries("ms"), newSeries("ms"), newSeries("ms"), newSeries("ms"), newSeries("ms")}
		for i := range 1 + loads {
			if err := b.layerOnce(dir, n, r, i == 0, i == loads); err != nil {
				return nil, fmt.Errorf("B7 %d objects: %w", n, err)
			}
		}
		out = append(out, r)
	}
	var figs []Figure
	for i, n := range layerSizes {
		load := Figure{ID: "B7", Measure: fmt.Sprintf("index load, %s objects (took)", thousands(n)), Stat: "p50",
			Value: out[i].took.summary(), Goal: "linear or better", Result: "info"}
		search := Figure{ID: "B7", Measure: fmt.Sprintf("majordomus_search round trip, %s objects", thousands(n)), Stat: "p50",
			Value: out[i].search.summary(), Goal: "linear or better", Result: "info"}
		if i > 0 { // linear: each 10× step costs at most 11× (10% for noise)
			prev, step := fmt.Sprintf("%s objects", thousands(layerSizes[i-1])), n/layerSizes[i-1]
			load = compare("B7", load.Measure, "p50", out[i].took, prev, out[i-1].took, 11, load.Goal)
			search = compare("B7", search.Measure, "p50", out[i].search, prev, out[i-1].search, 11, search.Goal)
			load.Note = fmt.Sprintf("%d× the objects; linear means a ratio ≤ %d× (met up to %d×, for noise)", step, step, 11*step/10)
			search.Note = load.Note
		}
		load.Extra = map[string]any{"spawn_to_layer_built": out[i].built.summary(), "spawn_to_initialize": out[i].ready.summary(),
			"spawn_to_watcher_rebuild_done": out[i].rebuilt.summary()}
		if n == 10000 {
			load.Goal = "linear or better; ≤ 1 s (every run)"
			if load.Value.Max > 1000 {
				load.Result = "missed"
			}
		}
		figs = append(figs, load, search)
	}
	return figs, nil
}

// layerOnce spawns a --standalone client on a checkout of n objects and
// records its load; the first spawn is a warm-up (the page cache), and the
// last one also runs the search loop.
func (b *bench) layerOnce(dir string, n int, r layerRun, warmup, searches bool) error {
	start := time.Now()
	c, err := b.spawn(dir, "--standalone", "--log-level", "debug")
	if err != nil {
		return err
	}
	defer c.close()
	ctx, cancel := context.WithTimeout(context.Background(), 4*stepTimeout)
	defer cancel()
	id, err := c.proc.Send("initialize", initParams("bench-layer"))
	if err != nil {
		return err
	}
	line, err := c.waitLog(ctx, "layer built")
	if err != nil {
		return err
	}
	built := time.Since(start)
	took, err := logField[float64](line, "took")
	if err != nil {
		return err
	}
	if !strings.Contains(line, fmt.Sprintf(`"objects":%d`, n+6)) {
		return fmt.Errorf("the layer did not index the %d objects written (and the example's 6): %s", n, line)
	}
	if _, err := c.await(ctx, "initialize", id); err != nil {
		return err
	}
	ready := time.Since(start)
	if err := c.notify("notifications/initialized"); err != nil {
		return err
	}
	if !warmup {
		r.took.add(took * 1000)
		r.built.addDur(built)
		r.ready.addDur(ready)
	}
	if !searches {
		return nil
	}
	// The layer's watcher starts by catching up with what changed since the
	// build, with a rebuild unless it proves nothing did ("layer unchanged"
	// either way): searched before it ends, the loop would compete with it
	// for the CPU.
	wctx, wcancel := context.WithTimeout(ctx, 20*time.Second)
	defer wcancel()
	if _, err := c.waitLog(wctx, "layer unchanged"); err == nil {
		r.rebuilt.addDur(time.Since(start))
	}
	calls := max(b.calls/4, 20)
	for i := range calls/10 + calls {
		q := vocabulary[(i*7)%len(vocabulary)] + " " + vocabulary[(i*13+5)%len(vocabulary)]
		t := time.Now()
		if err := callTool(ctx, c, "majordomus_search", map[string]any{"query": q}, nil); err != nil {
			return err
		}
		if i >= calls/10 {
			r.search.addDur(time.Since(t))
		}
	}
	return nil
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
