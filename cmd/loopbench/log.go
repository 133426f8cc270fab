//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Arm names.
const (
	armVaultRag = "vault-rag"
	armRipgrep  = "ripgrep"
)

// Call is one line of a call log: one tool call of an assistant, or (Setup)
// the tools listing an MCP client reads without the model calling anything.
type Call struct {
	Arm   string          `json:"arm"`
	QID   string          `json:"qid"`
	Tool  string          `json:"tool"`            // the MCP tool, "tools" (the listing), or rg, sed, cat, ls
	Args  json.RawMessage `json:"args"`            // the tool's JSON arguments, or the command's argument list
	Bytes int             `json:"bytes"`           // bytes of output the assistant was shown
	Error bool            `json:"error"`           // the call failed: a tool error, a refusal, a non-zero exit
	Setup bool            `json:"setup,omitempty"` // not a call of the model's: the tools listing
	// Refused says the wrapper ran nothing (an argument outside the vault, a
	// forbidden command); Exit is the command's exit status (ripgrep arm).
	Refused bool   `json:"refused,omitempty"`
	Exit    int    `json:"exit,omitempty"`
	Time    string `json:"time"` // when the call ended, RFC 3339 UTC
	MS      int64  `json:"ms"`   // how long it took
}

// appendJSONLine appends v as one JSON line to path, under an exclusive lock
// so that parallel assistants sharing one file never interleave lines.
func appendJSONLine(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("lock %s: %w", path, err)
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	if _, err := f.Write(b); err != nil {
		return fmt.Errorf("append to %s: %w", path, err)
	}
	return nil
}

func logCall(path string, c Call, started time.Time) error {
	now := time.Now()
	c.Time = now.UTC().Format(time.RFC3339Nano)
	c.MS = now.Sub(started).Milliseconds()
	if c.Args == nil {
		c.Args = json.RawMessage("null")
	}
	return appendJSONLine(path, c)
}
