// Tessera SDK: TransformerEncoderLayer and TransformerEncoder (torch.nn.TransformerEncoderLayer,
// torch.nn.TransformerEncoder).
//
//   auto block = std::make_shared<tsr::nn::TransformerEncoderLayer>(
//       /*d_model*/ 128, /*nhead*/ 4, /*dim_feedforward*/ 512, /*dropout*/ 0.1, "gelu",
//       /*layer_norm_eps*/ 1e-5, /*batch_first*/ true);            // pre-norm by default
//   tsr::Tensor y = block->forward(x, std::nullopt, std::nullopt, /*is_causal=*/true);
//
// norm_first=true (the default here, unlike PyTorch's false: GPT-style stacks train stably
// without warmup tricks) is the pre-norm block
//     x = x + dropout1(self_attn(norm1(x)));  x = x + dropout2(ff(norm2(x)))
// and norm_first=false PyTorch's original post-norm block
//     x = norm1(x + dropout1(self_attn(x)));  x = norm2(x + dropout2(ff(x)))
// with ff(x) = linear2(dropout(activation(linear1(x)))), activation "relu" or "gelu".
// Children and parameter names are PyTorch's (self_attn.in_proj_weight, linear1.weight,
// norm1.bias, ...), so a PyTorch state_dict loads unchanged.
//
// TransformerEncoder(make_layer, num_layers, norm) stacks num_layers layers built by the factory
// (PyTorch deep-copies one prototype; C++ modules are not copyable) under "layers.0", ... and
// applies the optional final norm ("norm"; a pre-norm stack wants one).
//
// Masks as nn::MultiheadAttention (bool true = masked, float = added); is_causal alone applies
// the causal mask without building one (the attention runs scaled_dot_product_attention).
//
// Ownership: the layer owns its children (shared_ptr); outputs are new tensors.
// Errors: tsr::Error naming TransformerEncoderLayer (constructor arguments) or
// MultiheadAttention / LayerNorm (input shapes, dtypes, masks). Thread-safety: as nn::Module.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "tessera/nn/attention.hpp"
#include "tessera/nn/container.hpp"
#include "tessera/nn/dropout.hpp"
#include "tessera/nn/linear.hpp"
#include "tessera/nn/module.hpp"
#include "tessera/nn/normalization.hpp"
#include "tessera/nn/seq_util.hpp"
#include "tessera/tessera.hpp"

namespace tsr::nn {

class TransformerEncoderLayer : public Module {
 public:
  const int64_t d_model, nhead, dim_feedforward;
  const std::string activation;
  const bool batch_first, norm_first;
  std::shared_ptr<MultiheadAttention> self_attn;
  std::shared_ptr<Linear> linear1;
  std::shared_ptr<Dropout> dropout;
  std::shared_ptr<Linear> linear2;
  std::shared_ptr<LayerNorm> norm1, norm2;
  std::shared_ptr<Dropout> dropout1, dropout2;

  TransformerEncoderLayer(int64_t d_model_, int64_t nhead_, int64_t dim_feedforward_ = 2048, double dropout_p = 0.1,
                          std::string activation_ = "relu", double layer_norm_eps = 1e-5, bool batch_first_ = false,
                          bool norm_first_ = true, bool bias = true)
      : Module("TransformerEncoderLayer"),
        d_model(d_model_),
        nhead(nhead_),
        dim_feedforward(dim_feedforward_),
        activation(std::move(activation_)),
        batch_first(batch_first_),
        norm_first(norm_first_) {
    seq_detail::require_positive(type_name(), "d_model", d_model);
    seq_detail::require_positive(type_name(), "nhead", nhead);
    seq_detail::require_positive(type_name(), "dim_feedforward", dim_feedforward);
    seq_detail::require_probability(type_name(), "dropout", dropout_p);
    if (activation != "relu" && activation != "gelu")
      seq_detail::fail(type_name(), "activation must be \"relu\" or \"gelu\", got \"" + activation + "\"");
    // Registration order is PyTorch's, so state_dict keys list in the same order.
    self_attn = register_module("self_attn",
                                std::make_shared<MultiheadAttention>(d_model, nhead, dropout_p, bias, batch_first));
    linear1 = register_module("linear1", std::make_shared<Linear>(d_model, dim_feedforward, bias));
    dropout = register_module("dropout", std::make_shared<Dropout>(dropout_p));
    linear2 = register_module("linear2", std::make_shared<Linear>(dim_feedforward, d_model, bias));
    norm1 = register_module("norm1",
                            std::make_shared<LayerNorm>(std::vector<int64_t>{d_model}, layer_norm_eps, true, bias));
    norm2 = register_module("norm2",
                            std::make_shared<LayerNorm>(std::vector<int64_t>{d_model}, layer_norm_eps, true, bias));
    dropout1 = register_module("dropout1", std::make_shared<Dropout>(dropout_p));
    dropout2 = register_module("dropout2", std::make_shared<Dropout>(dropout_p));
  }

