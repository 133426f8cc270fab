package clientconfig

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// mergeServer keeps a byte-order mark and drops a later duplicate of the
// name, which a client (taking the last) would otherwise use instead.
func TestMergeEdges(t *testing.T) {
	entry := json.RawMessage(`{"command":"/bin/new"}`)
	doc := append([]byte{0xEF, 0xBB, 0xBF}, `{"mcpServers": {"vault-rag": {"command": "a"}, "x": {}, "vault-rag": {"command": "b"}}}`...)
	out, replaced, err := mergeServer(doc, "mcpServers", "vault-rag", entry)
	if err != nil || !replaced {
		t.Fatalf("replaced %v, err %v", replaced, err)
	}
	if !bytes.HasPrefix(out, []byte{0xEF, 0xBB, 0xBF}) {
		t.Error("the byte-order mark was lost")
	}
	if n := bytes.Count(out, []byte(`"vault-rag"`)); n != 1 {
		t.Errorf("want one vault-rag entry, got %d:\n%s", n, out)
	}
	// With one entry of each, in order means each found after the one before.
	name, cmd, x := strings.Index(string(out), `"vault-rag"`), strings.Index(string(out), `"/bin/new"`), strings.Index(string(out), `"x"`)
	if name < 0 || cmd < name || x < cmd {
		t.Errorf("the entry moved:\n%s", out)
	}
}
