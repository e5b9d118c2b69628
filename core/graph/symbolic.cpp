#include "graph/symbolic.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cmath>
#include <cstring>
#include <set>

namespace tsr::core::graph {

bool SymExpr::symbolic() const {
  for (const auto& [names, coef] : terms)
    if (!names.empty()) return true;
  return false;
}

std::string SymExpr::str() const {
  std::vector<std::pair<std::vector<std::string>, int64_t>> order(terms.begin(), terms.end());
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  std::string s;
  for (const auto& [names, coef] : order) {
    int64_t c = coef;
    if (!s.empty()) s += c < 0 ? "-" : "+";
    else if (c < 0) s += "-";
    uint64_t mag = c < 0 ? 0 - static_cast<uint64_t>(c) : static_cast<uint64_t>(c);
    if (names.empty() || mag != 1) s += std::to_string(mag) + (names.empty() ? "" : "*");
    for (size_t i = 0; i < names.size(); ++i) s += (i ? "*" : "") + names[i];
  }
  return s.empty() ? "0" : s;
}

bool SymExpr::eval(const SymbolEnv& env, int64_t* out) const {
  int64_t v = 0;
  for (const auto& [names, coef] : terms) {
    int64_t t = coef;
    for (const std::string& n : names) {
      auto it = env.find(n);
      if (it == env.end() || __builtin_mul_overflow(t, it->second, &t)) return false;
    }
    if (__builtin_add_overflow(v, t, &v)) return false;
  }
  *out = v;
  return true;
}

bool parse_sym_expr(const std::string& text, size_t start, SymExpr* out, size_t* consumed, std::string* error) {
  size_t p = start;
  auto space = [&] {
    while (p < text.size() && (text[p] == ' ' || text[p] == '\t')) ++p;
  };
  SymExpr e;
  bool first = true;
  for (;;) {
    space();
    int64_t sign = 1;
    if (p < text.size() && (text[p] == '+' || text[p] == '-')) {
      if (first && text[p] == '+') break;
      sign = text[p] == '-' ? -1 : 1;
      ++p;
      space();
    } else if (!first) {
      break;
    }
    // term: factor ('*' factor)*; the whole int64 range, INT64_MIN included.
    __int128 coef = sign;
    const __int128 kMax = static_cast<__int128>(INT64_MAX) + 1;
    std::vector<std::string> names;
    for (;;) {
      space();
      if (p < text.size() && std::isdigit(static_cast<unsigned char>(text[p]))) {
        __int128 mag = 0;
        while (p < text.size() && std::isdigit(static_cast<unsigned char>(text[p]))) {
          mag = mag * 10 + (text[p++] - '0');
          if (mag > kMax) break;
        }
        coef *= mag;
        if (mag > kMax || coef > INT64_MAX || coef < -kMax) {
          *error = "integer out of range";
          *consumed = p - start;
          return false;
        }
      } else if (p < text.size() && (std::isalpha(static_cast<unsigned char>(text[p])) || text[p] == '_')) {
        size_t b = p;
        while (p < text.size() && (std::isalnum(static_cast<unsigned char>(text[p])) || text[p] == '_')) ++p;
        names.push_back(text.substr(b, p - b));
      } else {
        *error = "expected an integer or a symbol";
        *consumed = p - start;
        return false;
      }
      space();
      if (p < text.size() && text[p] == '*') {
        ++p;
        continue;
      }
      break;
    }
    std::sort(names.begin(), names.end());
    if (std::adjacent_find(names.begin(), names.end()) != names.end()) {
      *error = "a symbol appears twice in one product (sizes are multilinear in the symbols)";
      *consumed = p - start;
      return false;
    }
    int64_t& c = e.terms[names];
    if (__builtin_add_overflow(c, static_cast<int64_t>(coef), &c)) {
      *error = "integer out of range";
      *consumed = p - start;
      return false;
    }
    if (c == 0) e.terms.erase(names);
    first = false;
  }
  *out = std::move(e);
  *consumed = p - start;
  return true;
}

namespace {

std::string trace_point(const std::vector<std::string>& syms, const std::vector<int64_t>& x) {
  std::string s;
  for (size_t i = 0; i < syms.size(); ++i) s += (i ? ", " : "") + syms[i] + "=" + std::to_string(x[i]);
  return s;
}

// Fits v_t = sum_U c_U prod_{i in U} x_{t,i} over every subset U of the symbols, exactly:
// least squares in doubles, coefficients rounded, then checked on every trace in integers.
bool fit(const std::vector<std::string>& syms, const std::vector<std::vector<int64_t>>& x,
         const std::vector<int64_t>& v, SymExpr* out) {
  const size_t k = syms.size(), m = size_t(1) << k, n = v.size();
  std::vector<std::vector<double>> a(n, std::vector<double>(m));
  for (size_t t = 0; t < n; ++t)
    for (size_t u = 0; u < m; ++u) {
      double p = 1;
      for (size_t i = 0; i < k; ++i)
        if (u >> i & 1) p *= static_cast<double>(x[t][i]);
      a[t][u] = p;
    }
  // Normal equations (A^T A) c = A^T v, Gaussian elimination with partial pivoting.
  std::vector<std::vector<double>> g(m, std::vector<double>(m + 1, 0.0));
  for (size_t r = 0; r < m; ++r) {
    for (size_t c = 0; c < m; ++c)
      for (size_t t = 0; t < n; ++t) g[r][c] += a[t][r] * a[t][c];
    for (size_t t = 0; t < n; ++t) g[r][m] += a[t][r] * static_cast<double>(v[t]);
  }
  for (size_t col = 0; col < m; ++col) {
    size_t piv = col;
    for (size_t r = col + 1; r < m; ++r)
      if (std::fabs(g[r][col]) > std::fabs(g[piv][col])) piv = r;
    if (std::fabs(g[piv][col]) < 1e-9) return false;  // the traces do not pin the coefficients down
    std::swap(g[col], g[piv]);
    for (size_t r = 0; r < m; ++r) {
      if (r == col) continue;
      double f = g[r][col] / g[col][col];
      for (size_t c = col; c <= m; ++c) g[r][c] -= f * g[col][c];
    }
  }
  SymExpr e;
  std::vector<int64_t> coef(m);
  for (size_t u = 0; u < m; ++u) {
    double c = g[u][m] / g[u][u];
    if (!(std::fabs(c) < 9e15)) return false;
    coef[u] = std::llround(c);
  }
  for (size_t t = 0; t < n; ++t) {  // exactly, without overflow: sizes are far below 2^40
    __int128 s = 0;
    for (size_t u = 0; u < m; ++u) {
      __int128 p = coef[u];
      for (size_t i = 0; i < k; ++i)
        if (u >> i & 1) p *= x[t][i];
      if (p > (__int128(1) << 100) || p < -(__int128(1) << 100)) return false;
      s += p;
    }
    if (s != v[t]) return false;
  }
  for (size_t u = 0; u < m; ++u) {
    if (coef[u] == 0) continue;
    std::vector<std::string> names;
    for (size_t i = 0; i < k; ++i)
      if (u >> i & 1) names.push_back(syms[i]);
    e.terms[names] = coef[u];
  }
  *out = std::move(e);
  return true;
}

struct Generalizer {
  std::vector<std::unique_ptr<tsr_model_s>>& tr;
  std::vector<std::string> syms;
  std::vector<std::vector<int64_t>> x;  // per trace, the symbols' values

