#!/usr/bin/env python3
"""Generates the source index behind `tessera ops --where` and the op coverage test.

The core's registry knows where each op record and backward formula is named (file and line);
what lives outside the core is found here, at build time, by reading the sources:
  sdk      an SDK wrapper that calls the op: `Op op("name")`, or a macro over `#param` such as
           TSR_SDK_UNARY_FAMILY(exp) (the macro's own body says which op names it produces)
  opinfo   the conformance suite's OpInfo naming the op (tools/conformance/opinfo_*.cpp)
  doc      a table row of docs/ whose first cell names the op
  formula  the definition of a backward formula, by function name (core/ops/)

  exempt   tools/tessera/op_coverage_exemptions.txt: public ops allowed to lack some of sdk,
           opinfo and doc, each with the reason

Usage: gen_op_index.py SOURCE_ROOT OUTPUT.cpp
Writes OUTPUT.cpp only when its text changes, so an unchanged index does not relink the CLI.
"""
import os
import re
import sys

root, out_path = sys.argv[1], sys.argv[2]


def files(top, exts):
    for d, _, names in os.walk(os.path.join(root, top)):
        for n in sorted(names):
            if n.endswith(exts):
                p = os.path.join(d, n)
                yield os.path.relpath(p, root), open(p, encoding="utf-8").read().split("\n")


def strip_comment(line):
    i = line.find("//")
    return line if i < 0 else line[:i]


entries = []  # (kind, name, file, line)

# --- SDK wrappers ------------------------------------------------------------------------------
OP_LITERAL = re.compile(r'\bOp\s*(?:\w+\s*)?[({]\s*"([A-Za-z_]\w*(?:::\w+)?)"')
DEFINE = re.compile(r"^\s*#\s*define\s+(TSR_\w+)\(([^)]*)\)")
sdk = list(files("sdk/tessera", (".hpp", ".h")))
# Wrapper macros: which parameter is stringified into an op name, and with which suffix.
macros = {}
bodies = {}  # macro -> (params, body), for macros that call other wrapper macros
for rel, lines in sdk:
    i = 0
    while i < len(lines):
        m = DEFINE.match(lines[i])
        if not m:
            i += 1
            continue
        params = [p.strip() for p in m.group(2).split(",")]
        body = lines[i]
        while body.rstrip().endswith("\\") and i + 1 < len(lines):
            i += 1
            body += "\n" + lines[i]
        names = []
        bodies[m.group(1)] = (params, body)
        for pm in re.finditer(r'\bOp\s*(?:\w+(?:\s*##\s*\w+)*\s*)?\(\s*(#?)(\w+)\s*(?:"([^"]*)")?\s*\)', body):
            if pm.group(2) in params:  # #param: the argument's name; param: a string argument
                names.append((params.index(pm.group(2)), pm.group(3) or "", pm.group(1) == "#"))
        if names:
            macros[m.group(1)] = names
        i += 1
# A macro that expands another wrapper macro with one of its parameters names what that one does.
changed = True
while changed:
    changed = False
    for name, (params, body) in bodies.items():
        for cm in re.finditer(r"\b(TSR_\w+)\(([^()]*)\)", body.split("\n", 1)[-1] if "\n" in body else ""):
            if cm.group(1) not in macros or cm.group(1) == name:
                continue
            args = [a.strip() for a in cm.group(2).split(",")]
            for index, suffix, stringified in macros[cm.group(1)]:
                if index < len(args) and args[index] in params:
                    entry = (params.index(args[index]), suffix, stringified)
                    if entry not in macros.setdefault(name, []):
                        macros[name].append(entry)
                        changed = True
for rel, lines in sdk:
    for n, line in enumerate(lines, 1):
        code = strip_comment(line)
        for m in OP_LITERAL.finditer(code):
            entries.append(("sdk", m.group(1), rel, n))
        if DEFINE.match(code):
            continue
        for m in re.finditer(r"\b(TSR_\w+)\(([^()]*)\)", code):
            if m.group(1) not in macros:
                continue
            args = [a.strip() for a in m.group(2).split(",")]
            for index, suffix, stringified in macros[m.group(1)]:
                if index >= len(args):
                    continue
                if stringified and re.fullmatch(r"\w+", args[index]):
                    entries.append(("sdk", args[index] + suffix, rel, n))
                elif not stringified and re.fullmatch(r'"[\w:]+"', args[index]):
                    entries.append(("sdk", args[index].strip('"') + suffix, rel, n))

