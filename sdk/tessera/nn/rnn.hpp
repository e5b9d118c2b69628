// Tessera SDK: recurrent layers (torch.nn.LSTM, GRU, LSTMCell, GRUCell) over the public ops.
//
//   auto lstm = std::make_shared<tsr::nn::LSTM>(/*input*/ 10, /*hidden*/ 20, /*num_layers*/ 2);
//   auto [out, hc] = lstm->forward(x, std::nullopt);   // out [T, N, 20]; hc = (h_n, c_n)
//   tsr::Tensor y = (*lstm)(x);                          // output only (for Sequential)
//
// PyTorch's parameter names, shapes, gate order (LSTM: i, f, g, o; GRU: r, z, n) and
// initialisation U(-1/sqrt(hidden), 1/sqrt(hidden)) drawn from the runtime RNG, so a PyTorch
// state_dict loads unchanged and tsr::manual_seed reproduces a model. Layouts: input
// [T, N, input_size] ([N, T, input_size] with batch_first) or unbatched [T, input_size]; states
// [num_layers * num_directions, N, hidden] whatever batch_first says (as PyTorch).
//
// The input projection of a whole layer (with the LSTM's both biases) is one matmul over every
// time step; only the recurrent h @ W_hh^T and the gate arithmetic run per step. Gradients come
// from autograd through those ops (no fused kernel), so backward memory grows with T (full
// backpropagation through time).
//
// Ownership: modules own their parameters (see nn/module.hpp); outputs are new tensors.
// Errors: tsr::Error naming the module and the offending shapes/dtypes, raised before any
// computation; a module is never modified by forward. Thread-safety: as nn::Module (concurrent
// forwards on an eval module are fine; dropout draws from the shared runtime RNG).
#pragma once

#include <cmath>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "tessera/nn/module.hpp"
#include "tessera/nn/seq_util.hpp"
#include "tessera/ops/random.hpp"
#include "tessera/tessera.hpp"

namespace tsr::nn {

namespace seq_detail {

// U(-1/sqrt(hidden), 1/sqrt(hidden)) for every recurrent weight and bias, as PyTorch.
inline Tensor rnn_param(std::vector<int64_t> shape, int64_t hidden) {
  NoGradGuard no_grad;
  Tensor t = tsr::empty(std::move(shape));
  double k = 1.0 / std::sqrt(static_cast<double>(hidden));
  tsr::uniform_(t, -k, k);
  return t;
}

inline std::optional<Tensor> opt(const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; }

// One LSTM step. xp = x W_ih^T + b_ih + b_hh for this step ([N, 4H]): both biases are folded
// into the sequence-wide projection, so the step is one addmm plus one fused op for the gates
// (lstm_cell_gates: the activations, the new cell and hidden state, in one pass and one node).
inline std::pair<Tensor, Tensor> lstm_step(const Tensor& xp, const Tensor& h, const Tensor& c, const Tensor& w_hh_t) {
  auto [h2, c2] = tsr::nn::lstm_cell_gates(tsr::addmm(xp, h, w_hh_t), c);
  return {h2, c2};
}

// A layer's h_n: out's last step in processing order (h0 for an empty sequence).
inline Tensor last_state(const Tensor& out, const Tensor& h0, bool reverse) {
  const int64_t T = out.size(0);
  return T ? out.select(0, reverse ? 0 : T - 1) : h0;
}

// One LSTM layer (one direction) over the whole time-major sequence: the _lstm_layer primitive,
// one autograd node whose backward computes dW_hh in one GEMM. xp as for lstm_step, [T, N, 4H].
// Returns (out [T, N, H], h_n, c_n).
inline std::tuple<Tensor, Tensor, Tensor> lstm_layer(const Tensor& xp, const Tensor& h0, const Tensor& c0,
                                                     const Tensor& w_hh, bool reverse) {
  static const Op op("_lstm_layer");
  std::vector<Tensor> r = call_multi(op, {xp, h0, c0, w_hh, reverse});  // out, c_n, workspace
  return {r[0], last_state(r[0], h0, reverse), r[1]};
}

// One GRU step; the hidden bias of n stays inside r * (...) as in PyTorch (and cuDNN). The gate
// arithmetic is one fused op (gru_cell_gates).
inline Tensor gru_step(const Tensor& xp, const Tensor& h, const Tensor& w_hh, const Tensor& b_hh) {
  return tsr::nn::gru_cell_gates(xp, tsr::linear(h, w_hh, opt(b_hh)), h);
}

// One GRU layer (one direction) over the whole time-major sequence: the _gru_layer primitive, one
// autograd node whose backward computes dW_hh in one GEMM. xp = x W_ih^T + b_ih, [T, N, 3H].
// Returns (out [T, N, H], h_n).
inline std::pair<Tensor, Tensor> gru_layer(const Tensor& xp, const Tensor& h0, const Tensor& w_hh, const Tensor& b_hh,
                                           bool reverse) {
  static const Op op("_gru_layer");
  // out, workspace
  std::vector<Tensor> r = call_multi(op, {xp, h0, w_hh, tsr::detail::opt_tensor_arg(opt(b_hh)), reverse});
  return {r[0], last_state(r[0], h0, reverse)};
}

}  // namespace seq_detail

// The multi-layer, optionally bidirectional recurrence shared by LSTM and GRU.
class RNNBase : public Module {
 public:
  const int64_t input_size, hidden_size, num_layers;
  const bool bias, batch_first;
  const double dropout;
  const bool bidirectional;

