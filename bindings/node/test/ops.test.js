'use strict';
// Registry ops through ts.ops and the generated Tensor methods, checked against references
// computed here in JS: random non-zero inputs, odd shapes, broadcasting, non-contiguous views,
// several dtypes, keyword options and defaults, several outputs, in-place ops, errors.
const test = require('node:test');
const assert = require('node:assert/strict');
const { ts, randomValues, randomInts, prod, broadcastMap, matmulRef, assertClose, values } = require('./helpers');

/** A float64 tensor of random values and its data, for references. */
function rand64(shape, seed) {
  const data = randomValues(prod(shape), seed);
  return { t: ts.tensor(Float64Array.from(data), shape), data, shape };
}

test('every registry op is a function of ts.ops and ts.opsAsync, with its schema', () => {
  const list = ts.native.listOps();
  assert.ok(list.length > 200, `${list.length} ops`);
  for (const meta of list) {
    const f = ts.ops[meta.name];
    assert.equal(typeof f, 'function', meta.name);
    assert.equal(f.schema, meta.schema);
    assert.equal(f.numOutputs, meta.numOutputs);
    assert.equal(typeof ts.opsAsync[meta.name], 'function');
  }
  assert.match(ts.ops.add.schema, /^add\(Tensor self, Tensor other, Scalar alpha=1\) -> Tensor$/);
  assert.deepEqual(
    ts.ops.add.args.map((a) => [a.name, a.kind, a.hasDefault]),
    [
      ['self', 'Tensor', false],
      ['other', 'Tensor', false],
      ['alpha', 'Scalar', true],
    ],
  );
  // Methods: ops whose first argument is `Tensor self`; not internal ones, not `where`.
  for (const m of ['add', 'sub', 'mul', 'div', 'matmul', 'sum', 'mean', 'relu', 'softmax', 'add_', 'max_dim']) {
    assert.equal(typeof ts.Tensor.prototype[m], 'function', m);
  }
  assert.equal(ts.Tensor.prototype._fill, undefined);
  assert.equal(ts.Tensor.prototype.cat, undefined);
});

test('plugin ops live under their namespace (example::gemm_bias_act)', (t) => {
  if (!ts.ops['example::gemm_bias_act']) {
    t.skip('the example_gemm plugin is not loaded (TESSERA_PLUGIN_PATH)');
    return;
  }
  assert.equal(ts.ops.example.gemm_bias_act, ts.ops['example::gemm_bias_act']);
  const a = rand64([3, 5], 1);
  const b = rand64([5, 4], 2);
  const bias = rand64([4], 3);
  const mm = matmulRef(a.data, b.data, 3, 5, 4);
  const ref = Array.from(mm, (v, i) => Math.max(0, v + bias.data[i % 4]));
  const out = ts.ops.example.gemm_bias_act(a.t.to('float32'), b.t.to('float32'), { bias: bias.t.to('float32'), act: 'relu' });
  assertClose(values(out), ref, { rtol: 1e-4, atol: 1e-4, what: 'gemm_bias_act' });
  // Defaults: no bias, no activation.
  assertClose(values(ts.ops.example.gemm_bias_act(a.t.to('float32'), b.t.to('float32'))), mm, { rtol: 1e-4, atol: 1e-4 });
});

test('binary ops broadcast odd shapes, float32 and float64, with alpha by keyword', () => {
  const a = rand64([3, 1, 5], 10);
  const b = rand64([4, 1], 11);
  const ops = {
    add: (x, y) => x + y,
    sub: (x, y) => x - y,
    mul: (x, y) => x * y,
    div: (x, y) => x / y,
    maximum: (x, y) => Math.max(x, y),
    atan2: (x, y) => Math.atan2(x, y),
  };
  for (const [name, f] of Object.entries(ops)) {
    const ref = broadcastMap([a, b], f);
    const r64 = ts.ops[name](a.t, b.t);
    assert.deepEqual(r64.shape, [3, 4, 5], name);
    assert.equal(r64.dtype, 'float64');
    assertClose(values(r64), ref.data, { rtol: 1e-12, what: `${name} float64` });
    const r32 = a.t.to('float32')[name](b.t.to('float32'));
    assert.equal(r32.dtype, 'float32');
    assertClose(values(r32), ref.data, { rtol: 1e-5, atol: 1e-5, what: `${name} float32` });
  }
  // 16-bit floats: inputs rounded to the dtype, results within its precision.
  for (const [dt, rtol] of [
    ['float16', 2e-3],
    ['bfloat16', 1.6e-2],
  ]) {
    const ah = a.t.to(dt);
    const bh = b.t.to(dt);
    const r = ah.mul(bh);
    assert.equal(r.dtype, dt);
    const ref = broadcastMap([{ data: values(ah), shape: a.shape }, { data: values(bh), shape: b.shape }], (x, y) => x * y);
    assertClose(values(r), ref.data, { rtol, atol: 1e-3, what: `mul ${dt}` });
  }
  assertClose(values(ts.ops.add(a.t, b.t, { alpha: 0.5 })), broadcastMap([a, b], (x, y) => x + 0.5 * y).data, { rtol: 1e-12 });
  assertClose(values(a.t.sub(b.t, 3)), broadcastMap([a, b], (x, y) => x - 3 * y).data, { rtol: 1e-12 });
});

