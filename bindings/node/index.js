'use strict';
/**
 * Tessera for Node.js: tensors, every registry op, autograd, over Tessera's C ABI.
 *
 *   const ts = require('tessera');
 *   const x = ts.tensor(new Float32Array([1, 2, 3, 4, 5, 6]), [2, 3]);  // shares the memory
 *   const y = ts.ops.softmax(x.mul(2), 1);                               // any op, by name
 *   console.log(y.tolist(), y.sum().item());
 *
 * The ops (ts.ops, ts.opsAsync and the Tensor methods they give) are generated when the module
 * loads from the schemas the core reports (op_num_args / op_arg): plugin ops included, no
 * wrapper written per op. See README.md for the rules of zero-copy and of arguments.
 * @module tessera
 */

const fs = require('node:fs');
const path = require('node:path');
const util = require('node:util');

/**
 * The native addon: TESSERA_NODE_ADDON, else tessera.node beside this file (an install) or in
 * ./build (a build directory made with `cmake -S . -B build`).
 */
function loadAddon() {
  const env = process.env.TESSERA_NODE_ADDON;
  const candidates = env
    ? [path.resolve(env)]
    : [
        path.join(__dirname, 'tessera.node'),
        path.join(__dirname, 'build', 'tessera.node'),
        path.join(__dirname, 'build', 'Release', 'tessera.node'),
      ];
  for (const p of candidates) if (fs.existsSync(p)) return require(p);
  throw new Error(
    `tessera: native addon not found (tried ${candidates.join(', ')}); build it with CMake ` +
      '(bindings/node/README.md) or point TESSERA_NODE_ADDON at tessera.node',
  );
}

const native = loadAddon();

/**
 * A tensor: a reference to a Tessera tensor (released when the object is garbage collected).
 * Native members: shape, strides, dtype, device, ndim, numel, storageOffset, isContiguous,
 * dataPtr, requiresGrad (get/set), grad (get/set), isLeaf, gradFn, version, sharesStorage(t),
 * copy_(src), reshape/view/permute/expand(...dims), transpose(d0, d1), slice(dim, start, end,
 * step), select(dim, i), narrow(dim, start, length), squeeze(dim?), unsqueeze(dim),
 * contiguous(), clone(), detach(), retainGrad(), requiresGrad_(on). The methods below and one
 * per registry op taking `Tensor self` first are added here.
 * @typedef {InstanceType<typeof native.Tensor>} Tensor
 */
const Tensor = native.Tensor;

/** @typedef {'bool'|'uint8'|'int8'|'int16'|'int32'|'int64'|'float16'|'bfloat16'|'float32'|'float64'|'float8_e4m3fn'|'float8_e5m2'|'float8_e8m0fnu'|'float4_e2m1fn_x2'} DType */
/** @typedef {{dtype?: DType, device?: string, requiresGrad?: boolean, copy?: boolean}} TensorOptions */
/** @typedef {Int8Array|Uint8Array|Uint8ClampedArray|Int16Array|Uint16Array|Int32Array|Uint32Array|Float32Array|Float64Array|BigInt64Array|BigUint64Array} AnyTypedArray */

/** @type {readonly DType[]} */
const dtypes = Object.freeze(['bool', 'uint8', 'int8', 'int16', 'int32', 'int64', 'float16', 'bfloat16', 'float32', 'float64',
  'float8_e4m3fn', 'float8_e5m2', 'float8_e8m0fnu', 'float4_e2m1fn_x2']);
const dtypeSet = new Set([...dtypes, 'float', 'double', 'half', 'long', 'int', 'short']);

// ---- helpers -------------------------------------------------------------------------------------

/** @param {unknown} v @returns {v is AnyTypedArray} */
function isTypedArray(v) {
  return ArrayBuffer.isView(v) && !(v instanceof DataView);
}

/** A trailing options object: no schema kind takes a plain object, so it is never an argument. */
function isOptions(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !isTypedArray(v) && !(v instanceof Tensor);
}

/** @param {number|number[]} shape @returns {number[]} */
function toShape(shape, what) {
  if (typeof shape === 'number' || typeof shape === 'bigint') return [Number(shape)];
  if (Array.isArray(shape)) return shape;
  throw new TypeError(`${what}: a shape is an array of integers, got ${typeof shape}`);
}