  int64_t num_directions() const { return bidirectional ? 2 : 1; }
  // The parameters of (layer, direction), e.g. weight_ih(1) is weight_ih_l1 and
  // weight_hh(0, true) is weight_hh_l0_reverse. bias_*() are undefined when bias=false.
  Tensor& weight_ih(int64_t layer, bool reverse = false) { return slot(layer, reverse, 0); }
  Tensor& weight_hh(int64_t layer, bool reverse = false) { return slot(layer, reverse, 1); }
  Tensor& bias_ih(int64_t layer, bool reverse = false) { return slot(layer, reverse, 2); }
  Tensor& bias_hh(int64_t layer, bool reverse = false) { return slot(layer, reverse, 3); }

  std::string extra_repr() const override {
    std::string s = std::to_string(input_size) + ", " + std::to_string(hidden_size);
    if (num_layers != 1) s += ", num_layers=" + std::to_string(num_layers);
    if (!bias) s += ", bias=false";
    if (batch_first) s += ", batch_first=true";
    if (dropout != 0) s += ", dropout=" + std::to_string(dropout);
    if (bidirectional) s += ", bidirectional=true";
    return s;
  }

 protected:
  RNNBase(const std::string& name, int64_t gates, int64_t input_size_, int64_t hidden_size_, int64_t num_layers_,
          bool bias_, bool batch_first_, double dropout_, bool bidirectional_)
      : Module(name),
        input_size(input_size_),
        hidden_size(hidden_size_),
        num_layers(num_layers_),
        bias(bias_),
        batch_first(batch_first_),
        dropout(dropout_),
        bidirectional(bidirectional_),
        gates_(gates) {
    seq_detail::require_positive(name, "input_size", input_size);
    seq_detail::require_positive(name, "hidden_size", hidden_size);
    seq_detail::require_positive(name, "num_layers", num_layers);
    seq_detail::require_probability(name, "dropout", dropout);
    // Sized once: register_parameter keeps pointers into this vector.
    weights_.resize(static_cast<size_t>(num_layers * num_directions() * 4));
    const int64_t G = gates * hidden_size;
    for (int64_t l = 0; l < num_layers; ++l) {
      for (int64_t d = 0; d < num_directions(); ++d) {
        std::string sfx = "_l" + std::to_string(l) + (d ? "_reverse" : "");
        int64_t in = l == 0 ? input_size : hidden_size * num_directions();
        Tensor& wi = slot(l, d != 0, 0);
        Tensor& wh = slot(l, d != 0, 1);
        Tensor& bi = slot(l, d != 0, 2);
        Tensor& bh = slot(l, d != 0, 3);
        wi = seq_detail::rnn_param({G, in}, hidden_size);
        wh = seq_detail::rnn_param({G, hidden_size}, hidden_size);
        register_parameter("weight_ih" + sfx, wi);
        register_parameter("weight_hh" + sfx, wh);
        if (bias) {
          bi = seq_detail::rnn_param({G}, hidden_size);
          bh = seq_detail::rnn_param({G}, hidden_size);
          register_parameter("bias_ih" + sfx, bi);
          register_parameter("bias_hh" + sfx, bh);
        }
      }
    }
  }

