'use strict';
// Tensors from and to JS data: dtypes, shapes, zero-copy in both directions, views, devices,
// factories, seeds and files.
// TESSERA_CPU_DEVICES=2 gives a second (virtual) cpu device for the device-move tests; set
// before the addon loads, since the runtime reads it when it is created.
process.env.TESSERA_CPU_DEVICES = process.env.TESSERA_CPU_DEVICES || '2';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { ts, gc, randomValues, randomInts, assertClose, values } = require('./helpers');

test('TypedArrays of every dtype Tessera shares with JS round-trip, with their dtype', () => {
  const cases = [
    [Float32Array, 'float32'],
    [Float64Array, 'float64'],
    [Int8Array, 'int8'],
    [Uint8Array, 'uint8'],
    [Int16Array, 'int16'],
    [Int32Array, 'int32'],
  ];
  for (const [Ctor, dtype] of cases) {
    const src = Ctor.from(randomInts(15, 3), Number);
    const t = ts.tensor(src, [3, 5]);
    assert.equal(t.dtype, dtype);
    assert.deepEqual(t.shape, [3, 5]);
    assert.equal(t.device, 'cpu:0');
    assert.deepEqual(Array.from(t.toTypedArray()), Array.from(src));
    assert.ok(t.toTypedArray() instanceof Ctor, `${dtype} gives a ${Ctor.name}`);
  }
  const big = BigInt64Array.from(randomInts(7, 4), BigInt);
  const tb = ts.tensor(big);
  assert.equal(tb.dtype, 'int64');
  assert.deepEqual(tb.tolist(), Array.from(big, Number));
  assert.ok(tb.toTypedArray() instanceof BigInt64Array);
});

test('a TypedArray of the same dtype is shared: writes on either side are seen by the other', () => {
  const buf = Float32Array.from(randomValues(12, 5));
  const t = ts.tensor(buf, [3, 4]);
  assert.equal(t.dataPtr, ts.tensor(buf, [3, 4]).dataPtr, 'two tensors over one array share its memory');
  buf[5] = 42.5;
  assert.equal(t.tolist()[1][1], 42.5, 'a write through the TypedArray is seen by the tensor');
  t.mul_(2);
  assert.equal(buf[5], 85, 'an in-place op on the tensor is seen through the TypedArray');
  const view = t.toTypedArray();
  view[0] = -3.25;
  assert.equal(buf[0], -3.25, 'toTypedArray over a contiguous tensor is zero-copy');
  assert.equal(t.select(0, 0).select(0, 0).item(), -3.25);
  // A subarray (non-zero byte offset) is shared from its own first element.
  const sub = buf.subarray(4, 8);
  const ts2 = ts.tensor(sub);
  sub[0] = 7;
  assert.equal(ts2.tolist()[0], 7);
});

test('copy: true, another dtype or another device copy instead of sharing', () => {
  const buf = Float64Array.from(randomValues(6, 6));
  const c = ts.tensor(buf, { copy: true });
  const f = ts.tensor(buf, { dtype: 'float32' });
  buf[0] = 1000;
  assert.notEqual(c.tolist()[0], 1000);
  assert.notEqual(f.tolist()[0], 1000);
  assert.equal(f.dtype, 'float32');
  const snapshot = ts.tensor(buf).toTypedArray({ copy: true });
  buf[1] = 2000;
  assert.notEqual(snapshot[1], 2000);
});

test('the TypedArray outlives its last JS reference while a tensor views it', async () => {
  const make = () => ts.tensor(Float64Array.from(randomValues(1000, 7)));
  const t = make();
  const expected = values(t);
  for (let i = 0; i < 5; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
    // Allocate to give the collector something to do.
    for (let j = 0; j < 50; j++) ts.tensor(new Float64Array(1000).fill(j)).sum();
  }
  assert.deepEqual(values(t), expected);
});

