package vault

import (
	"cmp"
	"slices"
)

// Problem is something wrong with a file: why it was skipped, or what was
// wrong with a note that was indexed anyway. Reason says it in one line, the
// file's own part included; Kind is worded the same for every file with the
// problem ("frontmatter date is not a day of the calendar; using the file
// time"), so a report can count the files that share it; Detail is the file's
// own part (the value read, the error), or "".
type Problem struct {
	Reason string `json:"reason"`
	Kind   string `json:"kind"`
	Detail string `json:"detail,omitempty"`
}

// NewProblem is a problem no two files word differently: its reason is its
// kind.
func NewProblem(kind string) Problem { return Problem{Reason: kind, Kind: kind} }

// detailed is a problem whose reason is its kind, ": " and its detail.
func detailed(kind, detail string) Problem {
	return Problem{Reason: kind + ": " + detail, Kind: kind, Detail: detail}
}

// String is the reason.
func (p Problem) String() string { return p.Reason }

// Skipped is a file or folder and a problem with it: why Scan passed over it,
// or, in a build report's warnings, what was wrong with a note indexed anyway.
type Skipped struct {
	Path string `json:"path"`
	Problem
}

// ProblemGroup is the files that share one kind of problem, in the order
// they were given.
type ProblemGroup struct {
	Kind  string
	Files []Skipped
}

// GroupProblems gathers files by the kind of their problem (a problem
// without a kind is its own reason's): the largest group first, groups of one
// size in the order of their first file.
func GroupProblems(files []Skipped) []ProblemGroup {
	var groups []ProblemGroup
	at := map[string]int{}
	for _, f := range files {
		kind := cmp.Or(f.Kind, f.Reason)
		i, ok := at[kind]
		if !ok {
			i = len(groups)
			at[kind] = i
			groups = append(groups, ProblemGroup{Kind: kind})
		}
		groups[i].Files = append(groups[i].Files, f)
	}
	slices.SortStableFunc(groups, func(a, b ProblemGroup) int { return len(b.Files) - len(a.Files) })
	return groups
}
