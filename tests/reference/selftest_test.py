#!/usr/bin/env python3
"""Runs selftest.py under prove (scripts/test.sh picks up tests/reference/*_test.py)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ensure_numpy  # noqa: E402

ensure_numpy()
import selftest  # noqa: E402

sys.exit(selftest.main())