  // x as given by the caller -> time-major [T, N, input]; `unbatched` when x was [T, input].
  Tensor to_time_major(const Tensor& x, bool* unbatched) const {
    const std::string layout = batch_first ? "[batch, seq, " : "[seq, batch, ";
    if (!x.defined() || (x.dim() != 2 && x.dim() != 3) || x.size(-1) != input_size)
      seq_detail::fail(type_name(), "expected input " + layout + std::to_string(input_size) + "] (or [seq, " +
                                        std::to_string(input_size) + "] unbatched), got " + seq_detail::shape_text(x));
    seq_detail::require_dtype(type_name(), "input", x, weights_[0].dtype());
    *unbatched = x.dim() == 2;
    if (*unbatched) return x.unsqueeze(1);
    return batch_first ? x.transpose(0, 1) : x;
  }
  Tensor from_time_major(const Tensor& out, bool unbatched) const {
    if (unbatched) return out.squeeze(1);
    return batch_first ? out.transpose(0, 1) : out;
  }
  // A caller's initial state (h_0 or c_0): [L*D, N, H], or [L*D, H] for unbatched input.
  Tensor check_state(const char* what, const Tensor& s, int64_t batch, bool unbatched) const {
    std::vector<int64_t> want{num_layers * num_directions(), batch, hidden_size};
    if (unbatched) want.erase(want.begin() + 1);
    if (!s.defined() || s.sizes() != want)
      seq_detail::fail(type_name(), std::string("expected ") + what + " " + seq_detail::shape_text(want) + ", got " +
                                        seq_detail::shape_text(s));
    seq_detail::require_dtype(type_name(), what, s, weights_[0].dtype());
    return unbatched ? s.unsqueeze(1) : s;
  }

  // Runs every layer and direction over time-major x. h0/c0: [L*D, N, H] (c0 for LSTM only).
  // Returns (output [T, N, D*H], h_n, c_n).
  std::tuple<Tensor, Tensor, Tensor> run(const Tensor& x, const Tensor& h0, const Tensor& c0) {
    const bool lstm = gates_ == 4;
    const int64_t D = num_directions();
    std::vector<Tensor> hn, cn;
    Tensor layer_in = x;
    for (int64_t l = 0; l < num_layers; ++l) {
      std::vector<Tensor> dir_out;
      for (int64_t d = 0; d < D; ++d) {
        const bool rev = d == 1;
        // One matmul for the whole sequence; the per-step work is only the recurrent part.
        std::optional<Tensor> b = seq_detail::opt(bias_ih(l, rev));
        if (lstm && b) *b = *b + bias_hh(l, rev);
        Tensor xp = tsr::linear(layer_in, weight_ih(l, rev), b);
        Tensor h = h0.select(0, l * D + d);
        // The whole recurrence of a layer and direction is one primitive (_lstm_layer, _gru_layer).
        if (lstm) {
          auto [out, h_n, c_n] = seq_detail::lstm_layer(xp, h, c0.select(0, l * D + d), weight_hh(l, rev), rev);
          dir_out.push_back(out);
          hn.push_back(h_n);
          cn.push_back(c_n);
        } else {
          auto [out, h_n] = seq_detail::gru_layer(xp, h, weight_hh(l, rev), bias_hh(l, rev), rev);
          dir_out.push_back(out);
          hn.push_back(h_n);
        }
      }
      Tensor out = D == 1 ? dir_out[0] : tsr::cat(dir_out, -1);
      if (l + 1 < num_layers && dropout > 0 && is_training()) out = tsr::nn::dropout(out, dropout, true);
      layer_in = out;
    }
    return {layer_in, tsr::stack(hn, 0), lstm ? tsr::stack(cn, 0) : Tensor()};
  }

