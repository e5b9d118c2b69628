// Tessera SDK: Embedding (torch.nn.Embedding): a lookup table of num_embeddings vectors.
//
// Embedding(num_embeddings, embedding_dim, padding_idx = nullopt): weight [num, dim] drawn from
// N(0, 1) (runtime RNG); the padding_idx row (negative counts from the end, as PyTorch) is
// zeroed and gets no gradient. forward(indices of any integer dtype and shape) -> [..., dim].
// from_pretrained copies a given table (frozen by default: requires_grad false).
//
// Ownership: the layer owns weight (a public member; a GPT head may share it for weight tying).
// Errors: tsr::Error naming the layer; out-of-range indices are reported by the embedding op.
// Thread-safety: as nn::Module.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "tessera/nn/init.hpp"
#include "tessera/nn/layer_util.hpp"
#include "tessera/nn/module.hpp"
#include "tessera/tessera.hpp"

namespace tsr::nn {

class Embedding : public Module {
 public:
  int64_t num_embeddings, embedding_dim;
  std::optional<int64_t> padding_idx;  // normalized to [0, num_embeddings)
  Tensor weight;

  Embedding(int64_t num_embeddings, int64_t embedding_dim, std::optional<int64_t> padding_idx = std::nullopt)
      : Module("Embedding"), num_embeddings(num_embeddings), embedding_dim(embedding_dim) {
    if (num_embeddings < 0 || embedding_dim < 0)
      detail::fail("Embedding", "num_embeddings and embedding_dim must be >= 0, got " + std::to_string(num_embeddings) +
                                    ", " + std::to_string(embedding_dim));
    this->padding_idx = normalize_padding(padding_idx);
    weight = empty({num_embeddings, embedding_dim});
    reset_parameters();
    register_parameter("weight", weight);
  }

  // A table initialised from `embeddings` [num, dim] (copied), frozen unless freeze=false.
  static std::shared_ptr<Embedding> from_pretrained(const Tensor& embeddings, bool freeze = true,
                                                    std::optional<int64_t> padding_idx = std::nullopt) {
    if (!embeddings.defined() || embeddings.dim() != 2)
      detail::fail("Embedding.from_pretrained", "embeddings must be 2-D [num, dim], got " +
                                                    (embeddings.defined() ? describe(embeddings) : "undefined"));
    auto s = embeddings.sizes();
    auto e = std::make_shared<Embedding>(s[0], s[1], padding_idx);
    NoGradGuard no_grad;
    Tensor w = embeddings.detach().clone();
    w.requires_grad_(!freeze);
    e->weight = w;  // same slot: the registered pointer now sees the new tensor
    return e;
  }

  void reset_parameters() {
    init::normal_(weight);
    if (padding_idx) {
      NoGradGuard no_grad;
      weight.select(0, *padding_idx).fill_(0);
    }
  }

  Tensor forward(const Tensor& indices) override {
    detail::require_input(*this, indices);
    if (!is_integral(indices.dtype()))
      detail::fail(name(), "indices must be an integer tensor, got " + describe(indices));
    return embedding(indices, weight, padding_idx);
  }

  std::string extra_repr() const override {
    std::string s = std::to_string(num_embeddings) + ", " + std::to_string(embedding_dim);
    if (padding_idx) s += ", padding_idx=" + std::to_string(*padding_idx);
    return s;
  }

 private:
  std::string name() const { return "Embedding(" + extra_repr() + ")"; }
  std::optional<int64_t> normalize_padding(std::optional<int64_t> p) const {
    if (!p) return p;
    if (*p >= num_embeddings || *p < -num_embeddings)
      detail::fail("Embedding", "padding_idx=" + std::to_string(*p) +
                                    " out of range for num_embeddings=" + std::to_string(num_embeddings));
    return *p < 0 ? *p + num_embeddings : *p;
  }
};

}  // namespace tsr::nn
