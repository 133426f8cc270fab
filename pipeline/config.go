// Package pipeline builds retrieval pipelines from configuration files and runs
// them: a configuration lists stages, each decoded strictly into its struct.
package pipeline

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/vault-rag/vault-rag/stages"
)

// Config is a named pipeline.
type Config struct {
	Name        string
	Description string
	File        string // where it was read from
	Stages      []stages.Stage
}

// newStage maps a configuration key to a fresh stage struct: registering a
// stage is one line here (see the stages package doc). Nothing else names it.
var newStage = map[string]func() stages.Stage{
	"keyword":  func() stages.Stage { return &stages.Keyword{} },
	"vector":   func() stages.Stage { return &stages.Vector{} },
	"hyde":     func() stages.Stage { return &stages.Hyde{} },
	"rrf":      func() stages.Stage { return &stages.RRF{} },
	"rerank":   func() stages.Stage { return &stages.Rerank{} },
	"recency":  func() stages.Stage { return &stages.Recency{} },
	"convex":   func() stages.Stage { return &stages.Convex{} },
	"feedback": func() stages.Stage { return &stages.Feedback{} },
}

// StageNames lists the stages a configuration may use.
func StageNames() []string {
	var out []string
	for k := range newStage {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// LoadFile reads and decodes one configuration file.
func LoadFile(path string) (*Config, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read configuration: %w", err)
	}
	return Parse(path, raw)
}

// Parse decodes a configuration strictly: an unknown top-level key, stage or
// stage setting, a wrong type, or an invalid value is an error naming the file,
// the line and the key.
func Parse(file string, raw []byte) (*Config, error) {
	fail := func(line int, format string, args ...any) error {
		return fmt.Errorf("%s:%d: %s", file, line, fmt.Sprintf(format, args...))
	}
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("%s: %s", file, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return nil, fail(1, "a configuration is a mapping with name, description and stages")
	}
	doc := root.Content[0]
	cfg := &Config{File: file}
	var stageList *yaml.Node
	seen := map[string]bool{}
	for i := 0; i+1 < len(doc.Content); i += 2 {
		k, v := doc.Content[i], doc.Content[i+1]
		if seen[k.Value] {
			return nil, fail(k.Line, "duplicate key %q", k.Value)
		}
		seen[k.Value] = true
		switch k.Value {
		case "name":
			if v.Kind != yaml.ScalarNode {
				return nil, fail(v.Line, "name must be a string")
			}
			cfg.Name = v.Value
		case "description":
			if v.Kind != yaml.ScalarNode {
				return nil, fail(v.Line, "description must be a string")
			}
			cfg.Description = v.Value
		case "stages":
			stageList = v
		default:
			return nil, fail(k.Line, "unknown key %q (want name, description, stages)", k.Value)
		}
	}
	if cfg.Name == "" {
		cfg.Name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	}
	if stageList == nil || stageList.Kind != yaml.SequenceNode || len(stageList.Content) == 0 {
		line := doc.Line
		if stageList != nil {
			line = stageList.Line
		}
		return nil, fail(line, "stages must be a non-empty list")
	}
	for _, item := range stageList.Content {
		if item.Kind != yaml.MappingNode || len(item.Content) != 2 {
			return nil, fail(item.Line, "each stage is a mapping of one stage name to its settings, e.g. `- keyword: {limit: 40}`")
		}
		k, v := item.Content[0], item.Content[1]
		mk, ok := newStage[k.Value]
		if !ok {
			return nil, fail(k.Line, "unknown stage %q (want one of %s)", k.Value, strings.Join(StageNames(), ", "))
		}
		st := mk()
		if err := decodeStrict(v, st); err != nil {
			return nil, fail(err.line, "stage %s: %s", k.Value, err.msg)
		}
		if err := st.Validate(); err != nil {
			return nil, fail(settingLine(v, err), "stage %s: %v", k.Value, err)
		}
		cfg.Stages = append(cfg.Stages, st)
	}
	if err := checkOrder(cfg.Stages); err != nil {
		return nil, fail(stageList.Line, "%v", err)
	}
	return cfg, nil
}

type lineError struct {
	line int
	msg  string
}

// decodeStrict decodes a stage's settings, refusing keys the struct lacks.
func decodeStrict(v *yaml.Node, dst stages.Stage) *lineError {
	if v.Kind == yaml.ScalarNode && (v.Tag == "!!null" || v.Value == "") {
		return nil // `- keyword:` with no settings
	}
	if v.Kind != yaml.MappingNode {
		return &lineError{v.Line, "settings must be a mapping"}
	}
	known := yamlKeys(dst)
	seen := map[string]bool{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k := v.Content[i]
		if !known[k.Value] {
			return &lineError{k.Line, fmt.Sprintf("unknown key %q (want %s)", k.Value, strings.Join(sortedKeys(known), ", "))}
		}
		if seen[k.Value] {
			return &lineError{k.Line, fmt.Sprintf("duplicate key %q", k.Value)}
		}
		seen[k.Value] = true
	}
	// One key at a time, so a wrong type names its key: yaml.v3's own message
	// ("cannot unmarshal !!str `forty` into int") does not.
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		one := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: k.Line, Column: k.Column, Content: []*yaml.Node{k, val}}
		if err := one.Decode(dst); err != nil {
			msg := strings.TrimPrefix(err.Error(), "yaml: unmarshal errors:\n")
			line := k.Line
			var n int
			if _, scanErr := fmt.Sscanf(strings.TrimSpace(msg), "line %d:", &n); scanErr == nil {
				line = n
				msg = strings.TrimSpace(msg[strings.Index(msg, ":")+1:])
			}
			return &lineError{line, fmt.Sprintf("%s: %s", k.Value, msg)}
		}
	}
	return nil
}

