// OpInfos of the shape family. Every op is data movement, so every dtype is listed; samples
// cover odd, size-1 and empty shapes (inputs with a size-1 dim have at most one element: the
// runner needs every larger input to have a non-contiguous layout). Fill values are 0 or 1 so
// that the float64 reference matches bool results.
#include <string>

#include "opinfo.hpp"

namespace tsr::conformance {
namespace {

const std::vector<tsr_dtype_t> kAll = {TSR_BOOL, TSR_U8,  TSR_I8,   TSR_I16, TSR_I32,
                                       TSR_I64,  TSR_F16, TSR_BF16, TSR_F32, TSR_F64};

std::string desc(const std::vector<Shape>& shapes, const std::string& extra) {
  std::string r;
  for (size_t k = 0; k < shapes.size(); ++k) {
    r += k ? " x [" : "[";
    for (size_t i = 0; i < shapes[k].size(); ++i) r += (i ? ", " : "") + std::to_string(shapes[k][i]);
    r += "]";
  }
  return r + (extra.empty() ? "" : " " + extra);
}

using Fn = std::function<tsr::Tensor(const Tensors&)>;
struct Case {
  std::vector<Shape> shapes;
  std::string what;
  Fn fn;
};

// One OpInfo whose samples call fn on random float64 inputs of the given shapes.
OpInfo info(const std::string& name, std::vector<Case> cases, bool differentiable = true) {
  OpInfo o;
  o.name = name;
  o.dtypes = kAll;
  o.differentiable = differentiable;
  o.samples = [cases](uint64_t seed) {
    std::vector<Sample> v;
    for (const Case& c : cases) {
      Sample s;
      s.desc = desc(c.shapes, c.what);
      for (size_t k = 0; k < c.shapes.size(); ++k) s.inputs.push_back(random_f64(c.shapes[k], seed + k));
      Fn fn = c.fn;
      s.run = [fn](const Tensors& in) { return Tensors{fn(in)}; };
      v.push_back(std::move(s));
    }
    return v;
  };
  return o;
}

// An OpInfo with an out= form through the named op (schema args given after the inputs).
template <class MakeArgs>
OpInfo info_out(const std::string& name, std::vector<Shape> shapes_list, MakeArgs args_of) {
  OpInfo o;
  o.name = name;
  o.dtypes = kAll;
  o.samples = [name, shapes_list, args_of](uint64_t seed) {
    std::vector<Sample> v;
    for (size_t i = 0; i < shapes_list.size(); ++i) {
      Sample s;
      s.desc = desc({shapes_list[i]}, "");
      s.inputs.push_back(random_f64(shapes_list[i], seed + i));
      s.run = [name, args_of](const Tensors& in) { return Tensors{args_of(in, Tensors{})}; };
      s.run_out = [name, args_of](const Tensors& in, Tensors& outs) { args_of(in, outs); };
      v.push_back(std::move(s));
    }
    return v;
  };
  return o;
}

}  // namespace

TSR_OPINFOS(shape) {
  v.push_back(info("cat", {
                              {{{2, 3}, {2, 2}, {2, 0}},
                               "dim 1",
                               [](const Tensors& t) {
                                 return tsr::cat({t[0], t[1], t[2]}, 1);
                               }},
                              {{{3, 5}, {2, 5}},
                               "dim 0",
                               [](const Tensors& t) {
                                 return tsr::cat({t[0], t[1]}, 0);
                               }},
                              {{{0}, {2, 3, 1}, {2, 3, 4}},
                               "legacy empty, dim -1",
                               [](const Tensors& t) {
                                 return tsr::cat({t[0], t[1], t[2]}, -1);
                               }},
                              {{{7}}, "single", [](const Tensors& t) { return tsr::cat({t[0]}, 0); }},
                          }));
  v.push_back(info("stack", {
                                {{{2, 3}, {2, 3}},
                                 "dim 1",
                                 [](const Tensors& t) {
                                   return tsr::stack({t[0], t[1]}, 1);
                                 }},
                                {{{0, 3}, {0, 3}, {0, 3}},
                                 "dim -1",
                                 [](const Tensors& t) {
                                   return tsr::stack({t[0], t[1], t[2]}, -1);
                                 }},
                            }));
  v.push_back(info("hstack", {{{{3}, {4}},
                               "",
                               [](const Tensors& t) {
                                 return tsr::hstack({t[0], t[1]});
                               }},
                              {{{2, 3}, {2, 2}}, "", [](const Tensors& t) {
                                 return tsr::hstack({t[0], t[1]});
                               }}}));
  v.push_back(info("vstack", {{{{3}, {2, 3}}, "", [](const Tensors& t) { return tsr::vstack({t[0], t[1]}); }}}));
  v.push_back(info("dstack", {{{{2, 3}, {2, 3, 2}}, "", [](const Tensors& t) { return tsr::dstack({t[0], t[1]}); }}}));
  v.push_back(
      info("flatten", {{{{2, 3, 5}}, "1..2", [](const Tensors& t) { return tsr::flatten(t[0], 1, 2).contiguous(); }},
                       {{{}}, "0-dim", [](const Tensors& t) { return tsr::flatten(t[0]).contiguous(); }}}));
  v.push_back(info("unflatten", {{{{2, 6}}, "dim 1 -> [3, -1]", [](const Tensors& t) {
                                    return tsr::unflatten(t[0], 1, {3, -1});
                                  }}}));
  v.push_back(info("movedim", {{{{2, 3, 5}}, "0 -> 2", [](const Tensors& t) { return tsr::movedim(t[0], 0, 2); }}}));
  v.push_back(info("moveaxis", {{{{2, 3, 5}}, "[0, 1] -> [2, 0]", [](const Tensors& t) {
                                   return tsr::moveaxis(t[0], {0, 1}, {2, 0});
                                 }}}));
  v.push_back(info("swapdims", {{{{2, 3, 5}}, "-1, 1", [](const Tensors& t) { return tsr::swapdims(t[0], -1, 1); }}}));
  v.push_back(info("swapaxes", {{{{2, 3, 5}}, "0, 2", [](const Tensors& t) { return tsr::swapaxes(t[0], 0, 2); }}}));
  v.push_back(info_out("flip", {{3, 5}, {2, 3, 4}, {0, 3}, {7}}, [](const Tensors& in, Tensors outs) {
    static const tsr::Op op("flip");
    std::vector<int64_t> dims = in[0].dim() >= 2 ? std::vector<int64_t>{0, -1} : std::vector<int64_t>{0};
    if (!outs.empty()) return tsr::call_out(op, outs[0], {in[0], dims});
    return tsr::call(op, {in[0], dims});
  }));
  v.push_back(info("fliplr", {{{{3, 4}}, "", [](const Tensors& t) { return tsr::fliplr(t[0]); }}}));
  v.push_back(info("flipud", {{{{3, 4}}, "", [](const Tensors& t) { return tsr::flipud(t[0]); }}}));
  v.push_back(info("roll", {{{{3, 5}},
                             "(1, -7) on (0, 1)",
                             [](const Tensors& t) {
                               return tsr::roll(t[0], {1, -7}, {0, 1});
                             }},
                            {{{3, 5}}, "flattened 4", [](const Tensors& t) { return tsr::roll(t[0], {4}); }},
                            {{{0, 2}}, "empty", [](const Tensors& t) { return tsr::roll(t[0], {1}, {0}); }}}));
  v.push_back(info("repeat", {{{{2, 3}},
                               "[2, 1, 3]",
                               [](const Tensors& t) {
                                 return tsr::repeat(t[0], {2, 1, 3});
                               }},
                              {{{}}, "0-dim [4]", [](const Tensors& t) { return tsr::repeat(t[0], {4}); }}}));
  v.push_back(info("tile", {{{{2, 3}}, "[2]", [](const Tensors& t) { return tsr::tile(t[0], {2}); }}}));
  v.push_back(info("repeat_interleave_int",
                   {{{{3, 2}}, "2 on dim 0", [](const Tensors& t) { return tsr::repeat_interleave(t[0], 2, 0); }},
                    {{{3, 2}}, "3 flattened", [](const Tensors& t) { return tsr::repeat_interleave(t[0], 3); }}}));
  v.push_back(info("repeat_interleave",
                   {{{{3, 2}}, "[1, 0, 2] on dim 0", [](const Tensors& t) {
                       return tsr::repeat_interleave(t[0], tsr::from_vector<int64_t>({1, 0, 2}, {3}, t[0].device()), 0);
                     }}}));
  v.push_back(info("narrow_copy",
                   {{{{4, 5}}, "dim 1, 1, 3", [](const Tensors& t) { return tsr::narrow_copy(t[0], 1, 1, 3); }}}));
  v.push_back(info_out("tril", {{4, 5}, {2, 3, 3}, {0, 3}, {1, 1}}, [](const Tensors& in, Tensors outs) {
    static const tsr::Op op("tril");
    if (!outs.empty()) return tsr::call_out(op, outs[0], {in[0], int64_t{-1}});
    return tsr::call(op, {in[0], int64_t{-1}});
  }));
  v.push_back(info_out("triu", {{4, 5}, {2, 3, 3}, {0, 3}}, [](const Tensors& in, Tensors outs) {
    static const tsr::Op op("triu");
    if (!outs.empty()) return tsr::call_out(op, outs[0], {in[0], int64_t{1}});
    return tsr::call(op, {in[0], int64_t{1}});
  }));
  v.push_back(info("diagonal",
                   {{{{3, 4, 5}}, "offset 1, dims 2, 0", [](const Tensors& t) { return tsr::diagonal(t[0], 1, 2, 0); }},
                    {{{4, 3}}, "offset -1", [](const Tensors& t) { return tsr::diagonal(t[0], -1); }}}));
  v.push_back(info("diag_embed", {{{{2, 3}}, "offset 1", [](const Tensors& t) { return tsr::diag_embed(t[0], 1); }},
                                  {{{0, 3}}, "empty batch", [](const Tensors& t) { return tsr::diag_embed(t[0]); }}}));
  v.push_back(info("diag", {{{{5}}, "1-D offset -2", [](const Tensors& t) { return tsr::diag(t[0], -2); }},
                            {{{3, 4}}, "2-D offset 1", [](const Tensors& t) { return tsr::diag(t[0], 1); }}}));
  v.push_back(info_out("constant_pad_nd", {{3, 4}, {2, 3, 5}, {0, 2}}, [](const Tensors& in, Tensors outs) {
    static const tsr::Op op("constant_pad_nd");
    std::vector<int64_t> pads{1, -1, 2, 0};
    if (!outs.empty()) return tsr::call_out(op, outs[0], {in[0], pads, int64_t{1}});
    return tsr::call(op, {in[0], pads, int64_t{1}});
  }));
  v.push_back(info("pad", {{{{2, 3, 4}},
                            "reflect (2, 1, 1, 2)",
                            [](const Tensors& t) {
                              return tsr::pad(t[0], {2, 1, 1, 2}, "reflect");
                            }},
                           {{{2, 3, 4}},
                            "replicate (3, -1, 0, 2)",
                            [](const Tensors& t) {
                              return tsr::pad(t[0], {3, -1, 0, 2}, "replicate");
                            }},
                           {{{2, 3, 4}},
                            "circular (4, 2)",
                            [](const Tensors& t) {
                              return tsr::pad(t[0], {4, 2}, "circular");
                            }},
                           {{{3, 4}}, "constant (1, 1) value 1", [](const Tensors& t) {
                              return tsr::pad(t[0], {1, 1}, "constant", 1.0);
                            }}}));
}

}  // namespace tsr::conformance
