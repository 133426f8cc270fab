package index

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
)

// TestOpenChecksOnlyWithReason: Open runs SQLite's page check only when
// something says the file may be damaged, and says why it did.
func TestOpenChecksOnlyWithReason(t *testing.T) {
	ctx := context.Background()
	vault, dbPath := newFixture(t)
	build(t, newFake(), vault, dbPath, false)

	d := open(t, dbPath)
	if d.CheckReason() != "" {
		t.Errorf("a clean index was checked: %q", d.CheckReason())
	}
	if err := d.Check(ctx); err != nil {
		t.Errorf("Check of a sound index: %v", err)
	}

	// A writer died mid-transaction: its marker is still there.
	if err := setDirty(dbPath); err != nil {
		t.Fatal(err)
	}
	if d := open(t, dbPath); d.CheckReason() != "unclean shutdown marker" {
		t.Errorf("with the marker, CheckReason = %q", d.CheckReason())
	}
	// A completed incremental build removes it.
	build(t, newFake(), vault, dbPath, true)
	if _, err := os.Stat(dirtyMarker(dbPath)); err == nil {
		t.Error("the marker is left after a completed incremental build")
	}
	if d := open(t, dbPath); d.CheckReason() != "" {
		t.Errorf("after the incremental build, CheckReason = %q", d.CheckReason())
	}

	// A file longer than its header says.
	f, err := os.OpenFile(dbPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(make([]byte, 4096)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	d2, err := Open(ctx, dbPath)
	switch {
	case err != nil && !errors.Is(err, ErrCorrupt):
		t.Errorf("Open of a file longer than its header: %v, want ErrCorrupt or a checked open", err)
	case err == nil:
		if !strings.Contains(d2.CheckReason(), "header says") {
			t.Errorf("a file longer than its header was opened unchecked (%q)", d2.CheckReason())
		}
		d2.Close()
	}
}

// TestDamagedNoteJSON: a note's topics or warnings that are not the JSON list
// the build writes make reading the note fail as ErrCorrupt, not come back
// empty.
func TestDamagedNoteJSON(t *testing.T) {
	ctx := context.Background()
	vault, dbPath := newFixture(t)
	build(t, newFake(), vault, dbPath, false)
	if n, err := open(t, dbPath).NoteByPath(ctx, "alpha.md"); err != nil || len(n.Topics) != 2 {
		t.Fatalf("alpha.md before the damage: %+v, %v", n, err)
	}
	for _, col := range []string{"topics", "warnings"} {
		rw, err := openSQLite(dbPath, false)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rw.ExecContext(ctx, `UPDATE notes SET `+col+` = '[unclosed' WHERE path = 'alpha.md'`); err != nil {
			t.Fatal(err)
		}
		rw.Close()
		d := open(t, dbPath)
		if _, err := d.NoteByPath(ctx, "alpha.md"); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), col) {
			t.Errorf("damaged %s: %v, want ErrCorrupt naming it", col, err)
		}
		if _, err := d.NoteByPath(ctx, "beta.md"); err != nil {
			t.Errorf("an undamaged note: %v", err)
		}
		rw, _ = openSQLite(dbPath, false)
		if _, err := rw.ExecContext(ctx, `UPDATE notes SET `+col+` = '[]' WHERE path = 'alpha.md'`); err != nil {
			t.Fatal(err)
		}
		rw.Close()
	}
}