test('toTypedArray copies where it cannot share: views, float16, bfloat16', () => {
  const data = randomValues(12, 8);
  const m = ts.tensor(Float32Array.from(data), [3, 4]);
  const mt = m.transpose(0, 1);
  assert.equal(mt.isContiguous, false);
  const flat = mt.toTypedArray();
  const expected = [];
  for (let j = 0; j < 4; j++) for (let i = 0; i < 3; i++) expected.push(Math.fround(data[i * 4 + j]));
  assert.deepEqual(Array.from(flat), expected);
  flat[0] = 99;
  assert.notEqual(m.tolist()[0][0], 99, 'a non-contiguous view is copied');
  for (const dt of ['float16', 'bfloat16']) {
    const h = m.to(dt);
    assert.equal(h.dtype, dt);
    const a = h.toTypedArray();
    assert.ok(a instanceof Float32Array);
    assertClose(a, Array.from(data, Math.fround), { rtol: dt === 'float16' ? 1e-3 : 8e-3, what: dt });
  }
});

test('float8 tensors read back as Float32Array values (exact), float4 pairs refuse', () => {
  // e4m3fn: 0.3 -> 0.3125, -17.5 -> -18, 470 -> NaN (a cast does not saturate); e5m2: -17.5 -> -16.
  const x = ts.tensor(Float32Array.from([0.3, -17.5, 470, 2]), [4]);
  const e4 = x.to('float8_e4m3fn');
  assert.equal(e4.dtype, 'float8_e4m3fn');
  const a = e4.toTypedArray();
  assert.ok(a instanceof Float32Array);
  assert.deepEqual([a[0], a[1], a[3]], [0.3125, -18, 2]);
  assert.ok(Number.isNaN(a[2]));
  assert.deepEqual(Array.from(x.to('float8_e5m2').toTypedArray()).slice(0, 2), [0.3125, -16]);
  assert.deepEqual(Array.from(ts.tensor(Float32Array.from([3]), [1]).to('float8_e8m0fnu').toTypedArray()), [4]);
  assert.throws(() => ts.empty([2], { dtype: 'float4_e2m1fn_x2' }).toTypedArray(), /float4_e2m1fn_x2/);
});

test('float16 and bfloat16 from the raw bits of a Uint16Array, shared', () => {
  const bits = new Uint16Array([0x3c00, 0xc000, 0x3800]); // 1, -2, 0.5 as float16
  const h = ts.tensor(bits, { dtype: 'float16' });
  assert.deepEqual(h.tolist(), [1, -2, 0.5]);
  bits[0] = 0x4200; // 3
  assert.equal(h.tolist()[0], 3);
  const b = ts.tensor(new Uint16Array([0x3f80, 0xc040]), { dtype: 'bfloat16' }); // 1, -3
  assert.deepEqual(b.tolist(), [1, -3]);
});

test('TypedArrays Tessera has no dtype for are converted', () => {
  assert.equal(ts.tensor(new Uint32Array([1, 4000000000])).dtype, 'int64');
  assert.deepEqual(ts.tensor(new Uint32Array([1, 4000000000])).tolist(), [1, 4000000000]);
  assert.deepEqual(ts.tensor(new Uint16Array([65535, 2])).tolist(), [65535, 2]);
});

test('nested arrays, scalars and booleans', () => {
  const t = ts.tensor([
    [1.5, -2],
    [3, 4.25],
    [-5, 6],
  ]);
  assert.deepEqual(t.shape, [3, 2]);
  assert.equal(t.dtype, 'float32');
  assert.deepEqual(t.tolist(), [
    [1.5, -2],
    [3, 4.25],
    [-5, 6],
  ]);
  assert.equal(ts.tensor([1, 2, 3], { dtype: 'int64' }).dtype, 'int64');
  assert.equal(ts.tensor([1n, -2n]).dtype, 'int64');
  const b = ts.tensor([true, false, true]);
  assert.equal(b.dtype, 'bool');
  assert.deepEqual(b.tolist(), [true, false, true]);
  const s = ts.tensor(2.5);
  assert.deepEqual(s.shape, []);
  assert.equal(s.item(), 2.5);
  assert.deepEqual(ts.tensor([[1, 2, 3, 4]], [2, 2]).shape, [2, 2]);
  assert.throws(() => ts.tensor([[1, 2], [3]]), TypeError);
  assert.throws(() => ts.tensor(['a']), TypeError);
  assert.throws(() => ts.tensor(new Uint8Array([0, 2]), { dtype: 'bool' }), { code: 'INVALID_ARGUMENT' });
  assert.throws(() => ts.tensor(new Float32Array(5), [2, 3]), (e) => e.code === 'INVALID_ARGUMENT' && /5/.test(e.message));
  assert.throws(() => ts.tensor([1], { dtype: 'float13' }), TypeError);
});