  static tsr_status_t fail(const std::string& msg) { return make_status(TSR_INVALID_ARGUMENT, "generalize: " + msg); }

  tsr_status_t symbols() {
    for (size_t t = 0; t < tr.size(); ++t) {
      std::map<std::string, int64_t> env;
      const Graph& g = *tr[t];
      for (int id : g.inputs)
        for (const Dim& d : g.values[static_cast<size_t>(id)].type.dims)
          if (!d.sym.empty()) env[d.sym] = d.size;
      std::vector<std::string> names;
      std::vector<int64_t> vals;
      for (const auto& [n, v] : env) names.push_back(n), vals.push_back(v);
      if (t == 0) syms = names;
      else if (names != syms) return fail("trace " + std::to_string(t) + " has other symbolic dims than trace 0");
      x.push_back(vals);
    }
    if (syms.empty()) return fail("the inputs have no symbolic dims (nothing to generalize)");
    if (syms.size() > 4) return fail("at most 4 symbols (" + std::to_string(syms.size()) + " given)");
    size_t need = (size_t(1) << syms.size()) + 1;
    if (tr.size() < need)
      return fail(std::to_string(syms.size()) + " symbol(s) need " + std::to_string(need) + " traces at distinct sizes, got " +
                  std::to_string(tr.size()));
    return nullptr;
  }

