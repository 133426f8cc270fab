// Package sweep runs a grid over a base configuration's settings (a sweep
// file, experiments/sweeps/) on eval's datasets, chooses a setting by the
// selection rule and estimates how it transfers, by k-fold and
// leave-one-dataset-out cross-validation, and writes the winner as an
// experiment file. Its result (Result) is shown by eval/report.
package sweep

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/vault-rag/vault-rag/eval"
	"github.com/vault-rag/vault-rag/pipeline"
)

// MaxGrid bounds a sweep's grid: every point runs every query of every
// dataset, so a typo that multiplies the grid should fail, not run for days.
const MaxGrid = 4096

// Sweep is a sweep file: a grid over settings of a base configuration,
// scored by k-fold cross-validation.
//
//	name: rrf-depth                 # default: the file name
//	description: RRF k and list depths
//	base: configs/hybrid.yaml       # a configuration file (relative to the root) or name
//	folds: 5                        # default 5, at least 2
//	seed: 1                         # fold assignment seed, default 1
//	expansions: client              # score with the datasets' client expansions (default none)
//	grid:                           # setting → the values to try
//	  rrf.k: [20, 60]
//	  keyword.limit: [40, 100]
//
// A setting is STAGE.KEY (STAGE#N.KEY for the N-th stage of that name, when
// the base has several; KEY may continue with .SUB for nested mappings).
// Every value is decoded by the same strict decoder as a configuration file,
// so an unknown stage setting or an invalid value fails with the sweep file's
// line.
type Sweep struct {
	Name        string
	Description string
	File        string
	BaseFile    string
	Base        *pipeline.Config
	Folds       int
	Seed        uint64
	Axes        []Axis
	// Expansions is the variant every point is scored with: "" (the user's
	// question alone) or "client" (with the datasets' client expansions,
	// which each dataset must then have).
	Expansions string

	baseDoc *yaml.Node // the base file's document, copied for every point
}

// Axis is one swept setting.
type Axis struct {
	Key    string   // as written: "rrf.k"
	Stage  string   // "rrf"
	Nth    int      // 1-based occurrence of Stage in the base
	Path   []string // setting path inside the stage: ["k"]
	Values []*yaml.Node
	Line   int
}

// Point is one setting of every axis: a configuration to run.
type Point struct {
	Index  int
	Values []string // one per axis, as YAML text
	Config *pipeline.Config
	YAML   []byte // the configuration file the point is
}

// Label is the point's settings, "rrf.k=20 keyword.limit=40".
func (p *Point) Label(s *Sweep) string {
	parts := make([]string, len(s.Axes))
	for i, a := range s.Axes {
		parts[i] = a.Key + "=" + p.Values[i]
	}
	return strings.Join(parts, " ")
}

// Load reads a sweep file; base configurations named by path are looked
// up relative to root.
func Load(path, root string) (*Sweep, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read sweep: %w", err)
	}
	return Parse(path, raw, root)
}

// sweepKeys are a sweep file's keys, in the order its refusals list them.
var sweepKeys = []string{"name", "description", "base", "folds", "seed", "expansions", "grid"}

