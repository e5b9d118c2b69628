#!/usr/bin/env python3
"""Exports the models tests/onnx imports, with reference inputs and outputs from PyTorch.

    export_models.py OUT_DIR

Writes OUT_DIR/NAME.onnx, NAME.in<k>.npy (the inputs, random, with odd sizes and another batch
size than the export's where the batch is dynamic) and NAME.out<k>.npy (PyTorch's outputs for
them), then the models the importer must refuse (built with onnx.helper), then OUT_DIR/stamp.
Exit 77 (ctest: skipped), with the reason in OUT_DIR/unavailable.txt, when this interpreter
lacks torch or onnx (Debian's python3-torch and python3-onnx, for /usr/bin/python3).
"""
import math
import os
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
try:
    import numpy as np
    import onnx
    import torch
    from onnx import TensorProto, helper
except ImportError as e:
    reason = f"{sys.executable} cannot import {e.name} (install python3-torch and python3-onnx: tools/setup-deps.sh)"
    with open(os.path.join(out, "unavailable.txt"), "w") as f:
        f.write(reason + "\n")
    print("onnx models: skipped: " + reason)
    sys.exit(77)

torch.manual_seed(0)
np.random.seed(0)


def export(name, model, example, inputs, opset, dynamic=None, input_names=None, output_names=None):
    """Exports model traced on `example`, and saves torch's outputs for `inputs`."""
    model.eval()
    input_names = input_names or [f"in{k}" for k in range(len(example))]
    with torch.no_grad():
        outs = model(*inputs)
    outs = outs if isinstance(outs, tuple) else (outs,)
    output_names = output_names or [f"out{k}" for k in range(len(outs))]
    torch.onnx.export(model, tuple(example), os.path.join(out, name + ".onnx"), opset_version=opset,
                      input_names=input_names, output_names=output_names, dynamic_axes=dynamic or {})
    for k, t in enumerate(inputs):
        np.save(os.path.join(out, f"{name}.in{k}.npy"), t.numpy())
    for k, t in enumerate(outs):
        np.save(os.path.join(out, f"{name}.out{k}.npy"), t.numpy())


# ---- MLP: Gemm, Relu, Sigmoid, Tanh; a dynamic batch (exported with 4, run with 3) -----------
class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(13, 32)
        self.fc2 = torch.nn.Linear(32, 17)
        self.fc3 = torch.nn.Linear(17, 7)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        h = torch.sigmoid(self.fc2(h)) * 2.0 - 0.5
        return torch.tanh(self.fc3(h))


export("mlp", MLP(), [torch.randn(4, 13)], [torch.randn(3, 13)], 13,
       dynamic={"in0": {0: "batch"}, "out0": {0: "batch"}})


# ---- CNN: Conv (padding, stride, groups, dilation), BatchNorm (eval), Relu, MaxPool,
# AveragePool, GlobalAveragePool, Flatten, Gemm ----------------------------------------------
class CNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = torch.nn.BatchNorm2d(8)
        self.conv2 = torch.nn.Conv2d(8, 12, 3, stride=2, padding=(1, 2), groups=4, dilation=(1, 2))
        self.bn2 = torch.nn.BatchNorm2d(12)
        self.pool = torch.nn.MaxPool2d(2)
        self.avg = torch.nn.AvgPool2d(3, stride=1, padding=1)
        self.gap = torch.nn.AdaptiveAvgPool2d(1)
        self.fc = torch.nn.Linear(12, 5)
        # Running statistics that are not the identity, so BatchNorm's eval formula is exercised.
        for bn in (self.bn1, self.bn2):
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 2.0)
            bn.weight.data.uniform_(0.5, 1.5)
            bn.bias.data.uniform_(-0.2, 0.2)

    def forward(self, x):
        x = self.pool(torch.relu(self.bn1(self.conv1(x))))
        x = self.avg(torch.relu(self.bn2(self.conv2(x))))
        return self.fc(torch.flatten(self.gap(x), 1))


