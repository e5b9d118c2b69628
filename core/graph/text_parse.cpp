// Parses the text form line by line with a small lexer; every error names line and column.
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <set>
#include <cerrno>
#include <string_view>

#include "graph/builtins.hpp"
#include "graph/symbolic.hpp"
#include "graph/text.hpp"
#include "tensor/dtype.hpp"

namespace tsr::core::graph {

namespace {

// Thrown inside the parser only; parse() turns it into a status.
struct ParseError {
  size_t col;
  std::string msg;
};

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }

class Lexer {
 public:
  explicit Lexer(const std::string& line) : s_(line) {}

  void skip_space() {
    while (p_ < s_.size() && (s_[p_] == ' ' || s_[p_] == '\t' || s_[p_] == '\r')) ++p_;
    if (p_ < s_.size() && s_[p_] == '#') p_ = s_.size();  // comment to the end of the line
  }
  bool at_end() {
    skip_space();
    return p_ >= s_.size();
  }
  // The column of the next token.
  size_t col() {
    skip_space();
    return p_ + 1;
  }
  char peek() {
    skip_space();
    return p_ < s_.size() ? s_[p_] : '\0';
  }
  [[noreturn]] void fail(const std::string& msg) const { throw ParseError{p_ + 1, msg}; }
  [[noreturn]] void fail_at(size_t col, const std::string& msg) const { throw ParseError{col, msg}; }

  bool accept(char c) {
    if (peek() != c) return false;
    ++p_;
    return true;
  }
  void expect(char c, const char* what) {
    if (!accept(c)) fail(std::string("expected '") + c + "' " + what + found());
  }
  std::string found() {
    if (at_end()) return ", found the end of the line";
    size_t e = p_;
    while (e < s_.size() && e < p_ + 12 && s_[e] != ' ') ++e;
    return ", found '" + std::string(s_.substr(p_, e - p_)) + "'";
  }