  // src: [S, N, E] ([N, S, E] with batch_first) or [S, E]. Pass std::nullopt for src_mask
  // explicitly: forward(src) alone is the unmasked override below.
  Tensor forward(const Tensor& src, const std::optional<Tensor>& src_mask,
                 const std::optional<Tensor>& src_key_padding_mask = {}, bool is_causal = false) {
    if (!src.defined() || (src.dim() != 2 && src.dim() != 3) || src.size(-1) != d_model)
      seq_detail::fail(type_name(), std::string("expected src ") + (batch_first ? "[batch, seq, " : "[seq, batch, ") +
                                        std::to_string(d_model) + "] (or [seq, " + std::to_string(d_model) +
                                        "] unbatched), got " + seq_detail::shape_text(src));
    Tensor x = src;
    if (norm_first) {
      x = x + self_attention(norm1->forward(x), src_mask, src_key_padding_mask, is_causal);
      x = x + feed_forward(norm2->forward(x));
    } else {
      x = norm1->forward(x + self_attention(x, src_mask, src_key_padding_mask, is_causal));
      x = norm2->forward(x + feed_forward(x));
    }
    return x;
  }
  Tensor forward(const Tensor& src) override { return forward(src, std::nullopt); }

  std::string extra_repr() const override {
    return "d_model=" + std::to_string(d_model) + ", nhead=" + std::to_string(nhead) +
           ", dim_feedforward=" + std::to_string(dim_feedforward) + ", activation=" + activation +
           (norm_first ? ", norm_first=true" : ", norm_first=false");
  }

 private:
  Tensor self_attention(const Tensor& x, const std::optional<Tensor>& mask, const std::optional<Tensor>& kpm,
                        bool is_causal) {
    Tensor y = self_attn->forward(x, x, x, kpm, /*need_weights=*/false, mask, true, is_causal).first;
    return dropout1->forward(y);
  }
  Tensor feed_forward(const Tensor& x) {
    Tensor h = linear1->forward(x);
    h = activation == "gelu" ? tsr::gelu(h) : tsr::relu(h);
    return dropout2->forward(linear2->forward(dropout->forward(h)));
  }
};

class TransformerEncoder : public Module {
 public:
  std::shared_ptr<ModuleList> layers;
  std::shared_ptr<LayerNorm> norm;  // null when built without one
  const int64_t num_layers;

  TransformerEncoder(const std::function<std::shared_ptr<TransformerEncoderLayer>()>& make_layer, int64_t num_layers_,
                     std::shared_ptr<LayerNorm> norm_ = nullptr)
      : Module("TransformerEncoder"), num_layers(num_layers_) {
    if (num_layers < 0) seq_detail::fail(type_name(), "num_layers must be >= 0, got " + std::to_string(num_layers));
    if (!make_layer) seq_detail::fail(type_name(), "no layer factory given");
    layers = register_module("layers", std::make_shared<ModuleList>());
    for (int64_t i = 0; i < num_layers; ++i) {
      std::shared_ptr<TransformerEncoderLayer> l = make_layer();
      if (!l) seq_detail::fail(type_name(), "the layer factory returned null for layer " + std::to_string(i));
      // One shared instance would silently tie every layer's weights.
      for (const auto& prev : *layers)
        if (prev.get() == l.get())
          seq_detail::fail(type_name(), "the layer factory returned the same layer twice (layer " + std::to_string(i) +
                                            "); it must build a new one per call");
      layers->push_back(l);
    }
    if (norm_) norm = register_module("norm", std::move(norm_));
  }

  TransformerEncoderLayer& layer(int64_t i) const { return *layers->at<TransformerEncoderLayer>(i); }

  // Masks as TransformerEncoderLayer::forward, applied in every layer.
  Tensor forward(const Tensor& src, const std::optional<Tensor>& mask,
                 const std::optional<Tensor>& src_key_padding_mask = {}, bool is_causal = false) {
    Tensor x = src;
    for (int64_t i = 0; i < num_layers; ++i) x = layer(i).forward(x, mask, src_key_padding_mask, is_causal);
    return norm ? norm->forward(x) : x;
  }
  Tensor forward(const Tensor& src) override { return forward(src, std::nullopt); }
};

}  // namespace tsr::nn
