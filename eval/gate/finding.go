package gate

import "encoding/json"

// A Finding is one difference the gate found between a stored result and a
// new one: an entry of BaselineDiff (DiffBaseline) or RankedDiff
// (CompareRanked). Each kind is a type of its own holding the figures it is
// about; eval/report words them (report.FindingLine).
type Finding interface{ finding() }

// The findings of DiffBaseline.
type (
	// Unencodable: a baseline cannot be written as JSON (a figure that is
	// not a number), the committed one or, with Run, this run's.
	Unencodable struct {
		Run bool
		Err error
	}
	// DatasetChanged: the dataset's queries, notes or chunks changed in
	// number.
	DatasetChanged struct{ Old, Cur DatasetSize }
	// EmbedderChanged: the run was indexed with another model than the
	// baseline's.
	EmbedderChanged struct{ Old, Cur string }
	// StampChanged: the index stamp changed (the vault, the embedder or the
	// schema).
	StampChanged struct{ Old, Cur string }
	// ConfigAdded: a configuration ran that the baseline does not hold.
	ConfigAdded struct{ Config, Status string }
	// ConfigNotRun: a configuration of the baseline did not run.
	ConfigNotRun struct{ Config string }
	// StatusChanged: a configuration's status changed (ran, or skipped and
	// why).
	StatusChanged struct{ Config, Old, Cur string }
	// QueryMoved: a query's relevant ranks, its nDCG@10 or its answer moved.
	// It is a near-tie flip (Flip) when notes were near-tied in both runs
	// and they explain every move of a relevant note.
	QueryMoved struct {
		Config, Query      string
		OldRanks, CurRanks []int
		OldNDCG, CurNDCG   FourDecimals
		// AnswerMoved says the answer@1 or the answer's bytes moved, from
		// OldAnswer and OldBytes to CurAnswer and CurBytes.
		AnswerMoved          bool
		OldAnswer, CurAnswer int
		OldBytes, CurBytes   int
		// NearTied are the notes near-tied in both runs (NearTiedInBoth).
		NearTied []string
		// Unexplained is the first relevant note whose move NearTied cannot
		// explain; nil when they explain every move, or when there are
		// none.
		Unexplained *NoteMoved
	}
	// MeasureMoved: one mean measure of a configuration moved, over all its
	// queries or (Kind) over those of one kind.
	MeasureMoved struct {
		Config, Kind, Measure string
		Old, Cur              json.Number // as written in a baseline
		// ByFlips: every query of the configuration that moved is a near-tie
		// flip, so they explain this move too.
		ByFlips bool
	}
	// MeasuresUnreadable: a configuration's means, over all its queries or
	// (Kind) over those of one kind, hold a figure that is not a number, and
	// cannot be compared.
	MeasuresUnreadable struct {
		Config, Kind string
		Old, Cur     Metrics
		Err          error
		ByFlips      bool // as MeasureMoved's
	}
	// FormatOnly: nothing above moved, yet the baseline file differs from
	// what this run would write (formatting or order).
	FormatOnly struct{}
)

// DatasetSize is a dataset's size as a baseline records it.
type DatasetSize struct{ Queries, Notes, Chunks int }

// NoteMoved is a relevant note whose move from rank From to To (0: outside
// the top 10) is further than NearTied near-tied notes can push it.
type NoteMoved struct {
	Path     string
	From, To int
	NearTied int
}

// Flip says whether near-ties seen in both runs explain the query's move.
func (q QueryMoved) Flip() bool { return len(q.NearTied) > 0 && q.Unexplained == nil }

// The findings of CompareRanked.
type (
	// OrderChanged: note Got stands where note Want was, and no near-tie
	// explains it.
	OrderChanged struct{ Got, Want string }
	// ScoreMoved: a note's score moved from Want to Got, by more than
	// Tolerance.
	ScoreMoved struct {
		Path                 string
		Want, Got, Tolerance float64
	}
	// LengthChanged: the lists differ in length.
	LengthChanged struct{ Want, Got int }
	// CutFlip: a note was pushed below the cut (or, Added, above it) by a
	// near-tied note, both lists cut at the same length.
	CutFlip struct {
		Path  string
		Added bool
	}
	// TiedMoved: a near-tied note moved from rank From to rank To; 0 is
	// outside the list.
	TiedMoved struct {
		Path     string
		From, To int
	}
)

func (Unencodable) finding()        {}
func (DatasetChanged) finding()     {}
func (EmbedderChanged) finding()    {}
func (StampChanged) finding()       {}
func (ConfigAdded) finding()        {}
func (ConfigNotRun) finding()       {}
func (StatusChanged) finding()      {}
func (QueryMoved) finding()         {}
func (MeasureMoved) finding()       {}
func (MeasuresUnreadable) finding() {}
func (FormatOnly) finding()         {}
func (OrderChanged) finding()       {}
func (ScoreMoved) finding()         {}
func (LengthChanged) finding()      {}
func (CutFlip) finding()            {}
func (TiedMoved) finding()          {}