# PyTorch folds eval BatchNorm into Conv by default (training=EVAL): keep them apart so the
# importer sees BatchNormalization.
def export_cnn():
    model = CNN().eval()
    x = torch.randn(2, 3, 17, 15)
    with torch.no_grad():
        y = model(x)
    torch.onnx.export(model, (x,), os.path.join(out, "cnn.onnx"), opset_version=13, input_names=["in0"],
                      output_names=["out0"], training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False)
    np.save(os.path.join(out, "cnn.in0.npy"), x.numpy())
    np.save(os.path.join(out, "cnn.out0.npy"), y.numpy())


export_cnn()


# ---- a small transformer block: Gather (embedding), LayerNormalization (opset 17), MatMul,
# Softmax, GELU through Erf, Reshape/Transpose of the heads, a causal mask (Where); dynamic batch
class Block(torch.nn.Module):
    def __init__(self, vocab=23, d=16, heads=2, seq=7):
        super().__init__()
        self.heads, self.d = heads, d
        self.tok = torch.nn.Embedding(vocab, d)
        self.pos = torch.nn.Parameter(torch.randn(seq, d) * 0.1)
        self.ln1 = torch.nn.LayerNorm(d)
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.proj = torch.nn.Linear(d, d)
        self.ln2 = torch.nn.LayerNorm(d)
        self.fc1 = torch.nn.Linear(d, 4 * d)
        self.fc2 = torch.nn.Linear(4 * d, d)
        self.head = torch.nn.Linear(d, vocab)
        self.register_buffer("mask", torch.tril(torch.ones(seq, seq, dtype=torch.bool)))
        for ln in (self.ln1, self.ln2):
            ln.weight.data.uniform_(0.5, 1.5)
            ln.bias.data.uniform_(-0.2, 0.2)

    def forward(self, idx):
        b, t = idx.shape
        x = self.tok(idx) + self.pos[:t]
        h = self.ln1(x)
        q, k, v = self.qkv(h).split(self.d, dim=-1)
        hd = self.d // self.heads
        q = q.reshape(b, t, self.heads, hd).transpose(1, 2)
        k = k.reshape(b, t, self.heads, hd).transpose(1, 2)
        v = v.reshape(b, t, self.heads, hd).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(hd)
        att = att.masked_fill(~self.mask[:t, :t], float("-inf"))
        y = torch.softmax(att, dim=-1) @ v
        y = y.transpose(1, 2).reshape(b, t, self.d)
        x = x + self.proj(y)
        x = x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(x))))
        return self.head(x)


export("transformer", Block(), [torch.randint(0, 23, (2, 7))], [torch.randint(0, 23, (3, 7))], 17,
       dynamic={"in0": {0: "batch"}, "out0": {0: "batch"}})


# The same block with the sequence length dynamic too (exported with 7 tokens, run with 5): the
# head reshapes and the position/mask slices follow two symbols.
export("transformer_seq", Block(), [torch.randint(0, 23, (2, 7))], [torch.randint(0, 23, (3, 5))], 17,
       dynamic={"in0": {0: "batch", 1: "seq"}, "out0": {0: "batch", 1: "seq"}})


# PyTorch's own TransformerEncoderLayer (nn.MultiheadAttention's export: Shape chains over a
# dynamic batch and length, head reshapes, Softmax, LayerNormalization), exported with 2x5 and
# run with 3x7.
class Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = torch.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)

    def forward(self, x):
        return self.enc(x)


export("encoder", Encoder(), [torch.randn(2, 5, 16)], [torch.randn(3, 7, 16)], 17,
       dynamic={"in0": {0: "b", 1: "t"}, "out0": {0: "b", 1: "t"}})