/** Tessera errors name the op that failed; a composite's may name an inner op: say which. */
function nameError(e, name) {
  if (e && typeof e.code === 'string' && typeof e.message === 'string' && !e.message.startsWith(`${name}:`)) {
    e.message = `${name}: ${e.message}`;
  }
  return e;
}

// ---- tensors from JS data -----------------------------------------------------------------------

function inferShape(data) {
  const shape = [];
  for (let d = data; Array.isArray(d); d = d[0]) shape.push(d.length);
  return shape;
}

function flatten(data, shape, depth, out) {
  if (depth === shape.length) {
    if (Array.isArray(data)) throw new TypeError('tensor: ragged nested array (sub-arrays of different depths)');
    out.push(data);
    return;
  }
  if (!Array.isArray(data) || data.length !== shape[depth]) {
    throw new TypeError(`tensor: ragged nested array (expected ${shape[depth]} elements at depth ${depth})`);
  }
  for (const x of data) flatten(x, shape, depth + 1, out);
}

/**
 * A TypedArray of a kind Tessera has no dtype for, converted (copied) to one it has.
 * @returns {[AnyTypedArray, DType|undefined]} the array and the default dtype for it
 */
function normalizeTypedArray(ta, dtype) {
  if (ta instanceof Uint16Array && dtype !== 'float16' && dtype !== 'bfloat16' && dtype !== 'half') return [Int32Array.from(ta), 'int32'];
  if (ta instanceof Uint32Array) return [Float64Array.from(ta), 'int64'];
  if (typeof BigUint64Array !== 'undefined' && ta instanceof BigUint64Array) {
    return [new BigInt64Array(ta.buffer.slice(ta.byteOffset, ta.byteOffset + ta.byteLength)), 'int64'];
  }
  return [ta, undefined];
}

/**
 * A tensor from a TypedArray (ZERO-COPY when the dtype is the TypedArray's own and the device is
 * cpu:0: the tensor views the array's memory and keeps its ArrayBuffer alive), a nested array or
 * a number (copied; numbers default to float32, booleans to bool, BigInts to int64), or a Tensor
 * (copied).
 * @param {AnyTypedArray|number|boolean|bigint|Array<any>|Tensor} data
 * @param {number[]|TensorOptions} [shape] sizes (default: the data's own)
 * @param {TensorOptions} [options] dtype, device, requiresGrad, copy (always copy)
 * @returns {Tensor}
 */
function tensor(data, shape, options) {
  if (isOptions(shape)) [options, shape] = [shape, undefined];
  const opts = options || {};
  const dtype = opts.dtype ?? undefined;
  const device = opts.device ?? undefined;
  let t;
  if (data instanceof Tensor) {
    t = data.detach()._to(dtype ?? null, device ?? null, true);
    if (shape) t = t.reshape(shape);
  } else if (isTypedArray(data)) {
    const [ta, dflt] = normalizeTypedArray(data, dtype);
    t = native.fromTypedArray(ta, shape && toShape(shape, 'tensor'), dtype ?? dflt, device, !!opts.copy);
  } else {
    const dims = inferShape(data);
    const flat = [];
    flatten(data, dims, 0, flat);
    let buf;
    let inferred;
    if (flat.length && flat.every((x) => typeof x === 'boolean')) {
      buf = Uint8Array.from(flat, (x) => (x ? 1 : 0));
      inferred = 'bool';
    } else if (flat.some((x) => typeof x === 'bigint')) {
      buf = BigInt64Array.from(flat, (x) => (typeof x === 'bigint' ? x : BigInt(Math.trunc(Number(x)))));
      inferred = 'int64';
    } else {
      for (const x of flat) {
        if (typeof x !== 'number' && typeof x !== 'boolean') {
          throw new TypeError(`tensor: elements must be numbers, booleans or BigInts, got ${typeof x}`);
        }
      }
      buf = Float64Array.from(flat, Number);
      inferred = 'float32';
    }
    // The buffer is ours alone: viewing it instead of copying it is safe.
    t = native.fromTypedArray(buf, shape ? toShape(shape, 'tensor') : dims, dtype ?? inferred, device, false);
  }
  if (opts.requiresGrad) t.requiresGrad_(true);
  return t;
}

// ---- Tensor methods written here (the op methods are generated below) ---------------------------

/**
 * The elements as a TypedArray (row-major): ZERO-COPY for a contiguous tensor on a CPU device
 * whose dtype has a TypedArray (bool and uint8 give a Uint8Array, int64 a BigInt64Array), so
 * writes through it change the tensor; otherwise a copy (float16/bfloat16 become a
 * Float32Array). {copy: true} always copies.
 * @param {{copy?: boolean}} [options]
 * @returns {AnyTypedArray}
 */
