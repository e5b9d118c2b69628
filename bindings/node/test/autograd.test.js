'use strict';
// Autograd from JS: gradients against central finite differences (float64), accumulation,
// grad modes, autograd.grad, and the errors.
const test = require('node:test');
const assert = require('node:assert/strict');
const { ts, randomValues, assertClose, values } = require('./helpers');

/**
 * Central differences of f() with respect to every element of a float64 tensor that views
 * `buf` (zero-copy: perturbing the TypedArray perturbs the tensor).
 */
function numericGrad(f, buf, eps = 1e-6) {
  const g = new Float64Array(buf.length);
  for (let i = 0; i < buf.length; i++) {
    const v = buf[i];
    buf[i] = v + eps;
    const up = f();
    buf[i] = v - eps;
    const down = f();
    buf[i] = v;
    g[i] = (up - down) / (2 * eps);
  }
  return g;
}

test('gradients of a small network match finite differences', () => {
  const xb = randomValues(4 * 5, 1);
  const wb = randomValues(5 * 3, 2);
  const bb = randomValues(3, 3);
  const target = ts.tensor(new BigInt64Array([0n, 2n, 1n, 2n]));
  const x = ts.tensor(xb, [4, 5], { requiresGrad: true });
  const w = ts.tensor(wb, [5, 3], { requiresGrad: true });
  const b = ts.tensor(bb, [3], { requiresGrad: true });
  assert.ok(x.isLeaf && w.requiresGrad);
  // Broadcasting, a non-contiguous view (w.T.T), tanh, a softmax, a loss with a keyword.
  const f = () => {
    const h = x.matmul(w.T.T).add(b).tanh();
    const p = h.mul(h.softmax(1)).sum(1).mean();
    return p.add(ts.ops.cross_entropy(h, target, { reduction: 'sum' }));
  };
  const loss = f();
  assert.equal(typeof loss.gradFn, 'string');
  loss.backward();
  const fval = () => ts.noGrad(() => f().item());
  for (const [name, t, buf] of [
    ['x', x, xb],
    ['w', w, wb],
    ['b', b, bb],
  ]) {
    assertClose(values(t.grad), numericGrad(fval, buf), { rtol: 1e-5, atol: 1e-7, what: `d loss / d ${name}` });
  }
});

test('gradients accumulate, retainGraph allows a second pass, grad = null clears', () => {
  const xb = randomValues(6, 4);
  const x = ts.tensor(xb, [2, 3]).requiresGrad_();
  const y = x.mul(x).sum();
  y.backward({ retainGraph: true });
  assertClose(values(x.grad), Array.from(xb, (v) => 2 * v), { rtol: 1e-12 });
  y.backward();
  assertClose(values(x.grad), Array.from(xb, (v) => 4 * v), { rtol: 1e-12 });
  assert.throws(() => y.backward(), { code: 'FAILED_PRECONDITION' });
  x.grad = null;
  assert.equal(x.grad, null);
  // A non-scalar output needs its gradient.
  const z = x.mul(3);
  assert.throws(() => z.backward(), (e) => typeof e.code === 'string');
  z.backward(ts.onesLike(z));
  assertClose(values(x.grad), Array(6).fill(3), { rtol: 1e-12 });
});

test('noGrad, enableGrad and requiresGrad', () => {
  const x = ts.randn([3], { requiresGrad: true });
  assert.equal(ts.isGradEnabled(), true);
  const y = ts.noGrad(() => {
    assert.equal(ts.isGradEnabled(), false);
    assert.equal(ts.enableGrad(() => x.mul(2)).requiresGrad, true);
    return x.mul(2);
  });
  assert.equal(y.requiresGrad, false);
  assert.equal(ts.isGradEnabled(), true);
  assert.throws(() =>
    ts.noGrad(() => {
      throw new Error('boom');
    }),
  );
  assert.equal(ts.isGradEnabled(), true, 'restored after an exception');
  assert.equal(ts.inferenceMode(() => x.mul(2)).requiresGrad, false);
  assert.equal(x.detach().requiresGrad, false);
  const t = ts.zeros([2]);
  t.requiresGrad = true;
  assert.equal(t.requiresGrad, true);
  assert.throws(() => {
    ts.tensor(new Int32Array([1])).requiresGrad = true;
  }, { code: 'INVALID_ARGUMENT' });
  assert.throws(() => {
    t.requiresGrad = 'yes';
  }, TypeError);
});

test('autograd.grad returns gradients without accumulating them', () => {
  const xb = randomValues(5, 5);
  const x = ts.tensor(xb, { requiresGrad: true });
  const y = x.exp().sum();
  const [g] = ts.autograd.grad(y, x);
  assertClose(values(g), Array.from(xb, Math.exp), { rtol: 1e-12 });
  assert.equal(x.grad, null);
  const u = ts.randn([2], { requiresGrad: true, dtype: 'float64' });
  assert.deepEqual(ts.autograd.grad(x.sum(), [x, u], { allowUnused: true })[1], null);
});

test('a non-leaf keeps its gradient with retainGrad', () => {
  const x = ts.tensor(randomValues(4, 6), { requiresGrad: true });
  const h = x.mul(2).retainGrad();
  h.pow(2).sum().backward();
  assert.ok(h.grad);
  assertClose(values(h.grad), values(h).map((v) => 2 * v), { rtol: 1e-12 });
});