test('item and tolist of several dtypes; item of many elements is an error', () => {
  assert.equal(ts.tensor(new Int32Array([-7])).item(), -7);
  assert.equal(ts.tensor([true]).item(), true);
  assert.equal(ts.tensor(new BigInt64Array([123n])).item(), 123);
  assert.throws(() => ts.tensor([1, 2]).item(), { code: 'INVALID_ARGUMENT' });
});

test('views share storage; reshape, permute, slice, select, narrow, squeeze, expand', () => {
  const data = randomValues(24, 9);
  const x = ts.tensor(Float64Array.from(data), [2, 3, 4]);
  const p = x.permute(2, 0, 1);
  assert.deepEqual(p.shape, [4, 2, 3]);
  assert.ok(p.sharesStorage(x));
  assert.equal(p.tolist()[3][1][2], data[1 * 12 + 2 * 4 + 3]);
  const s = x.slice(2, 1, 4, 2); // columns 1 and 3
  assert.deepEqual(s.shape, [2, 3, 2]);
  assert.equal(s.tolist()[1][2][1], data[1 * 12 + 2 * 4 + 3]);
  assert.deepEqual(x.select(1, 2).shape, [2, 4]);
  assert.deepEqual(x.narrow(2, 1, 2).shape, [2, 3, 2]);
  assert.deepEqual(x.reshape([6, 4]).shape, [6, 4]);
  assert.deepEqual(x.view(-1).shape, [24]);
  assert.deepEqual(x.unsqueeze(0).squeeze(0).shape, [2, 3, 4]);
  const e = ts.tensor([1, 2, 3]).reshape(3, 1).expand(3, 4);
  assert.deepEqual(e.strides, [1, 0]);
  assert.deepEqual(e.tolist()[2], [3, 3, 3, 3]);
  assert.deepEqual(x.T.shape, [4, 3, 2]);
  assert.equal(x.contiguous(), x, 'contiguous() of a contiguous tensor is the same object');
  assert.throws(() => x.view(5, 5), { code: 'INVALID_ARGUMENT' });
});

test('to(): dtypes and devices, identity when nothing changes', () => {
  const x = ts.tensor(Float32Array.from(randomValues(6, 10)), [2, 3]);
  assert.equal(x.to('float32'), x);
  assert.equal(x.to('float64').dtype, 'float64');
  assert.equal(x.to({ dtype: 'int32' }).dtype, 'int32');
  assert.notEqual(x.to({ copy: true }), x);
  assert.ok(ts.devices().includes('cpu:1'), 'TESSERA_CPU_DEVICES=2 gives cpu:1');
  const y = x.to('cpu:1');
  assert.equal(y.device, 'cpu:1');
  assert.equal(y.mul(2).device, 'cpu:1', 'ops run where their inputs are');
  assertClose(values(y.cpu()), values(x));
  assert.throws(() => x.add(y), (e) => e.code === 'INVALID_ARGUMENT' && /cpu:1/.test(e.message));
  assert.throws(() => x.to('cpu:7'), { code: 'INVALID_ARGUMENT' });
  assert.throws(() => x.to('nodevice'), { code: 'NOT_FOUND' });
  const z = ts.zeros([2, 2], { device: 'cpu:1', dtype: 'float64' });
  assert.equal(z.device, 'cpu:1');
  assert.equal(z.dtype, 'float64');
});