test('integer dtypes stay integers with integer scalars and alpha; a fraction promotes', () => {
  for (const [Ctor, dtype] of [
    [Int32Array, 'int32'],
    [BigInt64Array, 'int64'],
  ]) {
    const xs = randomInts(7, 20);
    const ys = randomInts(7, 21);
    const conv = dtype === 'int64' ? BigInt : Number;
    const x = ts.tensor(Ctor.from(xs, conv));
    const y = ts.tensor(Ctor.from(ys, conv));
    const r = x.add(y, { alpha: 2 });
    assert.equal(r.dtype, dtype);
    assert.deepEqual(r.tolist(), xs.map((v, i) => v + 2 * ys[i]));
    assert.equal(x.mul(3).dtype, dtype);
    assert.deepEqual(x.mul(3).tolist(), xs.map((v) => 3 * v));
    assert.equal(x.mul(0.5).dtype, 'float32');
    assert.equal(x.gt(0).dtype, 'bool');
    assert.deepEqual(x.gt(0).tolist(), xs.map((v) => v > 0));
  }
});

test('non-contiguous inputs (transposed, sliced, expanded) give the same values', () => {
  const a = rand64([5, 7], 30);
  const b = rand64([7, 5], 31);
  const at = a.t.transpose(0, 1); // [7, 5], not contiguous
  assert.equal(at.isContiguous, false);
  const atData = [];
  for (let i = 0; i < 7; i++) for (let j = 0; j < 5; j++) atData.push(a.data[j * 7 + i]);
  assertClose(values(at.mul(b.t)), atData.map((v, i) => v * b.data[i]), { rtol: 1e-12 });
  const sl = b.t.slice(1, 0, 5, 2); // every other column: [7, 3]
  const slData = [];
  for (let i = 0; i < 7; i++) for (let j = 0; j < 5; j += 2) slData.push(b.data[i * 5 + j]);
  assertClose(values(sl.exp()), slData.map(Math.exp), { rtol: 1e-12 });
  assertClose(values(at.sum(0)), Array.from({ length: 5 }, (_, j) => a.data.slice(j * 7, j * 7 + 7).reduce((s, v) => s + v)), {
    rtol: 1e-12,
  });
});

test('unary ops against Math', () => {
  const x = rand64([2, 3, 7], 40);
  const fns = {
    relu: (v) => Math.max(0, v),
    tanh: Math.tanh,
    exp: Math.exp,
    sigmoid: (v) => 1 / (1 + Math.exp(-v)),
    abs: Math.abs,
    neg: (v) => -v,
    sin: Math.sin,
    square: (v) => v * v,
  };
  for (const [name, f] of Object.entries(fns)) assertClose(values(x.t[name]()), x.data.map(f), { rtol: 1e-12, atol: 1e-14, what: name });
  assertClose(values(x.t.abs().log()), x.data.map((v) => Math.log(Math.abs(v))), { rtol: 1e-12 });
  assertClose(values(x.t.abs().sqrt()), x.data.map((v) => Math.sqrt(Math.abs(v))), { rtol: 1e-12 });
});

test('reductions: defaults, dims as a list or one int, keepdim, dtype', () => {
  const x = rand64([3, 4, 5], 50);
  const total = x.data.reduce((a, b) => a + b);
  const s = x.t.sum();
  assert.deepEqual(s.shape, []);
  assertClose([s.item()], [total], { rtol: 1e-12 });
  const s1 = x.t.sum([1]);
  assert.deepEqual(s1.shape, [3, 5]);
  const ref1 = [];
  for (let i = 0; i < 3; i++)
    for (let k = 0; k < 5; k++) {
      let acc = 0;
      for (let j = 0; j < 4; j++) acc += x.data[i * 20 + j * 5 + k];
      ref1.push(acc);
    }
  assertClose(values(s1), ref1, { rtol: 1e-12 });
  assert.deepEqual(x.t.sum(1).shape, [3, 5], 'one int for int[]');
  assert.deepEqual(x.t.sum(-1, true).shape, [3, 4, 1], 'positional keepdim');
  assert.deepEqual(x.t.sum({ dim: [0, 2], keepdim: true }).shape, [1, 4, 1]);
  assertClose(values(x.t.mean(1)), ref1.map((v) => v / 4), { rtol: 1e-12 });
  assert.equal(x.t.to('float32').sum({ dtype: 'float64' }).dtype, 'float64', 'ScalarType by name');
  const i32 = ts.tensor(new Int32Array([3, -4, 5]));
  assert.equal(i32.sum().item(), 4);
  assert.deepEqual(ts.ops.amax(x.t, [0, 1]).shape, [5]);
});

