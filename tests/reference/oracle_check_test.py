#!/usr/bin/env python3
"""Runs oracle_check.py under prove (scripts/test.sh picks up tests/reference/*_test.py)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ensure_numpy  # noqa: E402

ensure_numpy()
import oracle_check  # noqa: E402

sys.exit(oracle_check.main())