// settingLine is the line of the setting a Validate error is about: stages
// start their messages with the key ("passage \"page\" is not ..."), and in a
// block mapping the key can sit lines below the mapping's first line.
func settingLine(v *yaml.Node, err error) int {
	first, _, _ := strings.Cut(err.Error(), " ")
	if v.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(v.Content); i += 2 {
			if v.Content[i].Value == first {
				return v.Content[i].Line
			}
		}
	}
	return v.Line
}

func yamlKeys(v any) map[string]bool {
	t := reflect.TypeOf(v).Elem()
	out := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		if tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]; tag != "" && tag != "-" {
			out[tag] = true
		}
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// checkOrder refuses pipelines whose stages cannot work in that order: every
// stage but a retriever works on a ranking one produced.
func checkOrder(ss []stages.Stage) error {
	for _, s := range ss {
		if _, ok := s.(stages.Retriever); ok {
			return nil
		}
		return fmt.Errorf("stage %s comes before any retrieval stage (%s)", s.Name(), strings.Join(Retrievers(), ", "))
	}
	return nil
}

// Retrievers lists the registered stages that produce a list of their own.
func Retrievers() []string {
	var out []string
	for _, name := range StageNames() {
		if _, ok := newStage[name]().(stages.Retriever); ok {
			out = append(out, name)
		}
	}
	return out
}

// StagesNeeding lists the registered stages that can need a model of the
// given role (stages.RoleEmbedder, stages.RoleCrossEncoder), by name.
func StagesNeeding(role string) []string {
	var out []string
	for _, name := range StageNames() {
		if mu, ok := newStage[name]().(stages.ModelUser); ok && slices.Contains(mu.ModelRoles(), role) {
			out = append(out, name)
		}
	}
	return out
}

// LoadDir reads every *.yaml file of a folder, sorted by name.
func LoadDir(dir string) ([]*Config, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var out []*Config
	for _, p := range paths {
		c, err := LoadFile(p)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// Names lists the configurations a client may name without a path: the
// *.yaml files of configs/, then of experiments/, each folder sorted, by file
// name without ".yaml"; a name in both folders once (Find takes configs/'s).
// A missing folder lists nothing.
func Names(root string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, dir := range []string{"configs", "experiments"} {
		entries, err := os.ReadDir(filepath.Join(root, dir)) // sorted by name
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list the configurations: %w", err)
		}
		for _, e := range entries {
			name, ok := strings.CutSuffix(e.Name(), ".yaml")
			if ok && !e.IsDir() && !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
		}
	}
	return out, nil
}

// Find locates a configuration by name (configs/NAME.yaml, then
// experiments/NAME.yaml, then experiments/lab/NAME.yaml) or by path.
func Find(root, name string) (*Config, error) {
	if strings.HasSuffix(name, ".yaml") || strings.ContainsRune(name, os.PathSeparator) {
		return LoadFile(name)
	}
	for _, dir := range []string{"configs", "experiments", filepath.Join("experiments", "lab")} {
		p := filepath.Join(root, dir, name+".yaml")
		if _, err := os.Stat(p); err == nil {
			return LoadFile(p)
		}
	}
	return nil, fmt.Errorf("no configuration %q in %s/configs, %s/experiments or %s/experiments/lab", name, root, root, root)
}