  // letters, digits, '_' and '.', plus "::name" (op namespaces) and ":N" (device indices).
  std::string ident() {
    skip_space();
    size_t b = p_;
    if (p_ >= s_.size() || !ident_start(s_[p_])) fail("expected a name" + found());
    while (p_ < s_.size() && ident_char(s_[p_])) ++p_;
    for (;;) {
      if (p_ + 2 < s_.size() && s_[p_] == ':' && s_[p_ + 1] == ':' && ident_start(s_[p_ + 2])) {
        p_ += 2;
        while (p_ < s_.size() && ident_char(s_[p_])) ++p_;
      } else if (p_ + 1 < s_.size() && s_[p_] == ':' && std::isdigit(static_cast<unsigned char>(s_[p_ + 1]))) {
        ++p_;
        while (p_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[p_]))) ++p_;
      } else {
        break;
      }
    }
    return std::string(s_.substr(b, p_ - b));
  }
  bool at_ident() { return ident_start(peek()); }

  // %name
  std::string value_name() {
    skip_space();
    if (p_ >= s_.size() || s_[p_] != '%') fail("expected a value (%name)" + found());
    size_t b = ++p_;
    while (p_ < s_.size() && ident_char(s_[p_])) ++p_;
    if (p_ == b) fail("expected a value name after '%'");
    return std::string(s_.substr(b, p_ - b));
  }

  // A number: is_float tells whether it was written as one (a '.', an exponent, inf, nan).
  bool number(int64_t* i, double* d, bool* is_float) {
    skip_space();
    size_t b = p_;
    if (p_ < s_.size() && (s_[p_] == '-' || s_[p_] == '+')) ++p_;
    if (s_.compare(p_, 3, "inf") == 0 || s_.compare(p_, 3, "nan") == 0) {
      bool nan = s_[p_] == 'n';
      p_ += 3;
      if (p_ < s_.size() && ident_char(s_[p_])) {
        p_ = b;
        return false;
      }
      *is_float = true;
      *d = nan ? std::nan("") : (s_[b] == '-' ? -INFINITY : INFINITY);
      return true;
    }
    if (p_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[p_]))) {
      p_ = b;
      return false;
    }
    const char* start = s_.data() + b;
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(start, &end, 10);
    bool int_ok = errno == 0;
    char* dend = nullptr;
    double dv = std::strtod(start, &dend);
    if (dend > end) {  // '.', or an exponent: a float
      *is_float = true;
      *d = dv;
      p_ = static_cast<size_t>(dend - s_.data());
    } else {
      if (!int_ok) fail("integer out of range");
      *is_float = false;
      *i = v;
      p_ = static_cast<size_t>(end - s_.data());
    }
    if (p_ < s_.size() && ident_char(s_[p_])) fail("malformed number");
    return true;
  }
  int64_t integer(const char* what) {
    int64_t i = 0;
    double d = 0;
    bool f = false;
    size_t c = col();
    if (!number(&i, &d, &f) || f) fail_at(c, std::string("expected an integer ") + what + found());
    return i;
  }

  // An int or an expression of symbols ("B*T", "4*B-1").
  SymExpr sym_expr() {
    skip_space();
    SymExpr e;
    size_t used = 0;
    std::string err;
    std::string text(s_);
    if (!parse_sym_expr(text, p_, &e, &used, &err)) {
      p_ += used;
      fail(err + found());
    }
    p_ += used;
    return e;
  }
  bool at_sym_expr() {
    char c = peek();
    return ident_start(c) || c == '-' || std::isdigit(static_cast<unsigned char>(c));
  }

  std::string string_literal() {
    skip_space();
    if (p_ >= s_.size() || s_[p_] != '"') fail("expected a string" + found());
    std::string out;
    for (++p_; p_ < s_.size() && s_[p_] != '"'; ++p_) {
      if (s_[p_] != '\\') {
        out += s_[p_];
        continue;
      }
      if (++p_ >= s_.size()) break;
      char c = s_[p_];
      if (c == 'n')
        out += '\n';
      else if (c == 't')
        out += '\t';
      else if (c == '"' || c == '\\')
        out += c;
      else
        fail(std::string("unknown escape '\\") + c + "'");
    }
    if (p_ >= s_.size()) fail("unterminated string");
    ++p_;
    return out;
  }

 private:
  std::string_view s_;  // a whole line of the text (NUL-terminated after it)
  size_t p_ = 0;
};

class Parser {
 public:
  Parser(Runtime* rt, const ParseOptions& opts, Graph* g) : rt_(rt), opts_(opts), g_(g) {}

  void line(const std::string& text) {
    Lexer lx(text);
    if (lx.at_end()) return;
    if (!seen_header_) return header(lx);
    if (seen_output_) lx.fail("nothing may follow the output statement");
    if (lx.peek() == '%') return node(lx);
    size_t c = lx.col();
    std::string kw = lx.ident();
    if (lx.peek() == '(') return call(lx, kw, c, {});
    if (kw == "device") return device_stmt(lx);
    if (kw == "plugin") return plugin_stmt(lx);
    if (kw == "input" || kw == "param" || kw == "const") return decl(lx, kw);
    if (kw == "output") return output_stmt(lx);
    lx.fail_at(c, "unknown statement '" + kw + "' (expected input, param, const, output, a node, device or plugin)");
  }

  void finish(size_t last_line) {
    line_ = last_line;
    if (!seen_header_) throw ParseError{1, "empty graph text (expected 'tessera.graph 1')"};
    if (!seen_output_) throw ParseError{1, "the graph has no output statement"};
  }
  size_t line_ = 0;

 private:
  void header(Lexer& lx) {
    std::string kw = lx.ident();
    if (kw != "tessera.graph") lx.fail_at(1, "expected 'tessera.graph 1' first, found '" + kw + "'");
    size_t c = lx.col();
    int64_t version = lx.integer("(the format version)");
    if (version != 1)
      lx.fail_at(c, "format version " + std::to_string(version) + " is not supported (this core reads version 1)");
    end(lx);
    seen_header_ = true;
  }

  void end(Lexer& lx) {
    if (!lx.at_end()) lx.fail("unexpected text" + lx.found());
  }

