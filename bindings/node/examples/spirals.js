'use strict';
// Trains a small MLP on the two-spirals problem, generated here (no download), from JavaScript:
// tensors over Float32Arrays, registry ops through the Tensor methods, autograd, and the
// core's Adam step (the registry op adam_step_) for the update.
//
//   node examples/spirals.js [--steps N] [--check ACCURACY]
// --check exits with status 1 unless the final training accuracy reaches ACCURACY (the test).
const ts = require('..');

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const steps = opt('--steps', 600);
const check = opt('--check', 0);

/** Two interleaved spirals, n points each, with a little noise; labels 0 and 1. */
function spirals(n, seed) {
  let s = seed >>> 0;
  const rand = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const x = new Float32Array(2 * n * 2);
  const y = new BigInt64Array(2 * n);
  for (let c = 0; c < 2; c++) {
    for (let i = 0; i < n; i++) {
      const t = 0.1 + (0.9 * i) / n; // radius
      const theta = 4 * Math.PI * t + c * Math.PI; // two turns each, half a turn apart
      const k = c * n + i;
      x[2 * k] = t * Math.cos(theta) + 0.05 * (rand() - 0.5);
      x[2 * k + 1] = t * Math.sin(theta) + 0.05 * (rand() - 0.5);
      y[k] = BigInt(c);
    }
  }
  return { x: ts.tensor(x, [2 * n, 2]), y: ts.tensor(y) };
}

ts.manualSeed(0);
const { x, y } = spirals(200, 1);
const n = y.numel;

// 2 -> 64 -> 64 -> 2, tanh, weights scaled by 1/sqrt(fan_in).
const layer = (fanIn, fanOut) => ({
  w: ts.randn([fanIn, fanOut]).mul(1 / Math.sqrt(fanIn)).requiresGrad_(),
  b: ts.zeros([fanOut], { requiresGrad: true }),
});
const layers = [layer(2, 64), layer(64, 64), layer(64, 2)];
const params = layers.flatMap((l) => [l.w, l.b]);
const adam = params.map((p) => ({ m: ts.zerosLike(p), v: ts.zerosLike(p) }));

const forward = (input) =>
  layers.reduce((h, l, i) => {
    const z = h.matmul(l.w).add(l.b);
    return i < layers.length - 1 ? z.tanh() : z;
  }, input);
const accuracy = (logits) => logits.argmax(1).eq(y).sum().item() / n;

const t0 = Date.now();
let acc = 0;
for (let step = 1; step <= steps; step++) {
  // tidy frees the step's intermediates now rather than when Node runs finalizers.
  ts.tidy(() => {
    const logits = forward(x);
    const loss = ts.ops.cross_entropy(logits, y);
    loss.backward();
    ts.noGrad(() => {
      params.forEach((p, i) => {
        ts.ops.adam_step_(p, p.grad, adam[i].m, adam[i].v, null, step, { lr: 0.02 });
        p.grad = null;
      });
    });
    if (step % 100 === 0 || step === steps) {
      acc = ts.noGrad(() => accuracy(logits));
      console.log(`step ${String(step).padStart(4)}  loss ${loss.item().toFixed(4)}  accuracy ${(100 * acc).toFixed(1)}%`);
    }
  });
}
acc = ts.noGrad(() => accuracy(forward(x)));
console.log(`training accuracy ${(100 * acc).toFixed(1)}% on ${n} points after ${steps} steps, ${((Date.now() - t0) / 1000).toFixed(2)} s`);
if (check && acc < check) {
  console.error(`spirals: accuracy ${acc} is below --check ${check}`);
  process.exit(1);
}
