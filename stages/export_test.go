package stages

// Package-internal helpers that the stages_test tests exercise directly.
var (
	SumByNote  = sumByNote
	Normalize  = normalize
	FuseConvex = fuseConvex
	CodeLike   = codeLike
)
