package pipeline

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// ConfigError is the refusal of a configuration file, or of a file of its
// kind (a sweep): the file, the line and the key it is about, and why.
type ConfigError struct {
	File string
	Line int    // 0 when the file is not YAML at all (yaml.v3's message says where)
	Key  string // the key the refusal is about, as written; "" when it is about no one key
	Err  error
}

// Error is "file:line: why", or "file: why" without a line.
func (e *ConfigError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %v", e.File, e.Err)
	}
	return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
}

func (e *ConfigError) Unwrap() error { return e.Err }

// Source is a file of a configuration's kind (a configuration, a sweep) being
// read strictly, by its path: every refusal is a *ConfigError naming it.
type Source string

// Errorf is a refusal at line about key ("" for none).
func (s Source) Errorf(line int, key, format string, args ...any) error {
	return &ConfigError{File: string(s), Line: line, Key: key, Err: fmt.Errorf(format, args...)}
}

// Mapping decodes raw as one YAML mapping; what says what the file should
// be when it is something else ("a sweep is a mapping with ...").
func (s Source) Mapping(raw []byte, what string) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(raw)).Decode(&doc); err != nil {
		return nil, &ConfigError{File: string(s), Err: fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "yaml: "))}
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, s.Errorf(1, "", "%s", what)
	}
	return doc.Content[0], nil
}

// Fields calls fn on each key and value of the mapping m in file order,
// refusing first a key not in known (the message lists known, in its order)
// and a key written twice. A nil fn only checks the keys.
func (s Source) Fields(m *yaml.Node, known []string, fn func(k, v *yaml.Node) error) error {
	seen := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if seen[k.Value] {
			return s.Errorf(k.Line, k.Value, "duplicate key %q", k.Value)
		}
		seen[k.Value] = true
		if !slices.Contains(known, k.Value) {
			return s.Errorf(k.Line, k.Value, "unknown key %q (want %s)", k.Value, strings.Join(known, ", "))
		}
		if fn != nil {
			if err := fn(k, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// keyLine is the line of the key at path inside a settings mapping, as deep
// as the path is written (a key can sit lines below its mapping's first
// line); the mapping's own line when its first key is not there.
func keyLine(v *yaml.Node, path ...string) int {
	line := v.Line
next:
	for _, key := range path {
		if v.Kind != yaml.MappingNode {
			break
		}
		for i := 0; i+1 < len(v.Content); i += 2 {
			if v.Content[i].Value == key {
				line, v = v.Content[i].Line, v.Content[i+1]
				continue next
			}
		}
		break
	}
	return line
}
