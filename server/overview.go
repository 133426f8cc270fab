package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/vault-rag/vault-rag/index"
)

// OverviewResult is vault_overview's answer: what a caller needs to know of
// the vault before it searches, in a size bounded by the facets' limit.
type OverviewResult struct {
	Notes    int            `json:"notes"`
	Chunks   int            `json:"chunks"`
	Language LanguageInfo   `json:"language"`
	Dates    index.Dates    `json:"dates"`
	Facets   OverviewFacets `json:"facets"`
	Limit    int            `json:"limit"` // values per facet, and folders with titles
	// Titles are the folders with the titles of their notes, when asked
	// for (the titles parameter): in path order, at most Limit of them,
	// TitlesMore being the folders left out.
	Titles     []index.FolderTitles `json:"titles,omitempty"`
	TitlesMore int                  `json:"titles_more_folders,omitempty"`
	// WaitedMS is how long the call waited for the vault's first index to
	// be built (Options.FirstIndexWait); absent when the index was there.
	WaitedMS int64 `json:"waited_for_first_index_ms,omitempty"`
}

// OverviewFacets are the facets asked for (all of them by default), in the
// order the filters are listed.
type OverviewFacets struct {
	Type    *index.Facet `json:"type,omitempty"`
	Project *index.Facet `json:"project,omitempty"`
	Status  *index.Facet `json:"status,omitempty"`
	Topics  *index.Facet `json:"topics,omitempty"`
	Folders *index.Facet `json:"folders,omitempty"`
}

func (s *Server) overview(ctx context.Context, a args) (any, error) {
	names, err := a.strList("facets")
	if err != nil {
		return nil, err
	}
	limit, err := a.integer("limit", 1, MaxOverviewLimit, DefaultOverviewLimit)
	if err != nil {
		return nil, err
	}
	perFolder, err := a.integer("titles", 0, MaxOverviewTitles, 0)
	if err != nil {
		return nil, err
	}
	h, release, waited, err := s.acquireFirst(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	st, err := h.db.Stats(ctx)
	if err != nil {
		return nil, err
	}
	facets, err := h.db.Facets(ctx, names, limit)
	var unknown *index.UnknownFacetError
	if errors.As(err, &unknown) {
		return nil, fmt.Errorf("parameter %q: %w", "facets", err)
	}
	if err != nil {
		return nil, err
	}
	dates, err := h.db.Dates(ctx)
	if err != nil {
		return nil, err
	}
	out := OverviewResult{Notes: st.Notes, Chunks: st.Chunks, Language: languageInfo(h.db, s.langs), Dates: dates, Limit: limit, WaitedMS: waited.Milliseconds()}
	if perFolder > 0 {
		if out.Titles, out.TitlesMore, err = h.db.Titles(ctx, perFolder, limit); err != nil {
			return nil, err
		}
	}
	for name, f := range facets {
		switch name {
		case index.FacetType:
			out.Facets.Type = &f
		case index.FacetProject:
			out.Facets.Project = &f
		case index.FacetStatus:
			out.Facets.Status = &f
		case index.FacetTopics:
			out.Facets.Topics = &f
		case index.FacetFolders:
			out.Facets.Folders = &f
		}
	}
	return out, nil
}