# A MobileNet-like block: strided Conv, HardSwish (HardSigmoid and Mul), depthwise Conv, ReLU6 (Clip), squeeze-excite
# (GlobalAveragePool, 1x1 Convs, Sigmoid, Mul), nearest and bilinear Upsample (Resize), Concat,
# BatchNorm, LeakyRelu, ReduceMean, Flatten/Slice, LogSoftmax; two outputs.
class Mobile(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.dw = torch.nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.se1 = torch.nn.Conv2d(8, 4, 1)
        self.se2 = torch.nn.Conv2d(4, 8, 1)
        self.up = torch.nn.Upsample(scale_factor=2, mode="nearest")
        self.up2 = torch.nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
        self.bn = torch.nn.BatchNorm2d(16)
        self.bn.running_mean.uniform_(-0.5, 0.5)
        self.bn.running_var.uniform_(0.5, 2.0)

    def forward(self, x):
        F = torch.nn.functional
        h = F.hardswish(self.c1(x))
        d = F.relu6(self.dw(h))
        d = d * torch.sigmoid(self.se2(torch.relu(self.se1(F.adaptive_avg_pool2d(d, 1)))))
        u = F.leaky_relu(self.bn(torch.cat([self.up(d), self.up2(h)], dim=1)), 0.1)
        return u.mean(dim=(2, 3)), F.log_softmax(u.flatten(1)[:, :10], dim=1)


export("mobile", Mobile(), [torch.randn(2, 3, 16, 12)], [torch.randn(2, 3, 16, 12)], 13)


# The MLP again with its weights in a separate file (ONNX external data), as large models are saved.
mlp_proto = onnx.load(os.path.join(out, "mlp.onnx"))
onnx.save_model(mlp_proto, os.path.join(out, "mlp_external.onnx"), save_as_external_data=True,
                all_tensors_to_one_file=True, location="mlp_external.weights", size_threshold=0)


# ---- models the importer must refuse -------------------------------------------------------
def save(name, nodes, inputs, outputs, initializers=(), opset=13):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, name + ".onnx"))


f32 = TensorProto.FLOAT


x4 = helper.make_tensor_value_info("x", f32, [1, 4, 5, 5])
# An op the importer does not map (Unique), after one it does.
save("unknown_op", [helper.make_node("Relu", ["x"], ["r"], name="relu0"),
                    helper.make_node("Unique", ["r"], ["y"], name="my_unique")],
     [x4], [helper.make_tensor_value_info("y", f32, ["n"])])
# An attribute the importer does not map (Constant's value_string: Tessera has no strings),
# and an attribute value it refuses (Resize's exclude_outside=1).
save("bad_attr", [helper.make_node("Constant", [], ["y"], name="const_str", value_string="text")],
     [], [helper.make_tensor_value_info("y", TensorProto.STRING, [])])
save("bad_attr_value", [helper.make_node("Resize", ["x", "", "scales"], ["y"], name="resize_x", mode="linear",
                                         exclude_outside=1)],
     [x4], [helper.make_tensor_value_info("y", f32, [1, 4, 10, 10])],
     [helper.make_tensor("scales", f32, [4], [1, 1, 2, 2])])
# A Reshape whose target is computed from tensor values at run time.
shape_in = helper.make_tensor_value_info("s", TensorProto.INT64, [2])
save("runtime_reshape", [helper.make_node("Abs", ["s"], ["t"], name="abs_target"),
                         helper.make_node("Reshape", ["x", "t"], ["y"], name="reshape_dyn")],
     [x4, shape_in], [helper.make_tensor_value_info("y", f32, ["a", "b"])])

# Names outside the graph text's charset, two of which sanitize alike, and a dim_param that is
# also a value name: the importer must keep them apart. Reference from NumPy.
a = np.random.randn(3, 5).astype(np.float32)
b = np.random.randn(5).astype(np.float32)
xin = helper.make_tensor_value_info("n", f32, ["n", 5])
save("names", [helper.make_node("Add", ["n", "w:0"], ["sum/0"], name="add:0"),
               helper.make_node("Mul", ["sum/0", "w/0"], ["out 0"], name="mul 0")],
     [xin], [helper.make_tensor_value_info("out 0", f32, ["n", 5])],
     [helper.make_tensor("w:0", f32, [5], b.tolist()), helper.make_tensor("w/0", f32, [3, 5], a.flatten().tolist())])
