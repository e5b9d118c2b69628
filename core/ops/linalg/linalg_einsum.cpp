// einsum as a composite of views (diagonals, permutes, expands), sums and bmm: every step is an
// op with a formula, so gradients (and double backward) come for free.
//
// Plan: each operand first takes the diagonal of repeated labels and sums away labels no other
// operand or the output uses; operands are then folded left to right, each pair contracted by
// one bmm over [shared kept labels | left-only | contracted] x [... | contracted | right-only].
#include <algorithm>
#include <string>

#include "ops/composite.hpp"
#include "ops/op_table.hpp"

namespace tsr::core {

namespace {

// Labels: 0..51 for letters, 52+ for the dims an ellipsis stands for (right-aligned).
constexpr int kEllBase = 52;

int letter_id(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  return -1;
}

struct Term {
  std::vector<int> labels;  // per dim, after ellipsis expansion
  bool has_ellipsis = false;
};

struct Operand {
  tsr::Tensor t;
  std::vector<int> labels;  // one per dim, distinct
};

std::string shp(const std::vector<int64_t>& s) { return shape_str(s.data(), static_cast<int>(s.size())); }

// Parses one term's letters and "..." (labels filled in by the caller once the ellipsis
// width is known: -1 marks the ellipsis position).
std::vector<int> parse_term(const CArgs& a, const std::string& s, bool* ell) {
  std::vector<int> out;
  *ell = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == ' ') continue;
    if (c == '.') {
      if (*ell || s.compare(i, 3, "...") != 0)
        a.fail(TSR_INVALID_ARGUMENT, "invalid ellipsis in subscript '" + s + "' (one '...' per term)");
      *ell = true;
      out.push_back(-1);
      i += 2;
      continue;
    }
    int id = letter_id(c);
    if (id < 0)
      a.fail(TSR_INVALID_ARGUMENT, std::string("invalid subscript '") + c + "' in '" + s + "' (letters a-z, A-Z)");
    out.push_back(id);
  }
  return out;
}

std::vector<int> expand_ellipsis(const std::vector<int>& raw, int width, int ell_total) {
  std::vector<int> r;
  for (int l : raw) {
    if (l != -1) {
      r.push_back(l);
      continue;
    }
    for (int k = 0; k < width; ++k) r.push_back(kEllBase + (ell_total - width) + k);
  }
  return r;
}

// Diagonal over repeated labels (a strided view), leaving one dim per distinct label.
Operand dedup(const CArgs& a, const tsr::Tensor& t, const std::vector<int>& labels) {
  std::vector<int> uniq;
  std::vector<int64_t> sizes, strides;
  auto ts = t.sizes(), tst = t.strides();
  for (size_t d = 0; d < labels.size(); ++d) {
    auto it = std::find(uniq.begin(), uniq.end(), labels[d]);
    if (it == uniq.end()) {
      uniq.push_back(labels[d]);
      sizes.push_back(ts[d]);
      strides.push_back(tst[d]);
    } else {
      size_t k = static_cast<size_t>(it - uniq.begin());
      if (sizes[k] != ts[d])
        a.fail(TSR_INVALID_ARGUMENT, "subscript repeated in one operand needs equal sizes, got " +
                                         std::to_string(sizes[k]) + " and " + std::to_string(ts[d]) + " in " + shp(ts));
      strides[k] += tst[d];
    }
  }
  if (uniq.size() == labels.size()) return {t, labels};
  return {t.as_strided(sizes, strides, t.storage_offset()), uniq};
}

tsr::Tensor sum_keep_dtype(const tsr::Tensor& t, std::vector<int64_t> dims) {
  if (dims.empty()) return t;
  return tsr::sum(t, std::move(dims), false, t.dtype());
}

// Sums away the labels of `o` for which keep(label) is false.
template <class Keep>
void sum_unneeded(Operand& o, Keep keep) {
  std::vector<int64_t> dims;
  std::vector<int> rest;
  for (size_t d = 0; d < o.labels.size(); ++d) {
    if (keep(o.labels[d]))
      rest.push_back(o.labels[d]);
    else
      dims.push_back(static_cast<int64_t>(d));
  }
  if (dims.empty()) return;
  o.t = sum_keep_dtype(o.t, dims);
  o.labels = rest;
}

int pos_of(const std::vector<int>& v, int l) {
  auto it = std::find(v.begin(), v.end(), l);
  return it == v.end() ? -1 : static_cast<int>(it - v.begin());
}

