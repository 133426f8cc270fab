package server

import (
	"context"
	"maps"
	"os"
	"time"

	"github.com/vault-rag/vault-rag/internal/vault"
)

// stamp is what the watcher compares: a file's size and modification time.
type stamp struct {
	size int64
	mod  int64
}

// snapshot stats every file a build would consider as a note: vault.Walk,
// the walk the index's own listing makes, so the watcher and the builds agree
// on which files count, the vault's exclusions (Obsidian's excluded files and
// templates folders, opts.Exclude) included. A change elsewhere is no reason
// to reindex. A polling watcher needs no dependency and behaves the same on
// every platform and file system (network drives and sync folders included,
// where change notifications are unreliable).
func snapshot(ctx context.Context, root string, opts vault.ScanOptions) (map[string]stamp, error) {
	out := map[string]stamp{}
	err := vault.Walk(ctx, root, opts, func(rel, p string) {
		fi, err := os.Stat(p) // follows symlinks: an edit to a linked note counts
		if err != nil {
			out[rel] = stamp{size: -1}
			return
		}
		out[rel] = stamp{size: fi.Size(), mod: fi.ModTime().UnixNano()}
	})
	return out, err
}

// watch polls the vault every PollInterval, comparing each look with the
// last (prev is the first), and once the tree has stopped changing for
// Debounce runs an incremental reindex. It reindexes only when something
// changed.
func (s *Server) watch(ctx context.Context, prev map[string]stamp) {
	t := time.NewTicker(s.opts.PollInterval)
	defer t.Stop()
	pending := false
	var changedAt time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cur, err := snapshot(ctx, s.realVault, s.opts.Scan)
		if err != nil {
			s.log.Warn("watch: cannot read the vault", "err", err)
			continue
		}
		if !maps.Equal(prev, cur) {
			prev, pending, changedAt = cur, true, time.Now()
			continue
		}
		if !pending || time.Since(changedAt) < s.opts.Debounce {
			continue
		}
		pending = false
		r, err := s.reindex.Run(ctx)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Error("watch: reindex failed", "err", err)
			}
			continue
		}
		s.log.Info("watch: reindexed", "run", r.seq, "added", r.rep.Added, "changed", r.rep.Changed, "removed", r.rep.Removed, "took", r.rep.Duration.Round(time.Millisecond))
	}
}
