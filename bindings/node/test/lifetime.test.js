'use strict';
// When tensor memory is given back: dispose(), tidy() scopes, keep(), and a synchronous loop
// whose memory must stay bounded.
const test = require('node:test');
const assert = require('node:assert/strict');
const { ts } = require('./helpers');

test('dispose() releases now; a disposed tensor is an error to use', () => {
  const t = ts.ones([3]);
  const view = t.mul(2);
  t.dispose();
  assert.equal(t.isDisposed, true);
  assert.equal(String(t), 'Tensor(disposed)');
  assert.throws(() => t.shape, { code: 'FAILED_PRECONDITION' });
  assert.throws(() => ts.ops.add(t, 1), (e) => e.code === 'FAILED_PRECONDITION' && /dispose/.test(e.message));
  t.dispose(); // twice is fine
  assert.deepEqual(view.tolist(), [2, 2, 2]);
});

test('tidy disposes what it made except its results, which move to the enclosing scope', () => {
  const outside = ts.ones([2]);
  let inner;
  let innerKept;
  let kept;
  const result = ts.tidy(() => {
    const r = ts.tidy(() => {
      inner = outside.mul(3);
      innerKept = outside.add(1);
      return { a: [innerKept] };
    });
    kept = ts.keep(ts.zeros([1]));
    return r.a[0].mul(2);
  });
  assert.equal(outside.isDisposed, false, 'made before the scope');
  assert.equal(inner.isDisposed, true);
  assert.equal(innerKept.isDisposed, true, 'returned by the inner scope, then disposed by the outer one');
  assert.equal(kept.isDisposed, false);
  assert.deepEqual(result.tolist(), [4, 4]);
  assert.throws(() => ts.tidy(() => Promise.resolve(1)), TypeError);
  let made;
  assert.throws(() =>
    ts.tidy(() => {
      made = ts.ones([1]);
      throw new Error('boom');
    }),
  );
  assert.equal(made.isDisposed, true, 'disposed when fn throws too');
});

test('a synchronous training-style loop keeps its memory bounded with tidy', () => {
  const a = ts.randn([128, 128]);
  const w = ts.randn([128, 128], { requiresGrad: true });
  const step = () => {
    const loss = a.matmul(w).tanh().mul(a).sum();
    loss.backward();
    ts.noGrad(() => {
      w.sub_(w.grad, { alpha: 1e-4 });
      w.grad = null;
    });
  };
  for (let i = 0; i < 50; i++) ts.tidy(step); // warm the allocator
  const before = process.memoryUsage().rss;
  for (let i = 0; i < 1500; i++) ts.tidy(step);
  const grownMB = (process.memoryUsage().rss - before) / 1e6;
  // 1500 steps make about 15k tensors of 64 KB (~1 GB) that tidy frees as it goes.
  assert.ok(grownMB < 150, `RSS grew by ${grownMB.toFixed(0)} MB`);
});

test('without tidy, memory stays bounded when finalizers run during GC (syncFinalizers)', (t) => {
  if (!ts.syncFinalizers) {
    t.skip('built with the stable N-API: tensors are freed from the event loop (use tidy)');
    return;
  }
  const a = ts.randn([128, 128]);
  for (let i = 0; i < 50; i++) a.matmul(a).relu().sum();
  const before = process.memoryUsage().rss;
  for (let i = 0; i < 3000; i++) a.matmul(a).relu().sum(); // ~9000 tensors, ~600 MB if kept
  const grownMB = (process.memoryUsage().rss - before) / 1e6;
  assert.ok(grownMB < 250, `RSS grew by ${grownMB.toFixed(0)} MB`);
});