Tensor.prototype.toTypedArray = function toTypedArray(options) {
  return this._toTypedArray(!!(options && options.copy));
};

/** Nested JS arrays of numbers (int64 as Number) or booleans; a number for a 0-dim tensor. */
Tensor.prototype.tolist = function tolist() {
  const flat = this.toTypedArray();
  const conv = this.dtype === 'bool' ? (x) => x !== 0 : this.dtype === 'int64' ? Number : (x) => x;
  const shape = this.shape;
  let k = 0;
  const build = (d) => {
    if (d === shape.length) return conv(flat[k++]);
    const out = new Array(shape[d]);
    for (let i = 0; i < shape[d]; i++) out[i] = build(d + 1);
    return out;
  };
  return build(0);
};

/** The one element as a number (a boolean for bool tensors). */
Tensor.prototype.item = function item() {
  if (this.numel !== 1) {
    const e = new Error(`item: a tensor with ${this.numel} elements cannot be converted to a number`);
    e.code = 'INVALID_ARGUMENT';
    throw e;
  }
  const v = this.toTypedArray()[0];
  return this.dtype === 'bool' ? v !== 0 : Number(v);
};

/**
 * Converts to a dtype and/or device: t.to('float64'), t.to('cpu:1'), t.to({dtype, device,
 * copy}). Returns this tensor when nothing changes (unless copy).
 * @param {string|{dtype?: DType, device?: string, copy?: boolean}} arg
 * @returns {Tensor}
 */
Tensor.prototype.to = function to(arg) {
  if (typeof arg === 'string') return dtypeSet.has(arg) ? this._to(arg, null, false) : this._to(null, arg, false);
  if (isOptions(arg)) return this._to(arg.dtype ?? null, arg.device ?? null, !!arg.copy);
  throw new TypeError('to: expected a dtype name, a device string or {dtype, device, copy}');
};
Tensor.prototype.cpu = function cpu() {
  return this._to(null, 'cpu:0', false);
};

/**
 * Backpropagates from this tensor (one element, or with `grad` of its shape).
 * @param {Tensor|{retainGraph?: boolean, createGraph?: boolean}} [grad]
 * @param {{retainGraph?: boolean, createGraph?: boolean}} [options]
 */
Tensor.prototype.backward = function backward(grad, options) {
  if (isOptions(grad)) [options, grad] = [grad, undefined];
  const o = options || {};
  this._backward(grad ?? null, !!o.retainGraph, !!o.createGraph);
};

/** shape, or shape[dim] (negative dims count from the end). */
Tensor.prototype.size = function size(dim) {
  const s = this.shape;
  return dim === undefined ? s : s[dim < 0 ? dim + s.length : dim];
};

/** The dims reversed (PyTorch's .T). */
Object.defineProperty(Tensor.prototype, 'T', {
  get() {
    return this.permute([...Array(this.ndim).keys()].reverse());
  },
});

function formatTensor(t) {
  if (t.isDisposed) return 'Tensor(disposed)';
  const head = `shape=[${t.shape.join(', ')}], dtype=${t.dtype}, device=${t.device}`;
  const grad = t.requiresGrad ? ', requiresGrad=true' : '';
  if (t.numel > 1000) return `Tensor(${head}${grad})`;
  return `Tensor(${util.inspect(t.tolist(), { depth: null, breakLength: 100 })}, ${head}${grad})`;
}
Tensor.prototype.toString = function toString() {
  return formatTensor(this);
};
Tensor.prototype[util.inspect.custom] = function inspect() {
  return formatTensor(this);
};

if (typeof Symbol.dispose === 'symbol') {
  // `using t = ...` (explicit resource management) where the runtime has it.
  Tensor.prototype[Symbol.dispose] = function () {
    this.dispose();
  };
}

// ---- ops from the registry ------------------------------------------------------------------------

/**
 * @typedef {object} OpArg
 * @property {string} name the schema's name ("self", "dim", "keepdim")
 * @property {string} kind Tensor, int, float, bool, int[], str, ScalarType, Device, Scalar, Tensor[]
 * @property {boolean} optional None (null) is accepted
 * @property {boolean} mutable written in place (Tensor(a!))
 * @property {boolean} hasDefault may be left out
 * @property {*} default what the core passes when left out
 */
