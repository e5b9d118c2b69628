"""Writes a seed corpus of small valid safetensors files into the directory given (tools/fuzz.sh
calls it): every dtype, a 0-d and an empty tensor, metadata, entries stored out of header order.
Standard library only, so any python3 runs it."""
import json
import os
import struct
import sys

ITEMSIZE = {"BOOL": 1, "U8": 1, "I8": 1, "I16": 2, "I32": 4, "I64": 8, "F16": 2, "BF16": 2, "F32": 4, "F64": 8}


def write(path, entries, metadata=None, reverse=False):
    """entries: (name, dtype, shape); data is a byte pattern (0/1 for BOOL)."""
    header, blobs, offset = {}, [], 0
    order = list(reversed(entries)) if reverse else entries
    for name, dtype, shape in order:
        n = ITEMSIZE[dtype]
        for s in shape:
            n *= s
        blob = bytes((i % 2) if dtype == "BOOL" else (i * 37 + 11) % 256 for i in range(n))
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + n]}
        blobs.append(blob)
        offset += n
    if metadata is not None:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def main(out):
    os.makedirs(out, exist_ok=True)
    write(os.path.join(out, "empty.safetensors"), [])
    write(os.path.join(out, "all_dtypes.safetensors"), [(f"t_{d}", d, [2, 3]) for d in ITEMSIZE])
    write(os.path.join(out, "odd_shapes.safetensors"),
          [("scalar", "F64", []), ("empty", "F32", [3, 0]), ("row", "I64", [1, 5]), ("mask", "BOOL", [7])],
          metadata={"format": "pt", "step": "17"}, reverse=True)
    write(os.path.join(out, "metadata_only.safetensors"), [], metadata={"z": "1", "a": "h\u00e9"})


if __name__ == "__main__":
    main(sys.argv[1])