// Parse decodes a sweep file strictly: an unknown key, a missing or
// ill-typed field, a setting the base's stage lacks or a value its stage
// refuses is a *pipeline.ConfigError naming the file and the line.
func Parse(file string, raw []byte, root string) (*Sweep, error) {
	src := pipeline.Source(file)
	m, err := src.Mapping(raw, "a sweep is a mapping with name, description, base, folds, seed and grid")
	if err != nil {
		return nil, err
	}
	s := &Sweep{File: file, Folds: 5, Seed: 1}
	var baseNode, gridNode *yaml.Node
	err = src.Fields(m, sweepKeys, func(k, v *yaml.Node) error {
		switch k.Value {
		case "base":
			baseNode = v
		case "grid":
			gridNode = v
			return nil
		}
		if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
			return src.Errorf(v.Line, k.Value, "%s must be a single value", k.Value)
		}
		return s.setScalar(src, k, v)
	})
	if err != nil {
		return nil, err
	}
	if s.Name == "" {
		s.Name = pipeline.NameOf(file)
	}
	if exp := experimentName(s.Name); !pipeline.ValidName(exp) {
		return nil, src.Errorf(m.Line, "name", "name %q cannot name the winner's configuration %s (a configuration's name is %s)", s.Name, exp, pipeline.NameRule)
	}
	if baseNode == nil {
		return nil, src.Errorf(m.Line, "base", "base is missing: the configuration whose settings the grid varies, e.g. base: configs/hybrid.yaml")
	}
	if err := s.loadBase(root, baseNode); err != nil {
		return nil, src.Errorf(baseNode.Line, "base", "base: %w", err)
	}
	if gridNode == nil || gridNode.Kind != yaml.MappingNode || len(gridNode.Content) == 0 {
		line := m.Line
		if gridNode != nil {
			line = gridNode.Line
		}
		return nil, src.Errorf(line, "grid", "grid must be a non-empty mapping of settings to lists of values, e.g. rrf.k: [20, 60]")
	}
	if err := s.parseGrid(src, gridNode); err != nil {
		return nil, err
	}
	// Each value alone, so a refused value names its own line.
	for ai, a := range s.Axes {
		for _, val := range a.Values {
			choice := map[int]*yaml.Node{ai: val}
			if _, _, err := s.build(choice, "check"); err != nil {
				return nil, src.Errorf(val.Line, a.Key, "grid key %q, value %s: %w", a.Key, nodeText(val), err)
			}
		}
	}
	return s, nil
}

// setScalar sets the sweep's field of a key whose value is a single one
// (every key but base and grid).
func (s *Sweep) setScalar(src pipeline.Source, k, v *yaml.Node) error {
	switch k.Value {
	case "name":
		s.Name = v.Value
	case "description":
		s.Description = v.Value
	case "folds":
		n, err := strconv.Atoi(v.Value)
		if err != nil || n < 2 {
			return src.Errorf(v.Line, k.Value, "folds must be an integer of at least 2, not %q", v.Value)
		}
		s.Folds = n
	case "seed":
		n, err := strconv.ParseUint(v.Value, 10, 64)
		if err != nil {
			return src.Errorf(v.Line, k.Value, "seed must be a non-negative integer, not %q", v.Value)
		}
		s.Seed = n
	case "expansions":
		if v.Value != "none" && v.Value != eval.VariantClient {
			return src.Errorf(v.Line, k.Value, "expansions must be none or %s, not %q", eval.VariantClient, v.Value)
		}
		if v.Value == eval.VariantClient {
			s.Expansions = v.Value
		}
	}
	return nil
}

// loadBase reads and decodes the base configuration the base key names and
// keeps its document for the grid points.
func (s *Sweep) loadBase(root string, baseNode *yaml.Node) error {
	basePath, err := resolveBase(root, baseNode.Value)
	if err != nil {
		return err
	}
	baseRaw, err := os.ReadFile(basePath)
	if err != nil {
		return err
	}
	if s.Base, err = pipeline.Parse(basePath, baseRaw); err != nil {
		return err
	}
	s.BaseFile = basePath
	var bdoc yaml.Node
	if err := yaml.Unmarshal(baseRaw, &bdoc); err != nil {
		return err
	}
	s.baseDoc = &bdoc
	return nil
}

// parseGrid reads the grid's axes: each key a setting of the base, each
// value a non-empty list without repeats, at most MaxGrid points in all.
func (s *Sweep) parseGrid(src pipeline.Source, grid *yaml.Node) error {
	size := 1
	keys := map[string]bool{}
	for i := 0; i+1 < len(grid.Content); i += 2 {
		k, v := grid.Content[i], grid.Content[i+1]
		a, err := parseAxisKey(k.Value)
		if err != nil {
			return src.Errorf(k.Line, k.Value, "grid key %q: %w", k.Value, err)
		}
		canon := fmt.Sprintf("%s#%d.%s", a.Stage, a.Nth, strings.Join(a.Path, "."))
		if keys[canon] {
			return src.Errorf(k.Line, k.Value, "grid key %q: the setting is already swept", k.Value)
		}
		keys[canon] = true
		a.Line = k.Line
		if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
			return src.Errorf(v.Line, k.Value, "grid key %q: want a non-empty list of values, e.g. [20, 60]", k.Value)
		}
		texts := map[string]bool{}
		for _, val := range v.Content {
			t := nodeText(val)
			if texts[t] {
				return src.Errorf(val.Line, k.Value, "grid key %q: value %s is listed twice", k.Value, t)
			}
			texts[t] = true
			a.Values = append(a.Values, val)
		}
		if _, err := s.stageNode(s.baseDoc, a); err != nil {
			return src.Errorf(k.Line, k.Value, "grid key %q: %w", k.Value, err)
		}
		s.Axes = append(s.Axes, a)
		size *= len(a.Values)
		if size > MaxGrid {
			return src.Errorf(k.Line, k.Value, "the grid has more than %d points", MaxGrid)
		}
	}
	return nil
}