# --- OpInfos -----------------------------------------------------------------------------------
for rel, lines in files("tools/conformance", (".cpp",)):
    if not os.path.basename(rel).startswith("opinfo_"):
        continue
    for n, line in enumerate(lines, 1):
        for m in re.finditer(r'"([A-Za-z_]\w*(?:::\w+)?)"', strip_comment(line)):
            entries.append(("opinfo", m.group(1), rel, n))

# --- doc rows ----------------------------------------------------------------------------------
for rel, lines in files("docs", (".md",)):
    for n, line in enumerate(lines, 1):
        if not line.startswith("|") or line.startswith("|---") or line.startswith("| ---"):
            continue
        cell = line.split("|")[1]
        cell = re.sub(r"\([^)]*\)", "", cell)  # argument notes: smooth_l1_loss(beta)
        for w in re.findall(r"[A-Za-z_][\w:]*(?:/[A-Za-z_]\w*)*", cell):
            # "logical_and/or/xor" names logical_and, logical_or and logical_xor
            parts = w.split("/")
            prefix = parts[0][: parts[0].find("_") + 1] if "_" in parts[0] else ""
            for i, part in enumerate(parts):
                entries.append(("doc", part if i == 0 else prefix + part, rel, n))

# --- backward formulas -------------------------------------------------------------------------
FORMULA = re.compile(r"^\s*(?:static\s+|inline\s+)?void\s+(\w+)\s*\(\s*(?:::)?(?:tsr::core::)?GradCtx\s*&")
FORMULA_MACRO = re.compile(r"^\s*TSR_UNARY_BW\((\w+)\)")
for rel, lines in files("core", (".cpp", ".hpp")):
    for n, line in enumerate(lines, 1):
        m = FORMULA.match(line)
        if m:
            entries.append(("formula", m.group(1), rel, n))
        m = FORMULA_MACRO.match(line)
        if m:
            entries.append(("formula", m.group(1) + "_bw", rel, n))

# --- exemptions --------------------------------------------------------------------------------
EXEMPTIONS = "tools/tessera/op_coverage_exemptions.txt"
notes = {}
for n, line in enumerate(open(os.path.join(root, EXEMPTIONS), encoding="utf-8").read().split("\n"), 1):
    line = line.strip()
    if not line or line.startswith("#"):
        continue
    m = re.fullmatch(r"([A-Za-z_][\w:]*)\s+((?:sdk|opinfo|doc)(?:,(?:sdk|opinfo|doc))*)\s+(.+)", line)
    if not m:
        sys.exit("%s:%d: expected 'OP sdk,opinfo,doc REASON', got: %s" % (EXEMPTIONS, n, line))
    entries.append(("exempt", m.group(1), m.group(2), n))
    notes[("exempt", m.group(1))] = m.group(3)


def c_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


# First mention per (kind, name) wins: it is the wrapper, OpInfo or row a reader wants.
seen = set()
rows = []
for kind, name, rel, n in entries:
    if (kind, name) in seen:
        continue
    seen.add((kind, name))
    note = notes.get((kind, name), "")
    rows.append("    {%s, %s, %s, %d, %s}," % (c_string(kind), c_string(name), c_string(rel), n, c_string(note)))

text = """// Generated by tools/tessera/gen_op_index.py from the source tree; do not edit.
#include "op_index.hpp"

namespace tessera_cli {

const SourceRef kOpIndex[] = {
%s
};
const size_t kOpIndexSize = sizeof(kOpIndex) / sizeof(kOpIndex[0]);

}  // namespace tessera_cli
""" % "\n".join(rows)
try:
    old = open(out_path, encoding="utf-8").read()
except OSError:
    old = None
if old != text:
    with open(out_path, "w", encoding="utf-8") as f:
        f.write(text)
