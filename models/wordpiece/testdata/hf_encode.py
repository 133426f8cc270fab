"""Tokenizes texts with Hugging Face tokenizers, for the Go tests to compare.

Usage: hf_encode.py TOKENIZER_JSON < texts > ids
Input: each text as a 4-byte little-endian length and that many bytes, decoded
as UTF-8 with replacement (so invalid bytes reach the tokenizer as U+FFFD).
Output: one JSON array of ids per text, one a line, with [CLS] and [SEP];
the file's own truncation and padding are switched off, as vault-rag does.
"""
import json
import struct
import sys

from tokenizers import Tokenizer

tok = Tokenizer.from_file(sys.argv[1])
tok.no_truncation()
tok.no_padding()
data = sys.stdin.buffer.read()
texts, i = [], 0
while i < len(data):
    (n,) = struct.unpack_from("<I", data, i)
    texts.append(data[i + 4 : i + 4 + n].decode("utf-8", "replace"))
    i += 4 + n
out = sys.stdout
for enc in tok.encode_batch(texts, add_special_tokens=True):
    out.write(json.dumps(enc.ids, separators=(",", ":")))
    out.write("\n")