  // The int at `what` takes values vals across the traces: constant, or fitted into *e.
  tsr_status_t ints(const std::vector<int64_t>& vals, const std::string& what, SymExpr* e, bool* varies) {
    *varies = false;
    for (int64_t v : vals) *varies = *varies || v != vals[0];
    if (!*varies) return nullptr;
    if (fit(syms, x, vals, e)) return nullptr;
    std::string seen;
    for (size_t t = 0; t < vals.size(); ++t)
      seen += (t ? "; " : "") + std::to_string(vals[t]) + " at " + trace_point(syms, x[t]);
    return fail(what + " is not a multilinear function of the symbols (" + seen +
                "): compute it with ops, or keep that dim fixed");
  }

  std::string node_desc(const Graph& g, size_t i) {
    const Node& n = g.nodes[i];
    std::string s = "node " + std::to_string(i) + " (";
    for (size_t k = 0; k < n.outputs.size(); ++k) s += (k ? ", %" : "%") + g.values[static_cast<size_t>(n.outputs[k])].name;
    return s + (n.outputs.empty() ? "" : " = ") + n.callee.name() + ")";
  }

  tsr_status_t types(Graph& base, int id, const std::string& what) {
    Value& v = base.values[static_cast<size_t>(id)];
    for (size_t t = 1; t < tr.size(); ++t) {
      const Value& o = tr[t]->values[static_cast<size_t>(id)];
      if (o.type.dtype != v.type.dtype || o.type.dims.size() != v.type.dims.size())
        return fail(what + " is " + type_str(v.type) + " in trace 0 but " + type_str(o.type) + " in trace " +
                    std::to_string(t));
    }
    for (size_t d = 0; d < v.type.dims.size(); ++d) {
      if (!v.type.dims[d].sym.empty()) continue;  // an input's symbol
      std::vector<int64_t> vals;
      for (auto& g : tr) vals.push_back(g->values[static_cast<size_t>(id)].type.dims[d].size);
      SymExpr e;
      bool varies = false;
      TSR_RETURN_IF_ERROR(ints(vals, what + " dim " + std::to_string(d), &e, &varies));
      if (varies) v.type.dims[d].sym = e.str();
    }
    return nullptr;
  }