/**
 * @typedef {object} OpMeta
 * @property {number} index @property {string} name @property {string} schema
 * @property {number} numOutputs @property {OpArg[]} args
 */

/** @type {OpMeta[]} */
const opList = native.listOps();

const camel = (s) => s.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());

/**
 * The JS values of one call in schema order: positional values, then the trailing options
 * object by the schema's names (snake_case or camelCase). TypedArrays given for Tensor
 * arguments become tensors (zero-copy where they can).
 */
function layoutArgs(meta, byName, given) {
  let opts;
  if (given.length && isOptions(given[given.length - 1])) opts = given.pop();
  if (given.length > meta.args.length) {
    throw new TypeError(
      `${meta.name}: expected at most ${meta.args.length} arguments, got ${given.length} (schema: ${meta.schema})`,
    );
  }
  const vals = given;
  if (opts) {
    const positional = given.length;
    const seen = new Set();
    for (const key of Object.keys(opts)) {
      const i = byName.get(key);
      if (i === undefined) {
        throw new TypeError(`${meta.name}: unknown argument '${key}' (schema: ${meta.schema})`);
      }
      if ((i < positional && given[i] !== undefined) || seen.has(i)) {
        throw new TypeError(`${meta.name}: argument '${meta.args[i].name}' given twice (schema: ${meta.schema})`);
      }
      seen.add(i);
      while (vals.length < i) vals.push(undefined);
      vals[i] = opts[key];
    }
  }
  for (let i = 0; i < vals.length; i++) {
    const kind = meta.args[i].kind;
    if (kind === 'Tensor' && isTypedArray(vals[i])) vals[i] = tensor(vals[i]);
    else if (kind === 'Tensor[]' && Array.isArray(vals[i])) vals[i] = vals[i].map((v) => (isTypedArray(v) ? tensor(v) : v));
  }
  return vals;
}

function describeOp(fn, meta, jsName) {
  Object.defineProperty(fn, 'name', { value: jsName });
  fn.opName = meta.name;
  fn.schema = meta.schema;
  fn.args = meta.args;
  fn.numOutputs = meta.numOutputs;
  return fn;
}

function makeOp(meta, jsName) {
  const byName = new Map();
  meta.args.forEach((a, i) => {
    byName.set(a.name, i);
    byName.set(camel(a.name), i);
  });
  const sync = function (...given) {
    const vals = layoutArgs(meta, byName, given);
    try {
      return native.callOp(meta.index, vals);
    } catch (e) {
      throw nameError(e, meta.name);
    }
  };
  const async = function (...given) {
    try {
      const vals = layoutArgs(meta, byName, given);
      return native.callOpAsync(meta.index, vals).catch((e) => {
        throw nameError(e, meta.name);
      });
    } catch (e) {
      return Promise.reject(e);
    }
  };
  return [describeOp(sync, meta, jsName), describeOp(async, meta, `${jsName}Async`)];
}

/**
 * Every registry op by name: ops.add(a, b, {alpha: 2}); a plugin's ops under their namespace
 * (ops.example.gemm_bias_act for example::gemm_bias_act, also ops['example::gemm_bias_act']).
 * Positional arguments in schema order, then an options object by the schema's names. Each
 * function carries .schema, .args, .numOutputs; several outputs come back as an array.
 * @type {Record<string, Function & {schema: string, args: OpArg[], numOutputs: number} | Record<string, Function>>}
 */
const ops = Object.create(null);
/** The same ops run on a libuv worker thread, returning Promises. @type {Record<string, any>} */
const opsAsync = Object.create(null);

for (const meta of opList) {
  const sep = meta.name.indexOf('::');
  const ns = sep >= 0 ? meta.name.slice(0, sep) : null;
  const short = sep >= 0 ? meta.name.slice(sep + 2) : meta.name;
  const [sync, async] = makeOp(meta, short);
  ops[meta.name] = sync;
  opsAsync[meta.name] = async;
  if (ns) {
    if (!(ns in ops)) {
      ops[ns] = Object.create(null);
      opsAsync[ns] = Object.create(null);
    }
    if (typeof ops[ns] === 'object') {
      ops[ns][short] = sync;
      opsAsync[ns][short] = async;
    }
  }
  // t.add(b), t.sum({dim: [1]}): ops whose first argument is `Tensor self`, except internal
  // (`_`-prefixed) and plugin ops and names the Tensor class already has.
  const first = meta.args[0];
  if (!ns && !meta.name.startsWith('_') && first && first.name === 'self' && first.kind === 'Tensor' && !(meta.name in Tensor.prototype)) {
    Object.defineProperty(Tensor.prototype, meta.name, {
      value: function (...rest) {
        return sync(this, ...rest);
      },
      writable: true,
      configurable: true,
    });
  }
}
for (const table of [ops, opsAsync]) {
  for (const v of Object.values(table)) if (typeof v === 'object') Object.freeze(v);
  Object.freeze(table);
}

