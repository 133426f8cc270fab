package bench

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vault-rag/vault-rag/internal/vault"
	"github.com/vault-rag/vault-rag/server"
)

// listing measures what a conversation pays before its first question: the
// server's initialize instructions and its tools/list answer, in bytes, for
// the default tool set and for every tool, on an English vault (the gate,
// server.TestListingBudget, holds the default set under
// server.ListingBudget for every wording of the notes' language).
func (r *runner) listing(ctx context.Context) error {
	ls := vault.Languages{{Name: "English", Script: "Latin", Notes: 1}}
	for _, set := range []struct {
		name  string
		tools []string
	}{{"default tools", nil}, {"every tool", server.AllTools()}} {
		raw, err := json.Marshal(mcp.ListToolsResult{Tools: server.Tools(ls, set.tools)})
		if err != nil {
			return err
		}
		ins := len(server.Instructions(ls, set.tools))
		note := fmt.Sprintf("instructions %d B + tools/list %d B", ins, len(raw))
		if set.tools == nil {
			note += fmt.Sprintf("; budget %d B", server.ListingBudget)
		}
		r.res.add("listing", "listing, "+set.name, "demo", float64(ins+len(raw)), "B", note)
	}
	return nil
}
