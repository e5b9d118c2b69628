// Parity-only cases: OpInfos the dump appends after the conformance registry's (so their
// variant numbers follow the registry's: "median" here is median#1). They reach corners the
// conformance samples avoid on purpose (ties, zero spread, masks of other dtypes, dtype=
// arguments) because there the float64 self-reference or the finite-difference gradcheck cannot
// judge them, while PyTorch can. They are not in the conformance registry: the conformance
// suite would compare Tessera with itself there and learn nothing.
#include "extras.hpp"

#include <string>

namespace tsr::parity {

namespace {

using conf::OpInfo;
using conf::Sample;
using conf::Tensors;

Sample sample(std::string desc, Tensors inputs, std::function<Tensors(const Tensors&)> run) {
  Sample s;
  s.desc = std::move(desc);
  s.inputs = std::move(inputs);
  s.run = std::move(run);
  return s;
}

OpInfo info(const char* name, std::vector<tsr_dtype_t> dtypes, bool differentiable,
            std::function<std::vector<Sample>(uint64_t)> samples) {
  OpInfo o;
  o.name = name;
  o.dtypes = std::move(dtypes);
  o.differentiable = differentiable;
  o.samples = std::move(samples);
  return o;
}

Tensor values(std::vector<double> v, std::vector<int64_t> shape) { return tsr::from_vector(v, shape); }

const std::vector<tsr_dtype_t> kF = {TSR_F64, TSR_F32};

}  // namespace

std::vector<OpInfo> extra_opinfos() {
  std::vector<OpInfo> v;
  // A row of equal values: the standard deviation's gradient there is 0 in PyTorch.
  v.push_back(info("std", kF, true, [](uint64_t seed) {
    Tensor x = conf::random_f64({3, 4}, seed);
    x.select(0, 1).fill_(0.5);
    return std::vector<Sample>{
        sample("[3, 4] dim=[1], row 1 constant", {x}, [](const Tensors& t) { return Tensors{tsr::std(t[0], {1})}; })};
  }));
  v.push_back(info("std_mean", kF, true, [](uint64_t seed) {
    Tensor x = conf::random_f64({3, 4}, seed);
    x.select(0, 2).fill_(-1.0);
    return std::vector<Sample>{sample("[3, 4] dim=[1], row 2 constant", {x}, [](const Tensors& t) {
      auto r = tsr::std_mean(t[0], {1});
      return Tensors{r.first, r.second};
    })};
  }));
  // Ties in full reductions: PyTorch splits the gradient evenly among the tied elements.
  v.push_back(info("median", kF, true, [](uint64_t) {
    return std::vector<Sample>{sample("[2, 3] with ties", {values({1, 2, 2, 3, 2, 0}, {2, 3})},
                                      [](const Tensors& t) { return Tensors{tsr::median(t[0])}; })};
  }));
  v.push_back(info("max", kF, true, [](uint64_t) {
    return std::vector<Sample>{sample("[2, 3] with ties", {values({1, 3, 2, 3, 0, 3}, {2, 3})},
                                      [](const Tensors& t) { return Tensors{tsr::max(t[0])}; })};
  }));
  v.push_back(info("min", kF, true, [](uint64_t) {
    return std::vector<Sample>{sample("[5] with ties", {values({-1, 2, -1, 0, 4}, {5})},
                                      [](const Tensors& t) { return Tensors{tsr::min(t[0])}; })};
  }));
  // native_dropout's mask (random values: compared for shape and dtype).
  OpInfo nd = info("native_dropout", kF, false, [](uint64_t seed) {
    return std::vector<Sample>{sample("[6, 5] p 0.3 train", {conf::random_f64({6, 5}, seed)}, [](const Tensors& t) {
      static const tsr::Op op("native_dropout");  // ops cache their handle per object: one static
      return tsr::call_multi(op, {t[0], 0.3, true});
    })};
  });
  nd.deterministic = false;
  v.push_back(std::move(nd));
  // Masks of other dtypes as advanced indices.
  v.push_back(info("index", kF, false, [](uint64_t seed) {
    return std::vector<Sample>{
        sample("[3, 4][uint8 mask [3, 4]]",
               {conf::random_f64({3, 4}, seed), conf::random_mask({3, 4}, seed + 1).to(TSR_U8)},
               [](const Tensors& t) { return Tensors{tsr::index(t[0], {t[1]})}; }),
        sample("[3, 4][bool mask [3]]", {conf::random_f64({3, 4}, seed + 2), conf::random_mask({3}, seed + 3)},
               [](const Tensors& t) { return Tensors{tsr::index(t[0], {t[1]})}; }),
    };
  }));
  v.push_back(info("index_put", kF, false, [](uint64_t seed) {
    return std::vector<Sample>{
        sample("[3, 4][bool mask [3, 4]] = v [1]",
               {conf::random_f64({3, 4}, seed), conf::random_mask({3, 4}, seed + 1), conf::random_f64({1}, seed + 2)},
               [](const Tensors& t) { return Tensors{tsr::index_put(t[0], {t[1]}, t[2])}; })};
  }));
  // Integer input where PyTorch's CPU kernel takes one.
  v.push_back(info("avg_pool2d", {TSR_I64}, false, [](uint64_t seed) {
    return std::vector<Sample>{sample(
        "[1, 2, 4, 4] k2 int64", {conf::random_index({1, 2, 4, 4}, seed, -9, 9).to(TSR_F64)}, [](const Tensors& t) {
          return Tensors{tsr::call("avg_pool2d", {t[0], 2})};
        })};
  }));
  // sum with a dtype= argument.
  v.push_back(info("sum", {TSR_F64, TSR_I64}, false, [](uint64_t seed) {
    Tensor x = conf::random_index({3, 4}, seed, -1, 2).to(TSR_F64);
    return std::vector<Sample>{
        sample("[3, 4] dtype=bool", {x}, [](const Tensors& t) { return Tensors{tsr::sum(t[0], {}, false, TSR_BOOL)}; }),
        sample("[3, 4] dim=[1] dtype=int64", {x},
               [](const Tensors& t) { return Tensors{tsr::sum(t[0], {1}, false, TSR_I64)}; }),
    };
  }));
  // Type promotion across operand dtypes (the OpInfos give both operands one dtype), 0-dim
  // operands included: PyTorch's rules (a 0-dim tensor only decides the dtype when its category
  // is higher). The inputs carry their dtypes; the case dtype (float64) converts nothing.
  for (const char* name : {"add", "mul", "div", "maximum", "eq"}) {
    v.push_back(info(name, {TSR_F64}, false, [name](uint64_t seed) {
      struct Pair {
        tsr_dtype_t a, b;
        bool b_scalar;
      };
      const Pair pairs[] = {{TSR_I32, TSR_F32, false}, {TSR_U8, TSR_I8, false},    {TSR_BOOL, TSR_I64, false},
                            {TSR_I16, TSR_F64, false}, {TSR_U8, TSR_BOOL, false},  {TSR_F32, TSR_F64, false},
                            {TSR_I64, TSR_F32, false}, {TSR_BOOL, TSR_F32, false}, {TSR_I32, TSR_F64, true},
                            {TSR_F32, TSR_F64, true},  {TSR_U8, TSR_I64, true},    {TSR_BOOL, TSR_I32, true},
                            {TSR_I8, TSR_F32, true}};
      auto make = [](tsr_dtype_t dt, conf::Shape shape, uint64_t sd) {
        if (dt == TSR_BOOL) return conf::random_mask(shape, sd);
        // 1..9 for unsigned, +-1..9 otherwise: no zero divisors, exact in every dtype.
        Tensor m = conf::random_index(shape, sd, 1, 10);
        if (dt != TSR_U8) m = tsr::where(conf::random_mask(shape, sd + 1), m, tsr::neg(m));
        return m.to(dt);
      };
      std::vector<Sample> out;
      for (const Pair& p : pairs) {
        conf::Shape sb = p.b_scalar ? conf::Shape{} : conf::Shape{4};
        std::string desc =
            std::string(tsr::dtype_name(p.a)) + " [2, 4] x " + tsr::dtype_name(p.b) + (p.b_scalar ? " 0-dim" : " [4]");
        const tsr::Op* op = nullptr;
        static const tsr::Op add("add"), mul("mul"), div("div"), maximum("maximum"), eq("eq");
        const std::string n = name;
        op = n == "add" ? &add : n == "mul" ? &mul : n == "div" ? &div : n == "maximum" ? &maximum : &eq;
        out.push_back(sample(desc, {make(p.a, {2, 4}, seed), make(p.b, sb, seed + 7)}, [op](const Tensors& t) {
          return Tensors{tsr::call(*op, {t[0], t[1]})};
        }));
        seed += 13;
      }
      return out;
    }));
  }
  // Reductions and scans of integer and bool inputs (the OpInfos list floating dtypes only):
  // PyTorch accumulates sum/prod/cumsum/cumprod of integers and bool in int64.
  const std::vector<tsr_dtype_t> ints = {TSR_BOOL, TSR_U8, TSR_I8, TSR_I32, TSR_I64};
  auto small = [](uint64_t seed) { return conf::random_index({3, 5}, seed, -3, 4).to(TSR_F64); };
  v.push_back(info("sum", ints, false, [small](uint64_t seed) {
    return std::vector<Sample>{
        sample("[3, 5] all", {small(seed)}, [](const Tensors& t) { return Tensors{tsr::sum(t[0])}; }),
        sample("[3, 5] dim=[1]", {small(seed + 1)}, [](const Tensors& t) { return Tensors{tsr::sum(t[0], {1})}; })};
  }));
  v.push_back(info("prod", ints, false, [small](uint64_t seed) {
    return std::vector<Sample>{
        sample("[3, 5] all", {small(seed)}, [](const Tensors& t) { return Tensors{tsr::prod(t[0])}; })};
  }));
  v.push_back(info("cumsum", ints, false, [small](uint64_t seed) {
    return std::vector<Sample>{
        sample("[3, 5] dim=1", {small(seed)}, [](const Tensors& t) { return Tensors{tsr::cumsum(t[0], 1)}; })};
  }));
  v.push_back(info("amax", ints, false, [small](uint64_t seed) {
    return std::vector<Sample>{
        sample("[3, 5] dim=[0]", {small(seed)}, [](const Tensors& t) { return Tensors{tsr::amax(t[0], {0})}; })};
  }));
  // Integer arithmetic at the ends of narrow dtypes (the binary OpInfos use int32/int64 only):
  // two's-complement wraparound as PyTorch (C++) computes it, abs/neg of the most negative value.
  const std::vector<tsr_dtype_t> narrow = {TSR_U8, TSR_I8, TSR_I16};
  auto wide = [](conf::Shape shape, uint64_t seed) { return conf::random_index(shape, seed, -200, 200).to(TSR_F64); };
  for (const char* name : {"add", "mul", "sub"}) {
    v.push_back(info(name, narrow, false, [name, wide](uint64_t seed) {
      static const tsr::Op add("add"), mul("mul"), sub("sub");
      const std::string n = name;
      const tsr::Op* op = n == "add" ? &add : n == "mul" ? &mul : &sub;
      return std::vector<Sample>{
          sample("[4, 6] x [6] wrapping", {wide({4, 6}, seed), wide({6}, seed + 1)}, [op](const Tensors& t) {
            return Tensors{tsr::call(*op, {t[0], t[1]})};
          })};
    }));
  }
  for (const char* name : {"abs", "neg"}) {
    v.push_back(info(name, {TSR_I8, TSR_I16}, false, [name](uint64_t) {
      static const tsr::Op abs_op("abs"), neg_op("neg");
      const tsr::Op* op = std::string(name) == "abs" ? &abs_op : &neg_op;
      // -128 and -32768 after the wrap of the int64 conversion: the most negative values.
      return std::vector<Sample>{sample("[4] with the most negative value", {values({-128, 127, -32768, 5}, {4})},
                                        [op](const Tensors& t) { return Tensors{tsr::call(*op, {t[0]})}; })};
    }));
  }
  return v;
}

}  // namespace tsr::parity
