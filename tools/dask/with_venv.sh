#!/usr/bin/env bash
# Runs a Python program of the sweep suite with the project's venv (build/venv, installed from
# PyPI by ensure_venv if missing or out of date): with_venv.sh PROGRAM.py [ARGS...]
set -euo pipefail
source "$(dirname "$0")/../common.sh"
ensure_venv
exec "$RESTORESIM_VENV/bin/python" "$@"