test('matmul: odd sizes, batched with broadcasting, float32 and float64', () => {
  const a = rand64([5, 7], 60);
  const b = rand64([7, 3], 61);
  const ref = matmulRef(a.data, b.data, 5, 7, 3);
  assertClose(values(a.t.matmul(b.t)), ref, { rtol: 1e-12, what: 'matmul f64' });
  assertClose(values(ts.ops.mm(a.t.to('float32'), b.t.to('float32'))), ref, { rtol: 1e-4, atol: 1e-4, what: 'mm f32' });
  const batch = rand64([2, 5, 7], 62);
  const out = batch.t.matmul(b.t);
  assert.deepEqual(out.shape, [2, 5, 3]);
  const ref2 = [...matmulRef(batch.data.slice(0, 35), b.data, 5, 7, 3), ...matmulRef(batch.data.slice(35), b.data, 5, 7, 3)];
  assertClose(values(out), ref2, { rtol: 1e-12 });
});

test('softmax and log_softmax along a dim', () => {
  const x = rand64([4, 6], 70);
  const ref = [];
  for (let i = 0; i < 4; i++) {
    const row = x.data.slice(i * 6, i * 6 + 6);
    const m = Math.max(...row);
    const z = row.reduce((s, v) => s + Math.exp(v - m), 0);
    for (const v of row) ref.push(Math.exp(v - m) / z);
  }
  assertClose(values(x.t.softmax(1)), ref, { rtol: 1e-12 });
  assertClose(values(ts.ops.log_softmax(x.t, { dim: -1 })), ref.map(Math.log), { rtol: 1e-12 });
});

test('keyword options, camelCase names and schema defaults', () => {
  const x = rand64([3, 7], 80);
  // erf by Abramowitz-Stegun 7.1.26 (|error| < 1.5e-7).
  const erf = (v) => {
    const s = Math.sign(v);
    const a = Math.abs(v);
    const t = 1 / (1 + 0.3275911 * a);
    const y = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-a * a);
    return s * y;
  };
  assertClose(values(x.t.gelu()), x.data.map((v) => 0.5 * v * (1 + erf(v / Math.SQRT2))), { atol: 1e-6, what: "gelu default 'none'" });
  const k = Math.sqrt(2 / Math.PI);
  assertClose(values(x.t.gelu({ approximate: 'tanh' })), x.data.map((v) => 0.5 * v * (1 + Math.tanh(k * (v + 0.044715 * v ** 3)))), {
    rtol: 1e-10,
    what: 'gelu tanh',
  });
  assertClose(values(x.t.leaky_relu()), x.data.map((v) => (v > 0 ? v : 0.01 * v)), { rtol: 1e-12, what: 'default slope' });
  assertClose(values(x.t.leaky_relu({ negativeSlope: 0.2 })), x.data.map((v) => (v > 0 ? v : 0.2 * v)), { rtol: 1e-12 });
  assertClose(values(x.t.clamp({ min: -0.5 })), x.data.map((v) => Math.max(-0.5, v)), { rtol: 1e-12, what: 'clamp min only' });
  assertClose(values(x.t.clamp(null, 0.5)), x.data.map((v) => Math.min(0.5, v)), { rtol: 1e-12, what: 'clamp null min' });
  // A hole before a keyword takes the default of the skipped argument (sort's dim = -1).
  const [sv] = x.t.sort({ descending: true });
  assert.deepEqual(sv.tolist()[0], Array.from(x.data.slice(0, 7)).sort((p, q) => q - p));
});

test('ops with several outputs return arrays', () => {
  const x = rand64([4, 5], 90);
  const [vals, idx] = ts.ops.max_dim(x.t, 1);
  assert.equal(idx.dtype, 'int64');
  for (let i = 0; i < 4; i++) {
    const row = x.data.slice(i * 5, i * 5 + 5);
    const m = Math.max(...row);
    assert.equal(vals.tolist()[i], m);
    assert.equal(idx.tolist()[i], row.indexOf(m));
  }
  const [top, topIdx] = x.t.topk(2, { dim: 0, largest: false });
  assert.deepEqual(top.shape, [2, 5]);
  for (let j = 0; j < 5; j++) {
    const col = [0, 1, 2, 3].map((i) => x.data[i * 5 + j]);
    const sorted = [...col].sort((p, q) => p - q);
    assert.deepEqual([top.tolist()[0][j], top.tolist()[1][j]], sorted.slice(0, 2));
    assert.equal(col[topIdx.tolist()[0][j]], sorted[0]);
  }
  const [mn, mx] = ts.ops.aminmax(x.t);
  assert.equal(mn.item(), Math.min(...x.data));
  assert.equal(mx.item(), Math.max(...x.data));
});

