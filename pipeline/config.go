// Package pipeline builds retrieval pipelines from configuration files and runs
// them: a configuration lists stages, each decoded strictly into its struct.
package pipeline

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
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

// LoadFile reads and decodes one configuration file.
func LoadFile(path string) (*Config, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read configuration: %w", err)
	}
	return Parse(path, raw)
}

// Parse decodes a configuration strictly: an unknown top-level key, stage or
// stage setting, a wrong type, an invalid value, a stage out of order or a
// fusion weight for a list no earlier stage produces is a *ConfigError naming
// the file, the line and the key.
func Parse(file string, raw []byte) (*Config, error) {
	src := Source(file)
	doc, err := src.Mapping(raw, "a configuration is a mapping with name, description and stages")
	if err != nil {
		return nil, err
	}
	cfg := &Config{File: file}
	var stageList *yaml.Node
	err = src.Fields(doc, []string{"name", "description", "stages"}, func(k, v *yaml.Node) error {
		switch k.Value {
		case "name", "description":
			if v.Kind != yaml.ScalarNode {
				return src.Errorf(v.Line, k.Value, "%s must be a string", k.Value)
			}
			if k.Value == "name" {
				cfg.Name = v.Value
			} else {
				cfg.Description = v.Value
			}
		case "stages":
			stageList = v
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if cfg.Name == "" {
		cfg.Name = NameOf(file)
	}
	if stageList == nil || stageList.Kind != yaml.SequenceNode || len(stageList.Content) == 0 {
		line := doc.Line
		if stageList != nil {
			line = stageList.Line
		}
		return nil, src.Errorf(line, "stages", "stages must be a non-empty list")
	}
	var settings []*yaml.Node
	for _, item := range stageList.Content {
		if item.Kind != yaml.MappingNode || len(item.Content) != 2 {
			return nil, src.Errorf(item.Line, "", "each stage is a mapping of one stage name to its settings, e.g. `- keyword: {limit: 40}`")
		}
		st, err := parseStage(src, item.Content[0], item.Content[1])
		if err != nil {
			return nil, err
		}
		cfg.Stages = append(cfg.Stages, st)
		settings = append(settings, item.Content[1])
	}
	if err := checkOrder(cfg.Stages); err != nil {
		return nil, src.Errorf(stageList.Line, "stages", "%w", err)
	}
	if err := checkLists(src, cfg.Stages, settings); err != nil {
		return nil, err
	}
	return cfg, nil
}

// NameOf is the name of a configuration (or sweep) file that names none:
// its file name without the extension.
func NameOf(file string) string {
	return strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
}

// parseStage decodes one stage, key: settings, strictly and validates it.
func parseStage(src Source, key, settings *yaml.Node) (stages.Stage, error) {
	st, ok := stages.New(key.Value)
	if !ok {
		return nil, src.Errorf(key.Line, key.Value, "unknown stage %q (want one of %s)", key.Value, strings.Join(stages.Names(), ", "))
	}
	if err := decodeStrict(src, settings, st); err != nil {
		var ce *ConfigError
		if errors.As(err, &ce) {
			ce.Err = fmt.Errorf("stage %s: %w", key.Value, ce.Err)
		}
		return nil, err
	}
	if err := st.Validate(); err != nil {
		var se *stages.SettingError
		setting := ""
		if errors.As(err, &se) {
			setting = se.Key
		}
		return nil, src.Errorf(keyLine(settings, setting), setting, "stage %s: %w", key.Value, err)
	}
	return st, nil
}

// decodeStrict decodes a stage's settings, refusing keys the struct lacks.
func decodeStrict(src Source, v *yaml.Node, dst stages.Stage) error {
	if v.Kind == yaml.ScalarNode && (v.Tag == "!!null" || v.Value == "") {
		return nil // `- keyword:` with no settings
	}
	if v.Kind != yaml.MappingNode {
		return src.Errorf(v.Line, dst.Name(), "settings must be a mapping")
	}
	if err := src.Fields(v, settingKeys(dst), nil); err != nil {
		return err
	}
	// One key at a time, so a wrong type names its key: yaml.v3's own message
	// ("cannot unmarshal !!str `forty` into int") does not.
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		one := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: k.Line, Column: k.Column, Content: []*yaml.Node{k, val}}
		if err := one.Decode(dst); err != nil {
			var se *stages.SettingError
			if errors.As(err, &se) { // a setting's decoder refused the value, as Validate would
				return src.Errorf(k.Line, se.Key, "%w", err)
			}
			msg := strings.TrimPrefix(err.Error(), "yaml: unmarshal errors:\n")
			line := k.Line
			var n int
			if _, scanErr := fmt.Sscanf(strings.TrimSpace(msg), "line %d:", &n); scanErr == nil {
				line = n
				msg = strings.TrimSpace(msg[strings.Index(msg, ":")+1:])
			}
			return src.Errorf(line, k.Value, "%s: %s", k.Value, msg)
		}
	}
	return nil
}

// settingKeys lists a stage struct's yaml keys, sorted.
func settingKeys(st stages.Stage) []string {
	t := reflect.TypeOf(st).Elem()
	var out []string
	for i := 0; i < t.NumField(); i++ {
		if tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]; tag != "" && tag != "-" {
			out = append(out, tag)
		}
	}
	slices.Sort(out)
	return out
}

