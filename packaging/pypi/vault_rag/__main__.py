"""python -m vault_rag: the same as the vault-rag command."""

import sys

from . import main

sys.exit(main())
