'use strict';
// Training from JS: a regression loop written with ops and autograd must reduce its loss, and
// the spirals example must reach its accuracy.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { ts, randomValues } = require('./helpers');

test('a linear regression trained with SGD by hand reduces its loss tenfold', () => {
  ts.manualSeed(7);
  const x = ts.tensor(randomValues(64 * 3, 1), [64, 3], { dtype: 'float32' });
  const trueW = ts.tensor([[1.5], [-2], [0.5]]);
  const y = x.matmul(trueW).add(0.3);
  const w = ts.zeros([3, 1], { requiresGrad: true });
  const b = ts.zeros([1], { requiresGrad: true });
  const losses = [];
  for (let step = 0; step < 100; step++) {
    const loss = ts.ops.mse_loss(x.matmul(w).add(b), y);
    losses.push(loss.item());
    loss.backward();
    ts.noGrad(() => {
      for (const p of [w, b]) {
        p.sub_(p.grad, { alpha: 0.1 });
        p.grad = null;
      }
    });
  }
  assert.ok(losses.at(-1) < losses[0] / 10, `loss ${losses[0]} -> ${losses.at(-1)}`);
  // Full-batch gradient descent with a small step: the loss never rises (up to float32 rounding).
  for (let i = 1; i < losses.length; i++) assert.ok(losses[i] <= losses[i - 1] * 1.001 + 1e-6, `step ${i} increased the loss`);
});

test('examples/spirals.js trains the MLP past 90% training accuracy', () => {
  const out = execFileSync(process.execPath, [path.join(__dirname, '..', 'examples', 'spirals.js'), '--check', '0.9'], {
    encoding: 'utf8',
    timeout: 120000,
  });
  const m = /training accuracy ([\d.]+)%/.exec(out);
  assert.ok(m, out);
  assert.ok(Number(m[1]) > 90, out);
});
