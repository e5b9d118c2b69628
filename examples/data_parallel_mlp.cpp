// Tessera example: data-parallel training across processes with the fabric backend's Gloo engine.
//
//   tessera launch -n 2 -- tessera_data_parallel_mlp [--epochs N] [--seed S] [--check MIN_ACCURACY]
//
// Every rank builds the MLP and wraps it in DistributedDataParallel (which broadcasts rank 0's
// weights), reads its share of each global batch of 24 points (DistributedSampler: rank r gets
// every R-th index of the epoch's permutation, so the R local batches of a step are exactly the
// one-process batch), and calls ddp.backward(loss), which averages the gradients over the ranks
// in 25 MiB buckets, before Adam steps. The result equals one process training on the whole batch, up to
// float rounding: the last line prints a checksum of the weights to compare (tests/fabric does).
// Alone (no launcher) it is rank 0 of 1.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "tessera/data.hpp"
#include "tessera/distributed/ddp.hpp"
#include "tessera/distributed/process_group.hpp"
#include "tessera/nn.hpp"
#include "tessera/optim.hpp"
#include "spirals.hpp"
#include "tessera/tessera.hpp"

using tsr::Tensor;
namespace dist = tsr::distributed;

int main(int argc, char** argv) {
  int epochs = 20;
  uint64_t seed = 0;
  double check = -1;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--epochs") && i + 1 < argc)
      epochs = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--seed") && i + 1 < argc)
      seed = std::strtoull(argv[++i], nullptr, 10);
    else if (!std::strcmp(argv[i], "--check") && i + 1 < argc)
      check = std::atof(argv[++i]);
    else {
      std::fprintf(stderr, "usage: %s [--epochs N] [--seed S] [--check MIN_ACCURACY]\n", argv[0]);
      return 2;
    }
  }
  try {
    dist::DeviceGroup pg = dist::init_process_group();
    const int rank = pg.rank(), world = pg.size();
    const int64_t global_batch = 24;
    if (global_batch % world != 0) {
      std::fprintf(stderr, "the global batch of %lld does not split over %d ranks\n", (long long)global_batch, world);
      return 2;
    }
    tsr::manual_seed(seed);
    const int64_t classes = 3;
    auto [x_train, y_train] = spirals(400, classes, seed + 1);  // 1200 points: 50 steps per epoch
    auto [x_test, y_test] = spirals(100, classes, seed + 2);
    using tsr::nn::Linear, tsr::nn::ReLU;
    auto model = std::make_shared<tsr::nn::Sequential>(std::vector<std::shared_ptr<tsr::nn::Module>>{
        std::make_shared<Linear>(2, 64), std::make_shared<ReLU>(), std::make_shared<Linear>(64, 64),
        std::make_shared<ReLU>(), std::make_shared<Linear>(64, classes)});
    dist::DistributedDataParallel ddp(model, pg);  // every rank starts from rank 0's weights
    std::vector<Tensor> params = model->parameters();
    tsr::optim::AdamOptions adam;
    adam.lr = 1e-2;
    tsr::optim::Adam optimizer(params, adam);
    tsr::data::DistributedSampler sampler(static_cast<size_t>(x_train.size(0)), world, rank, true, seed, false);
    const int64_t local_batch = global_batch / world;
    for (int epoch = 1; epoch <= epochs; ++epoch) {
      sampler.set_epoch(static_cast<uint64_t>(epoch));
      std::vector<int64_t> mine = sampler.indices();
      double loss_sum = 0;
      int64_t steps = 0;
      for (size_t s = 0; s + static_cast<size_t>(local_batch) <= mine.size(); s += static_cast<size_t>(local_batch)) {
        Tensor idx = tsr::from_vector(std::vector<int64_t>(mine.begin() + static_cast<int64_t>(s),
                                                           mine.begin() + static_cast<int64_t>(s) + local_batch),
                                      {local_batch});
        optimizer.zero_grad();
        Tensor loss = tsr::nn::cross_entropy(ddp(tsr::index_select(x_train, 0, idx)),
                                             tsr::index_select(y_train, 0, idx));
        ddp.backward(loss);  // gradients averaged over the ranks
        optimizer.step();
        Tensor l = loss.detach().clone();
        pg.all_reduce({l}, dist::ReduceOp::Avg).wait();  // the global batch's loss, for the log
        loss_sum += l.item<double>();
        ++steps;
      }
      if (rank == 0 && (epoch == 1 || epoch % 5 == 0 || epoch == epochs))
        std::printf("epoch %3d  loss %.4f  (%d ranks x %lld points per step)\n", epoch, loss_sum / double(steps), world,
                    (long long)local_batch);
    }
    double acc;
    {
      tsr::NoGradGuard no_grad;
      acc = tsr::mean(tsr::eq(tsr::argmax((*model)(x_test), 1), y_test).to(TSR_F32)).item<double>();
    }
    double checksum = 0;
    for (const Tensor& p : params) checksum += tsr::sum(tsr::abs(p)).item<double>();
    if (rank == 0) {
      std::printf("final test accuracy: %.3f\n", acc);
      std::printf("weights checksum: %.6e\n", checksum);
    }
    if (check >= 0 && acc < check) {
      std::fprintf(stderr, "FAIL: test accuracy %.3f is below %.3f\n", acc, check);
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