  Tensor zero_state(const Tensor& x_tm) const {
    return tsr::zeros({num_layers * num_directions(), x_tm.size(1), hidden_size}, x_tm.dtype(), x_tm.device());
  }

 private:
  Tensor& slot(int64_t layer, bool reverse, int which) {
    if (layer < 0 || layer >= num_layers || (reverse && !bidirectional))
      seq_detail::fail(type_name(), "no parameters for layer " + std::to_string(layer) + (reverse ? " reverse" : "") +
                                        " (num_layers=" + std::to_string(num_layers) +
                                        (bidirectional ? ", bidirectional)" : ", unidirectional)"));
    return weights_[static_cast<size_t>((layer * num_directions() + (reverse ? 1 : 0)) * 4 + which)];
  }
  const int64_t gates_;
  std::vector<Tensor> weights_;  // (layer, direction) -> w_ih, w_hh, b_ih, b_hh
};

// torch.nn.LSTM.
class LSTM : public RNNBase {
 public:
  LSTM(int64_t input_size, int64_t hidden_size, int64_t num_layers = 1, bool bias = true, bool batch_first = false,
       double dropout = 0.0, bool bidirectional = false)
      : RNNBase("LSTM", 4, input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional) {}

  // (output, (h_n, c_n)); hx = (h_0, c_0), zeros when absent. Pass std::nullopt explicitly:
  // forward(x) alone is the output-only override below.
  std::tuple<Tensor, std::pair<Tensor, Tensor>> forward(const Tensor& x,
                                                        const std::optional<std::pair<Tensor, Tensor>>& hx) {
    bool unbatched = false;
    Tensor xt = to_time_major(x, &unbatched);
    Tensor h0, c0;
    if (hx) {
      h0 = check_state("h_0", hx->first, xt.size(1), unbatched);
      c0 = check_state("c_0", hx->second, xt.size(1), unbatched);
    } else {
      h0 = zero_state(xt);
      c0 = h0;
    }
    auto [out, hn, cn] = run(xt, h0, c0);
    if (unbatched) {
      hn = hn.squeeze(1);
      cn = cn.squeeze(1);
    }
    return {from_time_major(out, unbatched), {hn, cn}};
  }
  Tensor forward(const Tensor& x) override { return std::get<0>(forward(x, std::nullopt)); }
};

// torch.nn.GRU.
class GRU : public RNNBase {
 public:
  GRU(int64_t input_size, int64_t hidden_size, int64_t num_layers = 1, bool bias = true, bool batch_first = false,
      double dropout = 0.0, bool bidirectional = false)
      : RNNBase("GRU", 3, input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional) {}

  // (output, h_n); h_0 zeros when absent (pass std::nullopt explicitly, as for LSTM).
  std::pair<Tensor, Tensor> forward(const Tensor& x, const std::optional<Tensor>& hx) {
    bool unbatched = false;
    Tensor xt = to_time_major(x, &unbatched);
    Tensor h0 = hx ? check_state("h_0", *hx, xt.size(1), unbatched) : zero_state(xt);
    auto [out, hn, unused] = run(xt, h0, Tensor());
    (void)unused;
    return {from_time_major(out, unbatched), unbatched ? hn.squeeze(1) : hn};
  }
  Tensor forward(const Tensor& x) override { return forward(x, std::nullopt).first; }
};

// Single-step cells: input [N, input_size] or [input_size]; state [N, hidden] or [hidden].
class RNNCellBase : public Module {
 public:
  const int64_t input_size, hidden_size;
  const bool bias;
  Tensor weight_ih, weight_hh, bias_ih, bias_hh;

  std::string extra_repr() const override {
    return std::to_string(input_size) + ", " + std::to_string(hidden_size) + (bias ? "" : ", bias=false");
  }

