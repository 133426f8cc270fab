package eval

import "path/filepath"

// The demo: the repository's own vault (root/vault) and its labelled
// questions (root/eval/queries.json), named "demo".
func init() {
	registerKind(DatasetKind{
		Name:     "demo",
		Describe: `"demo" (the demo vault and eval/queries.json)`,
		Claims:   func(spec string, _ OpenOptions) bool { return spec == "demo" },
		Open: func(_ string, o OpenOptions) (*Dataset, string, error) {
			ds, err := LoadDemo(o.Root)
			return ds, "", err
		},
	})
}

// LoadDemo reads the demo vault's queries (root/eval/queries.json) over
// root/vault.
func LoadDemo(root string) (*Dataset, error) {
	return loadQueries("demo", filepath.Join(root, "eval", "queries.json"), filepath.Join(root, "vault"))
}
