package main

import (
	"os"

	"github.com/vault-rag/vault-rag/internal/vault"
)

// scanOptions are the scan settings from the environment: the exclude globs
// of VAULT_RAG_EXCLUDE (vault.ExcludeEnv, named as a literal so the --help
// test finds it). What the vault's Obsidian settings exclude, the scan reads
// from the vault itself.
func scanOptions() vault.ScanOptions {
	return vault.ScanOptions{Exclude: vault.ParseExclude(os.Getenv("VAULT_RAG_EXCLUDE"))}
}