test('factories: zeros, ones, full, arange, rand, randn, empty', () => {
  assert.deepEqual(ts.zeros([2, 3]).tolist(), [
    [0, 0, 0],
    [0, 0, 0],
  ]);
  assert.equal(ts.ones(4).dtype, 'float32');
  assert.deepEqual(ts.full([2], 2.5).tolist(), [2.5, 2.5]);
  assert.equal(ts.full([2], 3, { dtype: 'int32' }).dtype, 'int32');
  assert.deepEqual(ts.arange(4).tolist(), [0, 1, 2, 3]);
  assert.equal(ts.arange(4).dtype, 'int64');
  assert.deepEqual(ts.arange(1, 2, 0.25).tolist(), [1, 1.25, 1.5, 1.75]);
  const r = ts.rand([1000]);
  const v = values(r);
  assert.ok(v.every((x) => x >= 0 && x < 1));
  const n = values(ts.randn([4000], { dtype: 'float64' }));
  const mean = n.reduce((a, b) => a + b) / n.length;
  const sd = Math.sqrt(n.reduce((a, b) => a + (b - mean) ** 2, 0) / n.length);
  assert.ok(Math.abs(mean) < 0.1 && Math.abs(sd - 1) < 0.1, `randn: mean ${mean}, sd ${sd}`);
  assert.deepEqual(ts.empty([3, 2], { dtype: 'int16' }).shape, [3, 2]);
  assert.equal(ts.zeros([2], { requiresGrad: true }).requiresGrad, true);
  assert.deepEqual(ts.zerosLike(ts.ones([2, 2], { dtype: 'int8' })).tolist(), [
    [0, 0],
    [0, 0],
  ]);
});

test('manualSeed replays the same random numbers', () => {
  ts.manualSeed(1234);
  const a = values(ts.randn([50]));
  ts.manualSeed(1234);
  const b = values(ts.randn([50]));
  assert.deepEqual(a, b);
  ts.manualSeed(99n);
  assert.notDeepEqual(values(ts.randn([50])), a);
});

test('save and load safetensors files, with metadata', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-node-'));
  try {
    const file = path.join(dir, 'w.safetensors');
    const w = ts.randn([3, 5]);
    const idx = ts.tensor(new BigInt64Array([4n, -2n]));
    ts.save(file, { w, idx, view: w.transpose(0, 1) }, { note: 'hello' });
    const back = ts.load(file);
    assert.deepEqual(Object.keys(back), ['w', 'idx', 'view']);
    assert.deepEqual(values(back.w), values(w));
    assert.equal(back.idx.dtype, 'int64');
    assert.deepEqual(back.idx.tolist(), [4, -2]);
    assert.deepEqual(back.view.tolist(), w.transpose(0, 1).tolist());
    const { metadata } = ts.load(file, { metadata: true });
    assert.deepEqual(metadata, { note: 'hello' });
    assert.throws(() => ts.load(path.join(dir, 'missing.safetensors')), { code: 'NOT_FOUND' });
    fs.writeFileSync(path.join(dir, 'bad.safetensors'), 'not a safetensors file');
    assert.throws(() => ts.load(path.join(dir, 'bad.safetensors')), { code: 'DATA_LOSS' });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the addon loads in a worker thread too, and its tensors are freed when it exits', async () => {
  const { Worker } = require('node:worker_threads');
  const code = `
    const { parentPort } = require('node:worker_threads');
    const ts = require(${JSON.stringify(path.join(__dirname, '..', 'index.js'))});
    const keep = ts.tensor(new Float32Array([1, 2, 3]));   // still alive when the worker exits
    parentPort.postMessage(ts.ops.mul(keep, 2).tolist());`;
  const result = await new Promise((resolve, reject) => {
    const w = new Worker(code, { eval: true });
    w.once('message', resolve);
    w.once('error', reject);
  });
  assert.deepEqual(result, [2, 4, 6]);
});