// resolveBase finds the base configuration: a name (configs/NAME.yaml, then
// experiments/NAME.yaml) or a path relative to root.
func resolveBase(root, base string) (string, error) {
	if strings.TrimSpace(base) == "" {
		return "", fmt.Errorf("no base configuration: name one of configs/ or experiments/ (shipping, say) or give a path to a .yaml file")
	}
	if !strings.HasSuffix(base, ".yaml") && !strings.ContainsAny(base, `/\`) {
		c, err := pipeline.Find(root, base)
		if err != nil {
			return "", err
		}
		return c.File, nil
	}
	if filepath.IsAbs(base) {
		return base, nil
	}
	return filepath.Join(root, filepath.FromSlash(base)), nil
}

// parseAxisKey splits "rrf.k", "vector#2.limit" or "rrf.weights.keyword".
func parseAxisKey(key string) (Axis, error) {
	parts := strings.Split(key, ".")
	if len(parts) < 2 {
		return Axis{}, fmt.Errorf("want STAGE.SETTING, e.g. rrf.k")
	}
	a := Axis{Key: key, Stage: parts[0], Nth: 1, Path: parts[1:]}
	if st, n, ok := strings.Cut(parts[0], "#"); ok {
		nth, err := strconv.Atoi(n)
		if err != nil || nth < 1 {
			return Axis{}, fmt.Errorf("%q: the occurrence after # must be a positive integer", parts[0])
		}
		a.Stage, a.Nth = st, nth
	}
	for _, p := range append([]string{a.Stage}, a.Path...) {
		if p == "" {
			return Axis{}, fmt.Errorf("empty part; want STAGE.SETTING, e.g. rrf.k")
		}
	}
	return a, nil
}

// stageNode finds the settings node of the axis's stage in a configuration
// document, making an empty mapping of a stage written without settings.
func (s *Sweep) stageNode(doc *yaml.Node, a Axis) (*yaml.Node, error) {
	root := doc.Content[0]
	var list *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "stages" {
			list = root.Content[i+1]
		}
	}
	if list == nil {
		return nil, fmt.Errorf("the base has no stages")
	}
	n := 0
	for _, item := range list.Content {
		if item.Kind == yaml.MappingNode && len(item.Content) == 2 && item.Content[0].Value == a.Stage {
			n++
			if n == a.Nth {
				v := item.Content[1]
				if v.Kind != yaml.MappingNode {
					*v = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: yaml.FlowStyle, Line: v.Line}
				}
				return v, nil
			}
		}
	}
	switch {
	case n == 0:
		return nil, fmt.Errorf("the base (%s) has no %s stage", filepath.Base(s.BaseFile), a.Stage)
	case a.Nth == 1:
		return nil, fmt.Errorf("impossible") // n ≥ 1 found the first
	default:
		return nil, fmt.Errorf("the base (%s) has %d %s stage(s), not %d", filepath.Base(s.BaseFile), n, a.Stage, a.Nth)
	}
}

// set writes value at path inside a settings mapping, creating nested
// mappings on the way.
func set(m *yaml.Node, path []string, value *yaml.Node) error {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value != path[0] {
			continue
		}
		if len(path) == 1 {
			m.Content[i+1] = copyNode(value)
			return nil
		}
		next := m.Content[i+1]
		if next.Kind != yaml.MappingNode {
			return fmt.Errorf("%s is not a mapping", path[0])
		}
		return set(next, path[1:], value)
	}
	k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: path[0]}
	if len(path) == 1 {
		m.Content = append(m.Content, k, copyNode(value))
		return nil
	}
	sub := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: yaml.FlowStyle}
	m.Content = append(m.Content, k, sub)
	return set(sub, path[1:], value)
}

func copyNode(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	c := *n
	c.HeadComment, c.LineComment, c.FootComment = "", "", ""
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, x := range n.Content {
		c.Content[i] = copyNode(x)
	}
	if c.Kind == yaml.SequenceNode || c.Kind == yaml.MappingNode {
		c.Style = yaml.FlowStyle
	}
	return &c
}

// nodeText is a value as one line of YAML: "20", "[160, 640]".
func nodeText(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		return n.Value
	}
	b, err := yaml.Marshal(copyNode(n))
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}

// setTop sets a top-level scalar key (name, description) of a configuration.
func setTop(doc *yaml.Node, key, value string) {
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == key {
			root.Content[i+1] = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value}
			return
		}
	}
	// name and description go first, before the stages.
	kv := []*yaml.Node{{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, {Kind: yaml.ScalarNode, Tag: "!!str", Value: value}}
	root.Content = append(kv, root.Content...)
}

// build makes the base with the chosen values (axis index → value) as a
// configuration file and decodes it strictly.
func (s *Sweep) build(choice map[int]*yaml.Node, name string) (*pipeline.Config, []byte, error) {
	doc := copyTree(s.baseDoc)
	for ai, val := range choice {
		a := s.Axes[ai]
		st, err := s.stageNode(doc, a)
		if err != nil {
			return nil, nil, err
		}
		if err := set(st, a.Path, val); err != nil {
			return nil, nil, fmt.Errorf("%s: %v", a.Key, err)
		}
	}
	setTop(doc, "name", name)
	raw, err := encodeYAML(doc)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := pipeline.Parse("generated", raw)
	if err != nil {
		// The generated file's name and lines mean nothing to the reader.
		var ce *pipeline.ConfigError
		if errors.As(err, &ce) {
			err = ce.Err
		}
		return nil, nil, err
	}
	return cfg, raw, nil
}

// copyTree copies a document keeping comments (the base's comments stay in
// every generated file).
func copyTree(n *yaml.Node) *yaml.Node {
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, x := range n.Content {
		c.Content[i] = copyTree(x)
	}
	return &c
}

func encodeYAML(doc *yaml.Node) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Points lists the grid, the last axis varying fastest.
func (s *Sweep) Points() ([]*Point, error) {
	total := 1
	for _, a := range s.Axes {
		total *= len(a.Values)
	}
	out := make([]*Point, 0, total)
	idx := make([]int, len(s.Axes))
	for n := 0; n < total; n++ {
		rem := n
		for ai := len(s.Axes) - 1; ai >= 0; ai-- {
			idx[ai] = rem % len(s.Axes[ai].Values)
			rem /= len(s.Axes[ai].Values)
		}
		p := &Point{Index: n}
		choice := map[int]*yaml.Node{}
		for ai, a := range s.Axes {
			v := a.Values[idx[ai]]
			choice[ai] = v
			p.Values = append(p.Values, nodeText(v))
		}
		cfg, raw, err := s.build(choice, fmt.Sprintf("%s-%03d", s.Name, n))
		if err != nil {
			return nil, fmt.Errorf("%s: grid point %s: %v", s.File, p.Label(s), err)
		}
		cfg.Description = p.Label(s)
		p.Config, p.YAML = cfg, raw
		out = append(out, p)
	}
	return out, nil
}

// Experiment is the configuration file of a point, named and described for
// experiments/: a header comment says where it came from.
func (s *Sweep) Experiment(p *Point, name, description, header string) ([]byte, error) {
	choice := map[int]*yaml.Node{}
	for ai, a := range s.Axes {
		for _, v := range a.Values {
			if nodeText(v) == p.Values[ai] {
				choice[ai] = v
			}
		}
	}
	doc := copyTree(s.baseDoc)
	doc.Content[0].HeadComment = ""
	doc.HeadComment = ""
	for ai, val := range choice {
		a := s.Axes[ai]
		st, err := s.stageNode(doc, a)
		if err != nil {
			return nil, err
		}
		if err := set(st, a.Path, val); err != nil {
			return nil, err
		}
	}
	setTop(doc, "description", description)
	setTop(doc, "name", name)
	raw, err := encodeYAML(doc)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(header, "\n"), "\n") {
		b.WriteString(strings.TrimRight("# "+line, " ") + "\n")
	}
	b.Write(raw)
	return []byte(b.String()), nil
}