 protected:
  RNNCellBase(const std::string& name, int64_t gates, int64_t input_size_, int64_t hidden_size_, bool bias_)
      : Module(name), input_size(input_size_), hidden_size(hidden_size_), bias(bias_) {
    seq_detail::require_positive(name, "input_size", input_size);
    seq_detail::require_positive(name, "hidden_size", hidden_size);
    weight_ih = seq_detail::rnn_param({gates * hidden_size, input_size}, hidden_size);
    weight_hh = seq_detail::rnn_param({gates * hidden_size, hidden_size}, hidden_size);
    register_parameter("weight_ih", weight_ih);
    register_parameter("weight_hh", weight_hh);
    if (bias) {
      bias_ih = seq_detail::rnn_param({gates * hidden_size}, hidden_size);
      bias_hh = seq_detail::rnn_param({gates * hidden_size}, hidden_size);
    }
    register_parameter("bias_ih", bias_ih);
    register_parameter("bias_hh", bias_hh);
  }
  // x -> [N, input]; `unbatched` when x was 1-D.
  Tensor check_input(const Tensor& x, bool* unbatched) const {
    if (!x.defined() || (x.dim() != 1 && x.dim() != 2) || x.size(-1) != input_size)
      seq_detail::fail(type_name(), "expected input [batch, " + std::to_string(input_size) + "] or [" +
                                        std::to_string(input_size) + "], got " + seq_detail::shape_text(x));
    seq_detail::require_dtype(type_name(), "input", x, weight_ih.dtype());
    *unbatched = x.dim() == 1;
    return *unbatched ? x.unsqueeze(0) : x;
  }
  Tensor check_state(const char* what, const Tensor& s, int64_t batch, bool unbatched) const {
    std::vector<int64_t> want =
        unbatched ? std::vector<int64_t>{hidden_size} : std::vector<int64_t>{batch, hidden_size};
    if (!s.defined() || s.sizes() != want)
      seq_detail::fail(type_name(), std::string("expected ") + what + " " + seq_detail::shape_text(want) + ", got " +
                                        seq_detail::shape_text(s));
    seq_detail::require_dtype(type_name(), what, s, weight_ih.dtype());
    return unbatched ? s.unsqueeze(0) : s;
  }
  Tensor zero_state(const Tensor& x2) const { return tsr::zeros({x2.size(0), hidden_size}, x2.dtype(), x2.device()); }
};

// torch.nn.LSTMCell: forward(x, (h, c)) -> (h', c').
class LSTMCell : public RNNCellBase {
 public:
  LSTMCell(int64_t input_size, int64_t hidden_size, bool bias = true)
      : RNNCellBase("LSTMCell", 4, input_size, hidden_size, bias) {}

  std::pair<Tensor, Tensor> forward(const Tensor& x, const std::optional<std::pair<Tensor, Tensor>>& hx) {
    bool unbatched = false;
    Tensor x2 = check_input(x, &unbatched);
    Tensor h = hx ? check_state("h", hx->first, x2.size(0), unbatched) : zero_state(x2);
    Tensor c = hx ? check_state("c", hx->second, x2.size(0), unbatched) : h;
    Tensor xp = tsr::linear(x2, weight_ih, bias ? std::optional<Tensor>(bias_ih + bias_hh) : std::nullopt);
    auto [h2, c2] = seq_detail::lstm_step(xp, h, c, weight_hh.t());
    if (unbatched) return {h2.squeeze(0), c2.squeeze(0)};
    return {h2, c2};
  }
  // h' from a zero state.
  Tensor forward(const Tensor& x) override { return forward(x, std::nullopt).first; }
};

// torch.nn.GRUCell: forward(x, h) -> h'.
class GRUCell : public RNNCellBase {
 public:
  GRUCell(int64_t input_size, int64_t hidden_size, bool bias = true)
      : RNNCellBase("GRUCell", 3, input_size, hidden_size, bias) {}

  Tensor forward(const Tensor& x, const std::optional<Tensor>& hx) {
    bool unbatched = false;
    Tensor x2 = check_input(x, &unbatched);
    Tensor h = hx ? check_state("h", *hx, x2.size(0), unbatched) : zero_state(x2);
    Tensor xp = tsr::linear(x2, weight_ih, seq_detail::opt(bias_ih));
    Tensor h2 = seq_detail::gru_step(xp, h, weight_hh, bias_hh);
    return unbatched ? h2.squeeze(0) : h2;
  }
  Tensor forward(const Tensor& x) override { return forward(x, std::nullopt); }
};

}  // namespace tsr::nn