// ---- factories ------------------------------------------------------------------------------------

function withGrad(t, opts) {
  if (opts && opts.requiresGrad) t.requiresGrad_(true);
  return t;
}

/**
 * A tensor filled with `value` (dtype: from the value when not given, as PyTorch's full).
 * @param {number|number[]} shape @param {number|boolean} value @param {TensorOptions} [options]
 * @returns {Tensor}
 */
function full(shape, value, options) {
  const o = options || {};
  return withGrad(ops.full(toShape(shape, 'full'), value, o.dtype ?? null, o.device ?? null), o);
}
/** @param {number|number[]} shape @param {TensorOptions} [options] @returns {Tensor} zeros (float32 by default) */
function zeros(shape, options) {
  const o = options || {};
  return full(shape, 0, { ...o, dtype: o.dtype ?? 'float32' });
}
/** @param {number|number[]} shape @param {TensorOptions} [options] @returns {Tensor} ones (float32 by default) */
function ones(shape, options) {
  const o = options || {};
  return full(shape, 1, { ...o, dtype: o.dtype ?? 'float32' });
}
/** @param {Tensor} t @param {TensorOptions} [options] @returns {Tensor} */
function zerosLike(t, options) {
  return zeros(t.shape, { dtype: t.dtype, device: t.device, ...(options || {}) });
}
/** @param {Tensor} t @param {TensorOptions} [options] @returns {Tensor} */
function onesLike(t, options) {
  return ones(t.shape, { dtype: t.dtype, device: t.device, ...(options || {}) });
}
/** Uniform on [0, 1). @param {number|number[]} shape @param {TensorOptions} [options] @returns {Tensor} */
function rand(shape, options) {
  const o = options || {};
  return withGrad(ops.rand(toShape(shape, 'rand'), o.dtype ?? null, o.device ?? null), o);
}
/** Standard normal. @param {number|number[]} shape @param {TensorOptions} [options] @returns {Tensor} */
function randn(shape, options) {
  const o = options || {};
  return withGrad(ops.randn(toShape(shape, 'randn'), o.dtype ?? null, o.device ?? null), o);
}
/**
 * arange(end), arange(start, end), arange(start, end, step), each with trailing options.
 * Integers give int64 (as PyTorch), fractions the default float dtype.
 * @returns {Tensor}
 */
function arange(...args) {
  const o = args.length && isOptions(args[args.length - 1]) ? args.pop() : {};
  let [start, end, step] = args;
  if (args.length === 1) [start, end] = [0, args[0]];
  return withGrad(ops.arange(start, end, step ?? 1, o.dtype ?? null, o.device ?? null), o);
}
/** Uninitialised. @param {number|number[]} shape @param {TensorOptions} [options] @returns {Tensor} */
function empty(shape, options) {
  const o = options || {};
  return withGrad(native.empty(toShape(shape, 'empty'), o.dtype, o.device), o);
}

// ---- autograd -------------------------------------------------------------------------------------

/**
 * Runs fn with gradient recording off on this thread (torch.no_grad()). Synchronous: code after
 * an `await` inside fn runs with the mode restored; async ops started inside fn keep it.
 * @template T @param {() => T} fn @returns {T}
 */
function noGrad(fn) {
  const prev = native.setGradEnabled(false);
  try {
    return fn();
  } finally {
    native.setGradEnabled(prev);
  }
}
/** Runs fn with recording on (inside noGrad). @template T @param {() => T} fn @returns {T} */
function enableGrad(fn) {
  const prev = native.setGradEnabled(true);
  try {
    return fn();
  } finally {
    native.setGradEnabled(prev);
  }
}
/** Runs fn in inference mode (no recording, no version counting). @template T @param {() => T} fn @returns {T} */
function inferenceMode(fn) {
  const prev = native.setInferenceMode(true);
  try {
    return fn();
  } finally {
    native.setInferenceMode(prev);
  }
}

