#!/usr/bin/env bash
# pytok.sh installs the pinned Hugging Face tokenizers (PyPI) under data/pytok
# and prints the folder to put on PYTHONPATH. The tokenizer tests compare
# models/wordpiece with it token for token; vault-rag itself never runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
TOKENIZERS_PY_VERSION=0.22.1
dir=data/pytok/tokenizers-$TOKENIZERS_PY_VERSION
if ! PYTHONPATH=$dir python3 -c "import tokenizers" 2>/dev/null; then
  python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$dir" \
    "tokenizers==$TOKENIZERS_PY_VERSION" >&2
fi
echo "$PWD/$dir"
