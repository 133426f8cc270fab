package server

import (
	"context"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"time"

	"github.com/vault-rag/vault-rag/internal/vault"
)

// stamp is what the watcher compares: a file's size and modification time.
type stamp struct {
	size int64
	mod  int64
}

// snapshot stats every file the scanner could index (vault.FolderReason and
// vault.FileReason, the scanner's own rules): a polling
// watcher needs no dependency and behaves the same on every platform and file
// system (network drives and sync folders included, where change
// notifications are unreliable).
func snapshot(root string) (map[string]stamp, error) {
	out := map[string]stamp{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil // unreadable entries are the scanner's to report
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && vault.FolderReason(rel) != "" {
				return fs.SkipDir
			}
			return nil
		}
		if vault.FileReason(rel) != "" {
			return nil // not a note by its name: a change to it is no reason to reindex
		}
		fi, err := os.Stat(p) // follows symlinks: an edit to a linked note counts
		if err != nil {
			out[rel] = stamp{size: -1}
			return nil
		}
		out[rel] = stamp{size: fi.Size(), mod: fi.ModTime().UnixNano()}
		return nil
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
		cur, err := snapshot(s.realVault)
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
