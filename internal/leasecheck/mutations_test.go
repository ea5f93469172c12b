package leasecheck

import (
	"context"
	"errors"
	"io/fs"

	"github.com/majordomus-mcp/majordomus-mcp/registry"
)

// A mutation replaces one operation of the protocol by a defective copy,
// here in test code: the product's paths have no switch for it.
type mutation struct {
	name   string
	op     opName
	faults budget // the faults its search injects (fewer: faster)
	settle bool   // whether its search checks L1 and L2 too
	run    func(p *proc, o op) error
}

// mutations are the defects a check of the protocol must catch.
var mutations = []mutation{
	{"taking over without the lock", opTakeOver, budget{}, false, func(p *proc, o op) error {
		fsys := procFS{p}
		if cur := fsys.Read(leasePath); cur.Found == registry.Missing || !cur.Same(o.obs.Snapshot) {
			return nil
		}
		return removeLease(fsys)
	}},
	{"taking over without re-reading under the lock", opTakeOver, budget{lease: 1}, false, func(p *proc, _ op) error {
		return underLock(procFS{p}, func() error { return removeLease(procFS{p}) })
	}},
	{"releasing without checking the instance", opRelease, budget{signal: 1}, false, func(p *proc, _ op) error {
		defer p.lf.Forget()
		return underLock(procFS{p}, func() error { return removeLease(procFS{p}) })
	}},
	{"replacing the state without holding the lease", opWriteState, budget{lease: 1}, false, func(p *proc, _ op) error {
		fsys := procFS{p}
		p.journal = &registry.Journal{}
		tmp, err := fsys.WriteTemp(statePath, []byte("state\n"))
		if err != nil {
			return err
		}
		return underLock(fsys, func() error { return fsys.Rename(tmp, statePath) })
	}},
	{"publishing without checking the instance", opPublish, budget{}, false, func(p *proc, _ op) error {
		fsys := procFS{p}
		held, _ := p.lf.Held()
		held.URL = &p.url
		raw, err := registry.Encode(held)
		if err != nil {
			return err
		}
		tmp, err := fsys.WriteTemp(leasePath, raw)
		if err != nil {
			return err
		}
		return underLock(fsys, func() error { return fsys.Rename(tmp, leasePath) })
	}},
	{"serving on without watching the lease", opCheck, budget{lease: 1}, true, func(p *proc, _ op) error {
		p.obs.Snapshot = registry.Snapshot{Found: registry.Regular, Raw: []byte(p.seen[1:])}
		return nil
	}},
}

func underLock(fsys procFS, critical func() error) error {
	unlock, err := fsys.Lock(context.Background(), leasePath, 0)
	if err != nil {
		return err
	}
	defer unlock()
	return critical()
}

func removeLease(fsys procFS) error {
	if err := fsys.Remove(leasePath); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