  tsr_status_t run(std::unique_ptr<tsr_model_s>* out) {
    TSR_RETURN_IF_ERROR(symbols());
    Graph& base = *tr[0];
    for (size_t t = 1; t < tr.size(); ++t) {
      const Graph& g = *tr[t];
      if (g.values.size() != base.values.size() || g.nodes.size() != base.nodes.size() ||
          g.inputs != base.inputs || g.weights != base.weights || g.outputs != base.outputs)
        return fail("trace " + std::to_string(t) + " (" + trace_point(syms, x[t]) + ") recorded " +
                    std::to_string(g.nodes.size()) + " nodes and " + std::to_string(g.values.size()) +
                    " values where trace 0 recorded " + std::to_string(base.nodes.size()) + " and " +
                    std::to_string(base.values.size()) +
                    ": the traced code runs other ops at other sizes (control flow on a size)");
      for (size_t i = 0; i < g.values.size(); ++i)
        if (g.values[i].name != base.values[i].name || g.values[i].kind != base.values[i].kind)
          return fail("value %" + base.values[i].name + " of trace 0 is %" + g.values[i].name + " in trace " +
                      std::to_string(t));
    }
    for (int id : base.weights) {
      const Value& w = base.values[static_cast<size_t>(id)];
      for (size_t t = 1; t < tr.size(); ++t) {
        const Value& o = tr[t]->values[static_cast<size_t>(id)];
        bool same = o.type.dtype == w.type.dtype && o.type.dims == w.type.dims && o.inline_scalar == w.inline_scalar;
        if (same && w.inline_scalar)
          same = o.scalar.tag == w.scalar.tag && std::memcmp(&o.scalar.u, &w.scalar.u, sizeof(int64_t)) == 0;
        if (!same)
          return fail("the " + std::string(w.kind == ValueKind::Param ? "param" : "const") + " %" + w.name + " is " +
                      type_str(w.type) + " in trace 0 but " + type_str(o.type) + " in trace " + std::to_string(t) +
                      " (" + trace_point(syms, x[t]) +
                      "): a tensor the traced code makes outside ops, or a scalar from a size, cannot follow a dynamic dim");
      }
    }
    for (size_t i = 0; i < base.nodes.size(); ++i) {
      Node& n = base.nodes[i];
      const Schema& schema = n.callee.schema();
      for (size_t t = 1; t < tr.size(); ++t) {
        const Node& o = tr[t]->nodes[i];
        if (o.callee.name() != n.callee.name() || o.args.size() != n.args.size())
          return fail(node_desc(base, i) + " calls " + o.callee.name() + " in trace " + std::to_string(t) +
                      ": the traced code runs other ops at other sizes");
      }
      for (size_t k = 0; k < n.args.size(); ++k) {
        Arg& a = n.args[k];
        std::string what = node_desc(base, i) + " argument '" + schema.args[k].name + "'";
        for (size_t t = 1; t < tr.size(); ++t) {
          const Arg& o = tr[t]->nodes[i].args[k];
          bool shape_ok = o.tag == a.tag && o.ints.size() == a.ints.size() && o.values == a.values;
          Arg oa = o, aa = a;  // the rest must match exactly
          oa.i = aa.i = 0;
          oa.ints = aa.ints;
          if (!shape_ok || !(oa == aa))
            return fail(what + " differs between trace 0 and trace " + std::to_string(t) + " (" +
                        trace_point(syms, x[t]) + ") in a way sizes cannot express");
        }
        if (a.tag == TSR_VALUE_INT) {
          std::vector<int64_t> vals;
          for (auto& g : tr) vals.push_back(g->nodes[i].args[k].i);
          SymExpr e;
          bool varies = false;
          TSR_RETURN_IF_ERROR(ints(vals, what, &e, &varies));
          if (varies) a.sym.emplace_back(0, e);
        } else if (a.tag == TSR_VALUE_INT_LIST) {
          for (size_t j = 0; j < a.ints.size(); ++j) {
            std::vector<int64_t> vals;
            for (auto& g : tr) vals.push_back(g->nodes[i].args[k].ints[j]);
            SymExpr e;
            bool varies = false;
            TSR_RETURN_IF_ERROR(ints(vals, what + " element " + std::to_string(j), &e, &varies));
            if (varies) a.sym.emplace_back(j, e);
          }
        }
      }
      for (int id : n.outputs) TSR_RETURN_IF_ERROR(types(base, id, "the result %" + base.values[static_cast<size_t>(id)].name));
    }
    *out = std::move(tr[0]);
    return nullptr;
  }
};

}  // namespace

tsr_status_t generalize(std::vector<std::unique_ptr<tsr_model_s>>& traces, std::unique_ptr<tsr_model_s>* out) {
  if (traces.empty()) return make_status(TSR_INVALID_ARGUMENT, "generalize: no traces");
  for (auto& t : traces)
    if (!t) return make_status(TSR_INVALID_ARGUMENT, "generalize: a trace is NULL");
  Generalizer g{traces, {}, {}};
  return g.run(out);
}

}  // namespace tsr::core::graph