xv = np.random.randn(3, 5).astype(np.float32)
np.save(os.path.join(out, "names.in0.npy"), xv)
np.save(os.path.join(out, "names.out0.npy"), (xv + b) * a)

# Ops over a dynamic batch where the importer picks run-time sizes (opset 11: Softmax over the
# flattened trailing dims, Unsqueeze axes as an attribute): Softmax, Flatten, Slice with a
# negative step, Gather along axis 1 with 2-D indices, Expand of a reduced dim, Reshape [0, -1],
# Unsqueeze of two axes, and Gemm with transA, alpha, beta and a 2-D C. Reference from NumPy.
xd = helper.make_tensor_value_info("x", f32, ["b", 3, 4])
g_idx = np.array([[0, 2], [1, 1]], dtype=np.int64)
g_a = np.random.randn(5, 3).astype(np.float32)
g_b = np.random.randn(5, 4).astype(np.float32)
g_c = np.random.randn(3, 4).astype(np.float32)
ints = lambda name, v: helper.make_tensor(name, TensorProto.INT64, [len(v)], v)
outs = {"soft": ["b", 3, 4], "flat": ["b3", 4], "sliced": ["b", 2, 4], "gathered": ["b", 2, 2, 4],
        "expanded": ["b", 3, 5], "reshaped": ["b", 12], "unsq": [1, "b", 3, 1, 4], "gemm": [3, 4]}
save("dynamic_ops", [
    helper.make_node("Softmax", ["x"], ["soft"], axis=1),
    helper.make_node("Flatten", ["x"], ["flat"], axis=2),
    helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["sliced"]),
    helper.make_node("Gather", ["x", "idx"], ["gathered"], axis=1),
    helper.make_node("ReduceMax", ["x"], ["rmax"], axes=[2], keepdims=1),
    helper.make_node("Expand", ["rmax", "eshape"], ["expanded"]),
    helper.make_node("Reshape", ["x", "rshape"], ["reshaped"]),
    helper.make_node("Unsqueeze", ["x"], ["unsq"], axes=[0, 3]),
    helper.make_node("Gemm", ["ga", "gb", "gc"], ["gemm"], transA=1, alpha=0.5, beta=2.0)],
    [xd], [helper.make_tensor_value_info(n, f32, d) for n, d in outs.items()],
    [ints("starts", [-1, 0]), ints("ends", [-1000, 3]), ints("axes", [2, 1]), ints("steps", [-1, 2]),
     helper.make_tensor("idx", TensorProto.INT64, [2, 2], g_idx.flatten().tolist()), ints("eshape", [1, 1, 5]),
     ints("rshape", [0, -1]), helper.make_tensor("ga", f32, [5, 3], g_a.flatten().tolist()),
     helper.make_tensor("gb", f32, [5, 4], g_b.flatten().tolist()),
     helper.make_tensor("gc", f32, [3, 4], g_c.flatten().tolist())], opset=11)
xv = np.random.randn(5, 3, 4).astype(np.float32)
flat2 = xv.reshape(5, 12)
soft = np.exp(flat2 - flat2.max(1, keepdims=True))
refs = [(soft / soft.sum(1, keepdims=True)).reshape(5, 3, 4), xv.reshape(15, 4), xv[:, 0:3:2, ::-1],
        np.take(xv, g_idx, axis=1), np.broadcast_to(xv.max(2, keepdims=True), (5, 3, 5)), xv.reshape(5, 12),
        np.expand_dims(xv, (0, 3)), 0.5 * g_a.T @ g_b + 2.0 * g_c]
np.save(os.path.join(out, "dynamic_ops.in0.npy"), xv)
for k, r in enumerate(refs):
    np.save(os.path.join(out, f"dynamic_ops.out{k}.npy"), np.ascontiguousarray(r).astype(np.float32))

with open(os.path.join(out, "stamp"), "w") as f:
    f.write("ok\n")
print("onnx models: exported to " + out)