tsr::Tensor einsum_fn(CArgs& a) {
  std::string eq = a.str(0);
  std::vector<tsr::Tensor> ts = a.tensors(1);
  if (ts.empty()) a.fail(TSR_INVALID_ARGUMENT, "must provide at least one operand");
  size_t arrow = eq.find("->");
  std::string lhs = arrow == std::string::npos ? eq : eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t p = 0;;) {
    size_t c = lhs.find(',', p);
    terms.push_back(lhs.substr(p, c == std::string::npos ? std::string::npos : c - p));
    if (c == std::string::npos) break;
    p = c + 1;
  }
  if (terms.size() != ts.size())
    a.fail(TSR_INVALID_ARGUMENT, "equation '" + eq + "' has " + std::to_string(terms.size()) + " operand terms but " +
                                     std::to_string(ts.size()) + " tensors were given");
  for (size_t i = 1; i < ts.size(); ++i)
    if (ts[i].dtype() != ts[0].dtype())
      a.fail(TSR_INVALID_ARGUMENT, std::string("expected all operands to have the same dtype, got ") +
                                       dtype_name(ts[0].dtype()) + " and " + dtype_name(ts[i].dtype()));
  // Ellipsis widths: each operand's ellipsis covers its dims beyond the letters.
  std::vector<std::vector<int>> raw(ts.size());
  std::vector<int> width(ts.size(), 0);
  int ell_total = 0;
  for (size_t i = 0; i < ts.size(); ++i) {
    bool ell;
    raw[i] = parse_term(a, terms[i], &ell);
    int letters = static_cast<int>(raw[i].size()) - (ell ? 1 : 0);
    int nd = static_cast<int>(ts[i].dim());
    if (ell ? nd < letters : nd != letters)
      a.fail(TSR_INVALID_ARGUMENT, "subscript '" + terms[i] + "' does not match operand " + std::to_string(i) +
                                       " of shape " + shp(ts[i].sizes()));
    width[i] = ell ? nd - letters : 0;
    ell_total = std::max(ell_total, width[i]);
  }
  // Label sizes (1 broadcasts against n, as PyTorch allows for ellipsis dims and repeated labels).
  std::vector<std::vector<int>> labels(ts.size());
  std::vector<int64_t> lsize(kEllBase + 64, -1);
  std::vector<int> count(kEllBase + 64, 0);
  for (size_t i = 0; i < ts.size(); ++i) {
    labels[i] = expand_ellipsis(raw[i], width[i], ell_total);
    auto s = ts[i].sizes();
    for (size_t d = 0; d < labels[i].size(); ++d) {
      int l = labels[i][d];
      ++count[l];
      if (lsize[l] == -1 || lsize[l] == 1)
        lsize[l] = s[d];
      else if (s[d] != 1 && s[d] != lsize[l])
        a.fail(TSR_INVALID_ARGUMENT, "operands do not broadcast: subscript size " + std::to_string(lsize[l]) + " vs " +
                                         std::to_string(s[d]) + " (operand " + std::to_string(i) + " of shape " +
                                         shp(s) + ")");
    }
  }
  std::vector<int> out;
  if (arrow != std::string::npos) {
    bool ell;
    std::vector<int> r = parse_term(a, eq.substr(arrow + 2), &ell);
    out = expand_ellipsis(r, ell_total, ell_total);
    for (size_t i = 0; i < out.size(); ++i) {
      if (count[out[i]] == 0)
        a.fail(TSR_INVALID_ARGUMENT,
               "output subscript " + std::to_string(i) + " of '" + eq + "' appears in no operand");
      if (std::count(out.begin(), out.end(), out[i]) > 1)
        a.fail(TSR_INVALID_ARGUMENT, "output subscript repeated in '" + eq + "'");
    }
  } else {
    // Implicit output: ellipsis dims, then labels used once, alphabetically.
    for (int k = 0; k < ell_total; ++k) out.push_back(kEllBase + k);
    for (int l = 0; l < kEllBase; ++l)
      if (count[l] == 1) out.push_back(l);
  }
  auto in_out = [&](int l) { return pos_of(out, l) >= 0; };
  // Per operand: diagonals, then sum labels used nowhere else.
  std::vector<Operand> ops;
  for (size_t i = 0; i < ts.size(); ++i) {
    Operand o = dedup(a, ts[i], labels[i]);
    sum_unneeded(o, [&](int l) {
      if (in_out(l)) return true;
      for (size_t j = 0; j < ts.size(); ++j)
        if (j != i && pos_of(labels[j], l) >= 0) return true;
      return false;
    });
    ops.push_back(std::move(o));
  }
  Operand acc = ops[0];
  for (size_t i = 1; i < ops.size(); ++i) {
    Operand x = ops[i];
    auto needed = [&](int l) {
      if (in_out(l)) return true;
      for (size_t j = i + 1; j < ops.size(); ++j)
        if (pos_of(ops[j].labels, l) >= 0) return true;
      return false;
    };
    std::vector<int> batch, left, right, contract;
    for (int l : acc.labels) {
      if (pos_of(x.labels, l) >= 0)
        (needed(l) ? batch : contract).push_back(l);
      else
        left.push_back(l);
    }
    for (int l : x.labels)
      if (pos_of(acc.labels, l) < 0) right.push_back(l);
    // Shared labels broadcast (size 1 against n): expand both sides to the full size.
    auto expand_shared = [&](Operand& o) {
      auto s = o.t.sizes();
      bool any = false;
      for (size_t d = 0; d < o.labels.size(); ++d) {
        int l = o.labels[d];
        bool shared = pos_of(batch, l) >= 0 || pos_of(contract, l) >= 0;
        if (shared && s[d] != lsize[l]) {
          s[d] = lsize[l];
          any = true;
        }
      }
      if (any) o.t = o.t.expand(s);
    };
    expand_shared(acc);
    expand_shared(x);
    auto prod = [&](const std::vector<int>& ls) {
      int64_t n = 1;
      for (int l : ls) n *= lsize[l];
      return n;
    };
    // Left-only / right-only labels of size 1 in the operand take their own size there.
    auto size_in = [&](const Operand& o, int l) { return o.t.size(pos_of(o.labels, l)); };
    int64_t nb = prod(batch), nc = prod(contract), nl = 1, nr = 1;
    std::vector<int64_t> perm_a, perm_x, res_shape;
    for (int l : batch)
      perm_a.push_back(pos_of(acc.labels, l)), perm_x.push_back(pos_of(x.labels, l)), res_shape.push_back(lsize[l]);
    for (int l : left)
      perm_a.push_back(pos_of(acc.labels, l)), nl *= size_in(acc, l), res_shape.push_back(size_in(acc, l));
    for (int l : contract) perm_a.push_back(pos_of(acc.labels, l)), perm_x.push_back(pos_of(x.labels, l));
    for (int l : right) perm_x.push_back(pos_of(x.labels, l)), nr *= size_in(x, l), res_shape.push_back(size_in(x, l));
    tsr::Tensor am = acc.t.permute(perm_a).reshape({nb, nl, nc});
    tsr::Tensor xm = x.t.permute(perm_x).reshape({nb, nc, nr});
    acc.t = tsr::bmm(am, xm).reshape(res_shape);
    std::vector<int> nl_labels = batch;
    nl_labels.insert(nl_labels.end(), left.begin(), left.end());
    nl_labels.insert(nl_labels.end(), right.begin(), right.end());
    acc.labels = nl_labels;
    // Labels no longer needed that survived (left/right-only of the fold) are summed now.
    sum_unneeded(acc, needed);
  }
  sum_unneeded(acc, in_out);
  std::vector<int64_t> perm;
  std::vector<int64_t> final_shape;
  for (int l : out) {
    int p = pos_of(acc.labels, l);
    perm.push_back(p);
    final_shape.push_back(acc.t.size(p));
  }
  tsr::Tensor r = perm.empty() ? acc.t : acc.t.permute(perm);
  // Ellipsis dims of size 1 in every operand broadcast to the largest seen.
  bool grow = false;
  for (size_t i = 0; i < out.size(); ++i)
    if (final_shape[i] != lsize[out[i]]) final_shape[i] = lsize[out[i]], grow = true;
  if (grow) r = r.expand(final_shape);
  // Like PyTorch, a pure relabelling ("ij->ji", "ii->i") returns a view of the operand.
  return r;
}

}  // namespace

TSR_CORE_OPS(linalg_einsum) {
  v.push_back(composite_op("einsum(str equation, Tensor[] tensors) -> Tensor", composite<einsum_fn>));
}

}  // namespace tsr::core
