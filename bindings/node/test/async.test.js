'use strict';
// ts.opsAsync: the same ops on a libuv worker thread, returning Promises.
const test = require('node:test');
const assert = require('node:assert/strict');
const { ts, gc, randomValues, assertClose, values } = require('./helpers');

test('async results equal the synchronous ones, several outputs and in-place included', async () => {
  const a = ts.tensor(randomValues(7 * 9, 1), [7, 9]);
  const b = ts.tensor(randomValues(9 * 4, 2), [9, 4]);
  assertClose(values(await ts.opsAsync.matmul(a, b)), values(ts.ops.matmul(a, b)), { rtol: 1e-12 });
  const [sv, si] = await ts.opsAsync.sort(a, { dim: 1, descending: true });
  const [rv, ri] = ts.ops.sort(a, 1, true);
  assert.deepEqual(values(sv), values(rv));
  assert.deepEqual(si.tolist(), ri.tolist());
  const c = a.clone();
  assert.equal(await ts.opsAsync.mul_(c, 2), c, 'an in-place op resolves to its argument');
  assertClose(values(c), values(a).map((v) => 2 * v), { rtol: 1e-12 });
  assert.equal(ts.opsAsync.add.schema, ts.ops.add.schema);
});

test('inputs stay alive while the op runs, even when JS drops them', async () => {
  const expected = [];
  const pending = [];
  for (let i = 0; i < 20; i++) {
    const data = randomValues(300, 10 + i);
    expected.push(data.reduce((s, v) => s + v * v, 0));
    // The only references to the tensors (and to the TypedArray they view) are the call's.
    pending.push(ts.opsAsync.dot(ts.tensor(data), ts.tensor(Float64Array.from(data))));
  }
  gc();
  const results = await Promise.all(pending);
  gc();
  results.forEach((r, i) => assertClose([r.item()], [expected[i]], { rtol: 1e-10 }));
});

test('errors reject the promise with the code and the op name; JS type errors too', async () => {
  const a = ts.randn([2, 3]);
  await assert.rejects(ts.opsAsync.matmul(a, a), (e) => e.code === 'INVALID_ARGUMENT' && /^matmul:/.test(e.message));
  await assert.rejects(ts.opsAsync.add(a, 'x'), TypeError);
  await assert.rejects(ts.opsAsync.softmax(a), TypeError);
});

test('async ops record autograd under the caller grad mode', async () => {
  const w = ts.tensor(randomValues(6, 30), [2, 3], { requiresGrad: true });
  const y = await ts.opsAsync.mul(w, w);
  assert.equal(y.requiresGrad, true);
  y.sum().backward();
  assertClose(values(w.grad), values(w).map((v) => 2 * v), { rtol: 1e-12 });
  const p = ts.noGrad(() => ts.opsAsync.mul(w, w));
  assert.equal((await p).requiresGrad, false, 'started inside noGrad: nothing recorded');
  assert.equal(ts.isGradEnabled(), true);
});
