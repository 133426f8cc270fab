package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vault-rag/vault-rag/index"
)

// OverviewResult is vault_overview's answer: what a caller needs to know of
// the vault before it searches, in a size bounded by the facets' limit.
type OverviewResult struct {
	Notes    int            `json:"notes"`
	Chunks   int            `json:"chunks"`
	Language LanguageInfo   `json:"language"`
	Dates    Dates          `json:"dates"`
	Facets   OverviewFacets `json:"facets"`
	Limit    int            `json:"limit"` // values per facet, and folders with titles
	// Titles are the folders with the titles of their notes, when asked
	// for (the titles parameter): in path order, at most Limit of them,
	// TitlesMore being the folders left out.
	Titles     []FolderTitles `json:"titles,omitempty"`
	TitlesMore int            `json:"titles_more_folders,omitempty"`
	// Advice says plainly when the filters have little to work with: a
	// vault without types, projects or statuses whose notes mostly sit at
	// the top level, and what helps instead.
	Advice string `json:"advice,omitempty"`
	// WaitedMS is how long the call waited for the vault's first index to
	// be built (Options.FirstIndexWait); absent when the index was there.
	WaitedMS int64 `json:"waited_for_first_index_ms,omitempty"`
}

// OverviewFacets are the facets asked for (all of them by default), in the
// order the filters are listed.
type OverviewFacets struct {
	Type    *Facet `json:"type,omitempty"`
	Project *Facet `json:"project,omitempty"`
	Status  *Facet `json:"status,omitempty"`
	Topics  *Facet `json:"topics,omitempty"`
	Folders *Facet `json:"folders,omitempty"`
}

func overviewDef() mcp.Tool {
	return mcp.NewTool(ToolOverview,
		mcp.WithDescription("What the vault holds: note counts, language, date span, and the values the filters take (types, projects, statuses, topics, top-level folders) with their note counts; "+
			"with titles, each folder's note titles."),
		mcp.WithArray("facets", mcp.WithStringEnumItems(index.FacetNames), mcp.Description("Default all.")),
		mcp.WithInteger("limit", mcp.Min(1), mcp.Max(MaxOverviewLimit), mcp.Description(fmt.Sprintf("Values per facet (default %d).", DefaultOverviewLimit))),
		mcp.WithInteger("titles", mcp.Min(0), mcp.Max(MaxOverviewTitles), mcp.Description("Titles per folder (default 0).")),
		mcp.WithSchemaAdditionalProperties(false),
		readOnly("Overview of the vault"),
	)
}

func (s *Server) overview(ctx context.Context, a args) (OverviewResult, error) {
	names, err := a.strList("facets")
	if err != nil {
		return OverviewResult{}, err
	}
	limit, err := a.integer("limit", 1, MaxOverviewLimit, DefaultOverviewLimit)
	if err != nil {
		return OverviewResult{}, err
	}
	perFolder, err := a.integer("titles", 0, MaxOverviewTitles, 0)
	if err != nil {
		return OverviewResult{}, err
	}
	h, release, waited, err := s.acquireFirst(ctx)
	if err != nil {
		return OverviewResult{}, err
	}
	defer release()
	st, err := h.db.Stats(ctx)
	if err != nil {
		return OverviewResult{}, err
	}
	facets, err := h.db.Facets(ctx, names, limit)
	var unknown *index.UnknownFacetError
	if errors.As(err, &unknown) {
		return OverviewResult{}, fmt.Errorf("parameter %q: %w", "facets", err)
	}
	if err != nil {
		return OverviewResult{}, err
	}
	dates, err := h.db.Dates(ctx)
	if err != nil {
		return OverviewResult{}, err
	}
	out := OverviewResult{Notes: st.Notes, Chunks: st.Chunks, Language: languageInfo(h.db, s.langs), Dates: datesOf(dates), Limit: limit, WaitedMS: waited.Milliseconds()}
	if perFolder > 0 {
		titles, more, err := h.db.Titles(ctx, perFolder, limit)
		if err != nil {
			return OverviewResult{}, err
		}
		out.Titles, out.TitlesMore = folderTitles(titles), more
	}
	for name, f := range facets {
		switch name {
		case index.FacetType:
			out.Facets.Type = facetOf(f)
		case index.FacetProject:
			out.Facets.Project = facetOf(f)
		case index.FacetStatus:
			out.Facets.Status = facetOf(f)
		case index.FacetTopics:
			out.Facets.Topics = facetOf(f)
		case index.FacetFolders:
			out.Facets.Folders = facetOf(f)
		}
	}
	out.Advice = flatAdvice(out, facets)
	return out, nil
}

// flatAdvice is the overview's advice for a vault whose metadata gives the
// filters little to work with: no type, project or status on any note, and
// most notes at the top level or in one folder. "" for a vault that has
// facets, or when the facets were not asked for.
func flatAdvice(o OverviewResult, facets map[string]index.Facet) string {
	if o.Notes == 0 {
		return ""
	}
	for _, name := range []string{index.FacetType, index.FacetProject, index.FacetStatus} {
		f, ok := facets[name]
		if !ok || len(f.Values) > 0 {
			return ""
		}
	}
	folders, ok := facets[index.FacetFolders]
	if !ok {
		return ""
	}
	largest, where := folders.Without, "at the top level"
	if len(folders.Values) > 0 && folders.Values[0].Notes > largest {
		largest, where = folders.Values[0].Notes, "in "+folders.Values[0].Value
	}
	if 2*largest < o.Notes {
		return ""
	}
	topics := ""
	if t, ok := facets[index.FacetTopics]; ok && len(t.Values) > 0 {
		topics = fmt.Sprintf(", and %d of %d notes have topics", o.Notes-t.Without, o.Notes)
	} else if ok {
		topics = ", and no note has topics"
	}
	return fmt.Sprintf("No note has a type, project or status, %d of %d notes sit %s%s: "+
		"the filters narrow little here. Search with vault_search directly; use vault_grep for exact words and for which notes mention something, "+
		"and this tool's titles parameter for the notes' own names.", largest, o.Notes, where, topics)
}