test('in-place ops write their argument and return the same object', () => {
  const buf = Float32Array.from(randomValues(6, 100));
  const orig = Array.from(buf);
  const t = ts.tensor(buf, [2, 3]);
  const v0 = t.version;
  const r = t.add_(ts.ones([3]), { alpha: 2 });
  assert.equal(r, t);
  assert.ok(t.version > v0, 'the version counter moved');
  assertClose(buf, orig.map((v) => v + 2), { rtol: 1e-6, what: 'the shared buffer saw the write' });
  assert.equal(ts.ops.relu_(t), t);
  assert.ok(Array.from(buf).every((v) => v >= 0));
});

test('Tensor[] arguments, ScalarType and Device arguments, Scalars of every kind', () => {
  const a = rand64([2, 3], 110);
  const b = rand64([2, 3], 111);
  const c = ts.ops.cat([a.t, b.t], { dim: 1 });
  assert.deepEqual(c.shape, [2, 6]);
  assert.deepEqual(c.tolist()[1], [...a.data.slice(3, 6), ...b.data.slice(3, 6)]);
  assert.deepEqual(ts.ops.stack([a.t, b.t]).shape, [2, 2, 3]);
  const f = ts.ops.full([2, 2], 7, 'int16', 'cpu:0');
  assert.equal(f.dtype, 'int16');
  assert.equal(f.device, 'cpu:0');
  assert.equal(ts.ops.full([1], true).dtype, 'bool');
  assert.equal(ts.ops.full([1], 2).dtype, 'int64');
  assert.equal(ts.ops.full([1], 2.5).dtype, 'float32');
  const w = ts.ops.where(a.t.gt(0), a.t, b.t);
  assert.deepEqual(values(w), Array.from(a.data, (v, i) => (v > 0 ? v : b.data[i])));
  // TypedArrays passed for Tensor arguments become tensors.
  assertClose(values(ts.ops.mul(a.t, new Float64Array([1, 2, 3]))), a.data.map((v, i) => v * ((i % 3) + 1)), { rtol: 1e-12 });
  const idx = ts.ops.index_select(a.t, 1, new BigInt64Array([2n, 0n]));
  assert.deepEqual(idx.tolist(), [
    [a.data[2], a.data[0]],
    [a.data[5], a.data[3]],
  ]);
});

test('errors: the core reports with a code and names the op; JS type mistakes are TypeErrors', () => {
  const a = ts.randn([2, 3]);
  const b = ts.randn([4, 5]);
  assert.throws(
    () => a.matmul(b),
    (e) => e instanceof Error && !(e instanceof TypeError) && e.code === 'INVALID_ARGUMENT' && /^matmul:/.test(e.message) && /\[2, 3\]/.test(e.message),
  );
  assert.throws(() => ts.ops.add(a, ts.randn([3, 2])), (e) => e.code === 'INVALID_ARGUMENT' && /^add:/.test(e.message));
  assert.throws(() => a.sum(5), (e) => e.code === 'INVALID_ARGUMENT' && /^sum:/.test(e.message));
  assert.throws(() => ts.ops.add(a, 'x'), (e) => e instanceof TypeError && /add: argument 'other'/.test(e.message));
  assert.throws(() => ts.ops.softmax(a), (e) => e instanceof TypeError && /missing required argument 'dim'/.test(e.message));
  assert.throws(() => ts.ops.softmax(a, 1.5), (e) => e instanceof TypeError && /'dim' expects an integer/.test(e.message));
  assert.throws(() => ts.ops.add(a, a, { alhpa: 2 }), (e) => e instanceof TypeError && /unknown argument 'alhpa'/.test(e.message));
  assert.throws(() => ts.ops.add(a, a, 1, { alpha: 2 }), (e) => e instanceof TypeError && /given twice/.test(e.message));
  assert.throws(() => ts.ops.relu(a, a), (e) => e instanceof TypeError && /at most 1/.test(e.message));
  assert.throws(() => ts.ops.add(null, a), (e) => e instanceof TypeError && /'self'/.test(e.message));
  assert.throws(() => ts.ops.sum(a, { dtype: 'complex' }), (e) => e instanceof TypeError && /unknown dtype/.test(e.message));
  assert.throws(() => ts.ops.mul(a, [1, 2, 3]), TypeError);
  assert.throws(() => ts.ops.gelu(a, { approximate: 'cubic' }), (e) => e.code === 'INVALID_ARGUMENT' && /gelu/.test(e.message));
});