  tsr_device_t parse_device(Lexer& lx, const std::string& text, size_t c) {
    tsr_device_t d{};
    tsr_status_t st = api_table()->device_parse(rt_, text.c_str(), &d);
    if (st) {
      std::string msg = st->message;
      free_status(st);
      lx.fail_at(c, "device '" + text + "': " + msg);
    }
    return d;
  }

  void device_stmt(Lexer& lx) {
    size_t c = lx.col();
    graph_device_text_ = lx.ident();
    end(lx);
    g_->device = opts_.move_device ? opts_.device : parse_device(lx, graph_device_text_, c);
  }

  void plugin_stmt(Lexer& lx) {
    std::string plugin = lx.ident();
    lx.expect(':', "after the plugin's name");
    do g_->op_plugins[lx.ident()] = plugin;
    while (lx.accept(','));
    end(lx);
  }

  // Every symbol of e is a dim of an input declared so far (inputs come first).
  void check_symbols(Lexer& lx, const SymExpr& e, size_t c) {
    if (declaring_input_) {
      for (const auto& [names, coef] : e.terms)
        for (const std::string& n : names) input_symbols_.insert(n);
      return;
    }
    for (const auto& [names, coef] : e.terms)
      for (const std::string& n : names)
        if (!input_symbols_.count(n)) lx.fail_at(c, "unknown symbol '" + n + "' (not a dim of any input)");
  }

  Type type(Lexer& lx) {
    Type t;
    t.known = true;
    size_t c = lx.col();
    std::string dt = lx.ident();
    t.dtype = dtype_from_name(dt.c_str());
    if (t.dtype == TSR_DTYPE_UNDEFINED) lx.fail_at(c, "unknown dtype '" + dt + "'");
    lx.expect('[', "to open the shape");
    if (!lx.accept(']')) {
      do {
        Dim d;
        size_t dc = lx.col();
        SymExpr e = lx.sym_expr();
        if (e.symbolic()) {
          check_symbols(lx, e, dc);
          d.sym = e.str();
        } else {
          d.size = e.terms.empty() ? 0 : e.terms.begin()->second;
          if (d.size < 0) lx.fail_at(dc, "negative dim");
        }
        t.dims.push_back(d);
      } while (lx.accept(','));
      lx.expect(']', "to close the shape");
    }
    if (t.dims.size() > TSR_MAX_DIMS) lx.fail("more than " + std::to_string(TSR_MAX_DIMS) + " dims");
    return t;
  }

  int define(Lexer& lx, Value v, size_t c) {
    int id = -1;
    tsr_status_t st = g_->add_value(std::move(v), &id);
    if (st) {
      std::string msg = st->message;
      free_status(st);
      lx.fail_at(c, msg.substr(std::strlen("graph: ")));
    }
    return id;
  }

  void decl(Lexer& lx, const std::string& kw) {
    if (!g_->nodes.empty() && kw == "input") lx.fail("inputs are declared before the first node");
    size_t c = lx.col();
    Value v;
    v.name = lx.value_name();
    v.kind = kw == "input" ? ValueKind::Input : kw == "param" ? ValueKind::Param : ValueKind::Const;
    lx.expect(':', "before the type");
    declaring_input_ = v.kind == ValueKind::Input;
    v.type = type(lx);
    declaring_input_ = false;
    if (lx.accept('=')) {
      if (v.kind != ValueKind::Const || !v.type.dims.empty())
        lx.fail("only 0-dim consts are written inline ('const %s: float32[] = 1.5')");
      inline_scalar(lx, &v);
    }
    if (v.kind == ValueKind::Input)
      for (const Dim& d : v.type.dims) {
        if (d.sym.empty()) continue;
        bool plain = ident_start(d.sym[0]);
        for (char ch : d.sym) plain = plain && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_');
        if (!plain) lx.fail_at(c, "an input's dims are sizes or single symbols, not '" + d.sym + "'");
      }
    else
      for (const Dim& d : v.type.dims)
        if (!d.sym.empty()) lx.fail_at(c, "params and consts have fixed sizes, not '" + d.sym + "'");
    end(lx);
    int id = define(lx, std::move(v), c);
    Value& added = g_->values[static_cast<size_t>(id)];
    if (added.inline_scalar) make_scalar(lx, &added, c);
    (kw == "input" ? g_->inputs : g_->weights).push_back(id);
  }