const autograd = Object.freeze({
  /**
   * Gradients of outputs with respect to inputs, returned instead of accumulated in .grad.
   * @param {Tensor|Tensor[]} outputs @param {Tensor|Tensor[]} inputs
   * @param {{gradOutputs?: (Tensor|null)[], retainGraph?: boolean, createGraph?: boolean, allowUnused?: boolean}} [options]
   * @returns {(Tensor|null)[]}
   */
  grad(outputs, inputs, options) {
    const o = options || {};
    const list = (x) => (Array.isArray(x) ? x : [x]);
    return native.autogradGrad(list(outputs), list(inputs), o.gradOutputs ?? null, !!o.retainGraph, !!o.createGraph, !!o.allowUnused);
  },
});

// ---- lifetimes -------------------------------------------------------------------------------------

/** Tensors in a result: a Tensor, or arrays and plain objects holding them. */
function collectTensors(v, out, depth) {
  if (v instanceof Tensor) out.push(v);
  else if (depth < 8 && Array.isArray(v)) for (const x of v) collectTensors(x, out, depth + 1);
  else if (depth < 8 && isOptions(v)) for (const x of Object.values(v)) collectTensors(x, out, depth + 1);
  return out;
}

/**
 * Runs fn and disposes every tensor made while it ran, except those it returns (a Tensor, or
 * arrays and plain objects of them) and those passed to keep(). Node runs the finalizers that
 * free tensors from its event loop, not during garbage collection, so a synchronous loop that
 * never awaits holds every intermediate until it ends: wrap each step in tidy (or await now and
 * then). fn must be synchronous. Scopes nest; a returned tensor belongs to the enclosing scope.
 * @template T @param {() => T} fn @returns {T}
 */
function tidy(fn) {
  native.tidyBegin();
  let result;
  try {
    result = fn();
  } catch (e) {
    native.tidyEnd([]);
    throw e;
  }
  if (result && typeof result.then === 'function') {
    native.tidyEnd([]);
    throw new TypeError('tidy: fn must be synchronous (it returned a Promise)');
  }
  native.tidyEnd(collectTensors(result, [], 0));
  return result;
}

/** Exempts a tensor from every tidy scope (e.g. a parameter made inside one). @param {Tensor} t @returns {Tensor} t */
function keep(t) {
  return native.keep(t);
}

/** Disposes the tensors in a Tensor, array or plain object now. */
function dispose(v) {
  for (const t of collectTensors(v, [], 0)) t.dispose();
}

// ---- files ----------------------------------------------------------------------------------------

/**
 * Writes tensors to a safetensors file (atomically: a crash leaves the old file or the new one).
 * @param {string} file @param {Record<string, Tensor>} tensors
 * @param {Record<string, string>} [metadata]
 */
function save(file, tensors, metadata) {
  const names = Object.keys(tensors);
  const meta = metadata || {};
  native.save(file, names, names.map((n) => tensors[n]), Object.keys(meta), Object.values(meta));
}
/**
 * Reads a safetensors file: {name: Tensor} in file order, or {tensors, metadata} with
 * {metadata: true}.
 * @param {string} file @param {{device?: string, metadata?: boolean}} [options]
 */
function load(file, options) {
  const o = options || {};
  const r = native.load(file, o.device);
  return o.metadata ? r : r.tensors;
}

module.exports = {
  Tensor,
  tensor,
  ops,
  opsAsync,
  dtypes,
  zeros,
  ones,
  full,
  zerosLike,
  onesLike,
  rand,
  randn,
  arange,
  empty,
  noGrad,
  enableGrad,
  inferenceMode,
  isGradEnabled: native.isGradEnabled,
  autograd,
  tidy,
  keep,
  dispose,
  /** Seeds the runtime's Philox stream (same seed, same numbers on every backend). @param {number|bigint} seed */
  manualSeed: native.manualSeed,
  /** @returns {string[]} every device loaded: ['cpu:0', ...] */
  devices: native.devices,
  /** @returns {{name: string, version: string, path: string, loaded: boolean, reason: string}[]} */
  plugins: native.plugins,
  save,
  load,
  /** True when tensors are freed during garbage collection (see tidy()). */
  syncFinalizers: native.syncFinalizers,
  version: native.version,
  abiVersion: native.abiVersion,
  /** The raw addon, for debugging. */
  native,
};
