'use strict';
// Shared by the tests: the module, a seeded random source whose values are never zero, and
// references computed in plain JS.
const assert = require('node:assert/strict');
const path = require('node:path');

const ts = require(path.join(__dirname, '..', 'index.js'));

/** mulberry32: a small seeded PRNG, so failures replay. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** n values in +-[0.1, 2): random signs, never zero (a zero hides sign and scale bugs). */
function randomValues(n, seed, Ctor = Float64Array) {
  const r = rng(seed);
  const out = new Ctor(n);
  for (let i = 0; i < n; i++) {
    const mag = 0.1 + 1.9 * r();
    out[i] = r() < 0.5 ? -mag : mag;
  }
  return out;
}

/** n integers in +-[1, hi], never zero. */
function randomInts(n, seed, hi = 9) {
  const r = rng(seed);
  const out = [];
  for (let i = 0; i < n; i++) {
    const m = 1 + Math.floor(r() * hi);
    out.push(r() < 0.5 ? -m : m);
  }
  return out;
}

/** A full garbage collection, with or without --expose-gc (tests of lifetimes need one). */
const gc = (() => {
  if (typeof globalThis.gc === 'function') return globalThis.gc;
  require('node:v8').setFlagsFromString('--expose-gc');
  return require('node:vm').runInNewContext('gc');
})();

const prod = (shape) => shape.reduce((a, b) => a * b, 1);

/** Row-major strides of a shape. */
function stridesOf(shape) {
  const s = new Array(shape.length).fill(1);
  for (let i = shape.length - 2; i >= 0; i--) s[i] = s[i + 1] * shape[i + 1];
  return s;
}

/** Elementwise f over broadcast inputs ({data, shape} each), as NumPy's rules. */
function broadcastMap(inputs, f) {
  const nd = Math.max(...inputs.map((x) => x.shape.length));
  const shape = [];
  for (let d = 0; d < nd; d++) {
    let s = 1;
    for (const x of inputs) {
      const xs = x.shape[d - (nd - x.shape.length)] ?? 1;
      if (xs !== 1) s = xs;
    }
    shape.push(s);
  }
  const n = prod(shape);
  const out = new Float64Array(n);
  const idx = new Array(nd).fill(0);
  const ins = inputs.map((x) => ({ ...x, st: stridesOf(x.shape), off: nd - x.shape.length }));
  for (let k = 0; k < n; k++) {
    let rem = k;
    for (let d = nd - 1; d >= 0; d--) {
      idx[d] = rem % shape[d];
      rem = Math.floor(rem / shape[d]);
    }
    const args = ins.map((x) => {
      let p = 0;
      for (let d = 0; d < x.shape.length; d++) p += (x.shape[d] === 1 ? 0 : idx[d + x.off]) * x.st[d];
      return x.data[p];
    });
    out[k] = f(...args);
  }
  return { data: out, shape };
}

function matmulRef(a, b, n, k, m) {
  const out = new Float64Array(n * m);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < m; j++) {
      let s = 0;
      for (let p = 0; p < k; p++) s += a[i * k + p] * b[p * m + j];
      out[i * m + j] = s;
    }
  return out;
}

/** Element-by-element closeness with a message naming the first mismatch. */
function assertClose(actual, expected, { rtol = 1e-5, atol = 1e-6, what = '' } = {}) {
  const a = Array.from(actual, Number);
  const e = Array.from(expected, Number);
  assert.equal(a.length, e.length, `${what}: ${a.length} elements, expected ${e.length}`);
  for (let i = 0; i < a.length; i++) {
    const tol = atol + rtol * Math.abs(e[i]);
    if (!(Math.abs(a[i] - e[i]) <= tol) && !(Number.isNaN(a[i]) && Number.isNaN(e[i]))) {
      assert.fail(`${what}: element ${i} is ${a[i]}, expected ${e[i]} (tolerance ${tol})`);
    }
  }
}

/** The flat values of a tensor as float64 numbers. */
const values = (t) => Array.from(t.toTypedArray({ copy: true }), Number);

module.exports = { ts, gc, rng, randomValues, randomInts, prod, stridesOf, broadcastMap, matmulRef, assertClose, values };
