#!/usr/bin/env python3
"""Generates ONNX's backend node test cases (model.onnx + test_data_set_0/*.pb per case):

    gen_node_tests.py OUT_DIR        (cases land in OUT_DIR/node/<test>)

Debian's python3-onnx 1.12 ships the generators but not the data, and its generators use
NumPy aliases (np.float, np.int, np.bool, np.object) that NumPy 1.24 removed: they are put
back (as the builtins they aliased) before the generator runs.
"""
import sys

import numpy as np

for name, alias in (("float", float), ("int", int), ("bool", bool), ("object", object), ("complex", complex),
                    ("str", str), ("long", int), ("unicode", str)):
    if name not in np.__dict__:
        setattr(np, name, alias)

from onnx.backend.test.cmd_tools import main  # noqa: E402

sys.argv = ["backend-test-tools", "generate-data", "-o", sys.argv[1]]
main()