  void inline_scalar(Lexer& lx, Value* v) {
    v->inline_scalar = true;
    size_t c = lx.col();
    int64_t i = 0;
    double d = 0;
    bool is_float = false;
    if (lx.number(&i, &d, &is_float)) {
      v->scalar.tag = is_float ? TSR_VALUE_DOUBLE : TSR_VALUE_INT;
      if (is_float)
        v->scalar.u.d = d;
      else
        v->scalar.u.i = i;
    } else {
      std::string w = lx.ident();
      if (w != "true" && w != "false") lx.fail_at(c, "expected a number, true or false");
      v->scalar.tag = TSR_VALUE_BOOL;
      v->scalar.u.b = w == "true";
    }
    if (lx.at_ident()) {
      size_t wc = lx.col();
      if (lx.ident() != "wrapped") lx.fail_at(wc, "expected 'wrapped' or the end of the line");
      v->wrapped = true;
    }
  }

  // The tensor of an inline scalar, made once its value is in the graph (which then owns it).
  void make_scalar(Lexer& lx, Value* v, size_t c) {
    tsr_status_t st = api_table()->tensor_scalar(rt_, &v->scalar, v->type.dtype, tsr_device_t{TSR_DEVICE_TYPE_CPU, 0},
                                                 v->wrapped ? 1 : 0, &v->weight);
    if (st) {
      std::string msg = st->message;
      free_status(st);
      lx.fail_at(c, msg);
    }
  }

  int use(Lexer& lx) {
    size_t c = lx.col();
    std::string name = lx.value_name();
    auto it = g_->by_name.find(name);
    if (it == g_->by_name.end()) lx.fail_at(c, "%" + name + " is not defined before this use");
    return it->second;
  }

  void output_stmt(Lexer& lx) {
    do g_->outputs.push_back(use(lx));
    while (lx.accept(','));
    end(lx);
    seen_output_ = true;
  }

  void node(Lexer& lx) {
    std::vector<std::pair<Value, size_t>> results;
    do {
      size_t c = lx.col();
      Value v;
      v.name = lx.value_name();
      if (lx.accept(':')) v.type = type(lx);
      results.emplace_back(std::move(v), c);
    } while (lx.accept(','));
    lx.expect('=', "after the results");
    size_t c = lx.col();
    std::string callee = lx.ident();
    call(lx, callee, c, std::move(results));
  }

  Callee resolve(Lexer& lx, const std::string& name, size_t c) {
    Callee callee;
    if ((callee.builtin = find_builtin(name))) return callee;
    auto it = rt_->op_by_name.find(name);
    if (it != rt_->op_by_name.end()) {
      callee.op = it->second;
      return callee;
    }
    std::string msg = "unknown op '" + name + "'";
    auto p = g_->op_plugins.find(name);
    if (p != g_->op_plugins.end())
      msg += " (the graph says the plugin '" + p->second +
             "' defines it, and this runtime has not loaded it: put it in the plugin path; `tessera info` lists what "
             "was loaded)";
    lx.fail_at(c, msg);
  }

