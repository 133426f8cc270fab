// Package mcpb holds Claude Desktop's bundle manifest (manifest.json, packed
// by scripts/mcpb.sh) and the tests that keep it true to the server: its
// tools are the server's, its settings are variables the binary reads, and
// each platform's command is where the release staging puts that platform's
// binary. It has no code of its own.
package mcpb