// checkOrder refuses pipelines whose stages cannot work in that order: every
// stage but a retriever works on a ranking one produced.
func checkOrder(ss []stages.Stage) error {
	if len(ss) == 0 {
		return nil
	}
	if _, ok := ss[0].(stages.Retriever); !ok {
		return fmt.Errorf("stage %s comes before any retrieval stage (%s)", ss[0].Name(), strings.Join(Retrievers(), ", "))
	}
	return nil
}

// checkLists refuses a list named in a stage's settings (a fusion weight)
// that no stage before it produces: the weight would weigh nothing.
// settings are the stages' settings nodes, for the line.
func checkLists(src Source, ss []stages.Stage, settings []*yaml.Node) error {
	var produced []string
	for i, s := range ss {
		if lr, ok := s.(stages.ListReader); ok {
			for _, ref := range lr.ListsNamed() {
				if !slices.Contains(produced, ref.List) {
					return src.Errorf(keyLine(settings[i], ref.Setting, ref.List), ref.List,
						"stage %s: %s: no stage before it produces a list %q (the lists before it: %s)", s.Name(), ref.Setting, ref.List, strings.Join(produced, ", "))
				}
			}
		}
		if p, ok := s.(stages.Producer); ok {
			for _, name := range p.Produces() {
				if !slices.Contains(produced, name) {
					produced = append(produced, name)
				}
			}
		}
	}
	return nil
}

// Retrievers lists the registered stages that produce a list of their own.
func Retrievers() []string {
	var out []string
	for _, name := range stages.Names() {
		if st, _ := stages.New(name); isRetriever(st) {
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
	slices.Sort(paths)
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

// NamePattern is what a configuration asked for by name may be called (serve
// --config, the MCP config parameter, Find, a sweep's winner): a bare name,
// never a path, since Find reads any YAML file it is given a path to.
const NamePattern = `^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`

// NameRule is NamePattern in words.
const NameRule = "letters, digits, - and _, at most 64, the first a letter or digit"

var namePattern = regexp.MustCompile(NamePattern)

// ValidName reports whether a configuration may be called name (NamePattern).
func ValidName(name string) bool { return namePattern.MatchString(name) }

// Names lists the configurations a client may name without a path: the
// *.yaml files of configs/, then of experiments/, each folder sorted, by file
// name without ".yaml"; a name in both folders once (Find takes configs/'s).
// A file whose name is not a valid one (ValidName) is left out. A missing
// folder lists nothing.
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
			if ok && !e.IsDir() && ValidName(name) && !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
		}
	}
	return out, nil
}

// ErrNoConfig is Find's error for a name no configuration has.
var ErrNoConfig = errors.New("no configuration")

// Find locates a configuration by path (one ending in .yaml or holding a
// path separator) or by name (configs/NAME.yaml, then experiments/NAME.yaml,
// then experiments/lab/NAME.yaml); a name must be valid (ValidName).
func Find(root, name string) (*Config, error) {
	if strings.HasSuffix(name, ".yaml") || strings.ContainsRune(name, os.PathSeparator) {
		return LoadFile(name)
	}
	if !ValidName(name) {
		return nil, fmt.Errorf("configuration name %q: a name is %s (or give a path to a .yaml file)", name, NameRule)
	}
	for _, dir := range []string{"configs", "experiments", filepath.Join("experiments", "lab")} {
		p := filepath.Join(root, dir, name+".yaml")
		if _, err := os.Stat(p); err == nil {
			return LoadFile(p)
		}
	}
	return nil, fmt.Errorf("%w %q in %s/configs, %s/experiments or %s/experiments/lab", ErrNoConfig, name, root, root, root)
}