  void call(Lexer& lx, const std::string& name, size_t c, std::vector<std::pair<Value, size_t>> results) {
    Node n;
    n.callee = resolve(lx, name, c);
    const Schema& schema = n.callee.schema();
    if (results.size() != static_cast<size_t>(schema.num_outputs))
      lx.fail_at(c, name + " returns " + std::to_string(schema.num_outputs) + " result(s), but " +
                        std::to_string(results.size()) + " are named");
    lx.expect('(', "after the op's name");
    std::vector<Arg> args(schema.args.size());
    std::vector<bool> given(schema.args.size(), false);
    size_t positional = 0;
    bool keywords = false;
    if (!lx.accept(')')) {
      do {
        size_t ac = lx.col();
        size_t index = positional;
        // name=value?
        if (lx.at_ident()) {
          Lexer probe = lx;
          std::string word = probe.ident();
          if (probe.accept('=')) {
            lx = probe;
            index = schema.args.size();
            for (size_t k = 0; k < schema.args.size(); ++k)
              if (schema.args[k].name == word) index = k;
            if (index == schema.args.size()) lx.fail_at(ac, name + " has no argument '" + word + "'");
            if (given[index]) lx.fail_at(ac, "argument '" + word + "' is given twice");
            keywords = true;
          } else if (keywords) {
            lx.fail_at(ac, "a positional argument follows a keyword argument");
          }
        } else if (keywords) {
          lx.fail_at(ac, "a positional argument follows a keyword argument");
        }
        if (index >= schema.args.size())
          lx.fail_at(ac, name + " takes " + std::to_string(schema.args.size()) + " argument(s)");
        args[index] = arg(lx, schema.args[index], name);
        given[index] = true;
        if (!keywords) ++positional;
      } while (lx.accept(','));
      lx.expect(')', "to close the arguments");
    }
    end(lx);
    size_t last = 0;
    for (size_t k = 0; k < args.size(); ++k)
      if (given[k]) last = k + 1;
    for (size_t k = 0; k < args.size(); ++k) {
      const ArgSpec& spec = schema.args[k];
      if (given[k]) continue;
      if (!spec.has_default)
        lx.fail_at(c, name + ": missing argument '" + spec.name + "' (" + arg_kind_name(spec.kind) + ")");
      args[k] = default_arg(spec);
    }
    args.resize(last);
    n.args = std::move(args);
    for (auto& [v, vc] : results) {
      v.kind = ValueKind::Node;
      v.producer = static_cast<int>(g_->nodes.size());
      n.outputs.push_back(define(lx, std::move(v), vc));
    }
    g_->nodes.push_back(std::move(n));
  }

  // An int, or an expression of the inputs' symbols (kept in a->sym at `index`).
  void int_or_expr(Lexer& lx, Arg* a, size_t index) {
    size_t c = lx.col();
    SymExpr e = lx.sym_expr();
    int64_t v = 0;
    if (e.symbolic()) {
      check_symbols(lx, e, c);
      a->sym.emplace_back(index, e);
    } else if (!e.terms.empty()) {
      v = e.terms.begin()->second;
    }
    if (a->tag == TSR_VALUE_INT_LIST)
      a->ints.push_back(v);
    else
      a->i = v;
  }

