// A libtorch program that loads multigather's ops with no Python (dlopen, the dispatcher): gather,
// its gradient and its IndexError. Built and run by tests/python/test_torch_native.py.
#include <dlfcn.h>
#include <torch/torch.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <iostream>

int main(int argc, char** argv) {
  if (argc < 2 || dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL) == nullptr) {
    std::cerr << "dlopen failed: " << dlerror() << "\n";
    return 2;
  }
  auto op = c10::Dispatcher::singleton().findSchemaOrThrow("multigather::gather", "")
                .typed<at::Tensor(const at::Tensor&, int64_t, const at::Tensor&, int64_t)>();
  at::Tensor x = torch::arange(12, torch::kFloat64).reshape({3, 4}).requires_grad_();
  at::Tensor i = torch::tensor({{3, 0}, {1, 1}, {0, 2}}, torch::kInt64);
  at::Tensor y = op.call(x, 1, i, 0);
  y.sum().backward();
  const bool ok = torch::equal(y, torch::gather(x, 1, i)) &&
                  torch::equal(x.grad(), torch::zeros({3, 4}, torch::kFloat64).scatter_add(1, i, torch::ones({3, 2}, torch::kFloat64)));
  try {
    op.call(x, 1, torch::tensor({{9, 0}, {0, 0}, {0, 0}}, torch::kInt64), 0);
    return 3;
  } catch (const c10::IndexError& e) {
    std::cout << e.what_without_backtrace() << "\n";
  }
  std::cout << (ok ? "ok" : "mismatch") << "\n";
  return ok ? 0 : 1;
}
