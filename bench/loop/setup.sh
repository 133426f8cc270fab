#!/usr/bin/env bash
# The loop benchmark's one system dependency: ripgrep, the ripgrep arm's search tool
# (loopbench rg runs it). For benchmark machines only; CI never runs this.
set -euo pipefail
if command -v rg >/dev/null 2>&1; then
	echo "ripgrep already installed: $(rg --version | sed -n 1p)"
	exit 0
fi
SUDO=
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
# Install from the package lists there are; refresh them first only when that fails.
if ! $SUDO apt-get install -y ripgrep; then
	$SUDO apt-get update
	$SUDO apt-get install -y ripgrep
fi
echo "installed: $(rg --version | sed -n 1p)"