  Arg arg(Lexer& lx, const ArgSpec& spec, const std::string& op) {
    Arg a;
    size_t c = lx.col();
    auto wrong = [&](const char* expected) {  // throws ParseError
      lx.fail_at(c, op + ": argument '" + spec.name + "' (" + arg_kind_name(spec.kind) + ") expects " + expected +
                        lx.found());
    };
    if (lx.at_ident()) {
      Lexer probe = lx;
      if (probe.ident() == "None") {
        if (!spec.optional && !(spec.has_default && spec.default_value.tag == TSR_VALUE_NONE))
          lx.fail_at(c, op + ": argument '" + spec.name + "' is not optional (None given)");
        lx = probe;
        return a;
      }
    }
    switch (spec.kind) {
      case ArgKind::Tensor:
        a.tag = TSR_VALUE_TENSOR;
        if (lx.peek() != '%') wrong("a tensor (%name)");
        a.values.push_back(use(lx));
        return a;
      case ArgKind::TensorList:
        a.tag = TSR_VALUE_TENSOR_LIST;
        lx.expect('[', "to open a tensor list");
        if (!lx.accept(']')) {
          do a.values.push_back(use(lx));
          while (lx.accept(','));
          lx.expect(']', "to close the tensor list");
        }
        return a;
      case ArgKind::IntList:
        if (lx.accept('[')) {
          a.tag = TSR_VALUE_INT_LIST;
          if (!lx.accept(']')) {
            do {
              if (!lx.at_sym_expr()) wrong("ints in the list");
              int_or_expr(lx, &a, a.ints.size());
            } while (lx.accept(','));
            lx.expect(']', "to close the list");
          }
          return a;
        }
        if (!lx.at_sym_expr()) wrong("a list [..] or an int");
        a.tag = TSR_VALUE_INT;
        int_or_expr(lx, &a, 0);
        return a;
      case ArgKind::Int:
        if (!lx.at_sym_expr()) wrong("an integer");
        a.tag = TSR_VALUE_INT;
        int_or_expr(lx, &a, 0);
        return a;
      case ArgKind::Float:
      case ArgKind::Scalar: {
        // A size that follows the inputs ("arange(0, 2*T)"): an int expression of symbols.
        if (lx.at_sym_expr() && !input_symbols_.empty()) {
          Lexer probe = lx;
          try {
            SymExpr e = probe.sym_expr();
            bool known = e.symbolic();  // only the inputs' symbols: "inf" and "nan" are floats
            for (const auto& [names, coef] : e.terms)
              for (const std::string& n : names) known = known && input_symbols_.count(n);
            if (known && probe.peek() != '.') {
              a.tag = TSR_VALUE_INT;
              int_or_expr(lx, &a, 0);
              return a;
            }
          } catch (const ParseError&) {
          }
        }
        bool is_float = false;
        if (lx.number(&a.i, &a.d, &is_float)) {
          a.tag = is_float ? TSR_VALUE_DOUBLE : TSR_VALUE_INT;
          return a;
        }
        if (spec.kind == ArgKind::Float) wrong("a number");
        [[fallthrough]];
      }
      case ArgKind::Bool: {
        if (!lx.at_ident()) wrong("true or false");
        std::string w = lx.ident();
        if (w != "true" && w != "false") wrong("true or false");
        a.tag = TSR_VALUE_BOOL;
        a.b = w == "true";
        return a;
      }
      case ArgKind::Str:
        if (lx.peek() != '"') wrong("a string");
        a.tag = TSR_VALUE_STRING;
        a.str = lx.string_literal();
        return a;
      case ArgKind::Dtype: {
        if (!lx.at_ident()) wrong("a dtype name");
        std::string w = lx.ident();
        a.tag = TSR_VALUE_DTYPE;
        a.dtype = dtype_from_name(w.c_str());
        if (a.dtype == TSR_DTYPE_UNDEFINED) lx.fail_at(c, "unknown dtype '" + w + "'");
        return a;
      }
      case ArgKind::Device: {
        if (!lx.at_ident()) wrong("a device (cpu:0)");
        std::string w = lx.ident();
        a.tag = TSR_VALUE_DEVICE;
        a.device = opts_.move_device && w == graph_device_text_ ? opts_.device : parse_device(lx, w, c);
        return a;
      }
    }
    wrong("a value");
    return a;
  }

  Runtime* rt_;
  ParseOptions opts_;
  Graph* g_;
  bool seen_header_ = false, seen_output_ = false;
  bool declaring_input_ = false;
  std::set<std::string> input_symbols_;
  std::string graph_device_text_;
};

}  // namespace

tsr_status_t parse(Runtime* rt, const std::string& text, const ParseOptions& opts, std::unique_ptr<tsr_model_s>* out) {
  auto g = std::make_unique<tsr_model_s>();
  g->rt = rt;
  if (opts.move_device) g->device = opts.device;
  Parser parser(rt, opts, g.get());
  size_t line_no = 0, pos = 0;
  try {
    while (pos <= text.size()) {
      size_t nl = text.find('\n', pos);
      std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
      ++line_no;
      parser.line(line);
      if (nl == std::string::npos) break;
      pos = nl + 1;
    }
    parser.finish(line_no);
  } catch (const ParseError& e) {
    return make_status(TSR_INVALID_ARGUMENT, "graph text line " + std::to_string(line_no) + ":" +
                                                 std::to_string(e.col) + ": " + e.msg);
  }
  *out = std::move(g);
  return nullptr;
}

}  // namespace tsr::core::graph
