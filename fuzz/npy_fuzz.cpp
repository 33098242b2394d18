// fuzz/npy_fuzz.cpp: the .npy reader on raw bytes.
//
// The first byte chooses ReadOptions::void_dtype; the rest is a .npy image, read from memory
// (read_npy_bytes) and, every 16th input, from a file (read_npy: its own header-length logic).
// Every call must return an error status or a tensor; a tensor must hold exactly the shape the
// header declares, its storage must be no larger than the data the image holds (no allocation
// trusted from a header), and writing it back and reading that again gives the same tensor.
// Memory and file reads must agree.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>

#include "fuzz_support.hpp"
#include "npy.hpp"

using namespace multigather;
using namespace multigather::fuzz;

namespace {

/// The per-process file of the read_npy check (removed right after each read).
const char* temp_path() {
  static const std::string path = "/tmp/multigather-npy-fuzz-" + std::to_string(::getpid()) + ".npy";
  return path.c_str();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  npy::ReadOptions options;
  if (data[0] < std::size(kAllDTypes)) options.void_dtype = kAllDTypes[data[0]];
  const std::string_view bytes(reinterpret_cast<const char*>(data + 1), size - 1);

  npy::NpyArray a;
  const Status s = npy::read_npy_bytes(bytes, &a, options);
  if (s.ok()) {
    if (a.storage.nbytes() > bytes.size()) die("allocation larger than the image");
    if (a.view.numel() != a.storage.numel()) die("view and storage disagree");
    npy::NpyArray b;
    const std::string image = npy::to_npy_bytes(a.view);
    npy::ReadOptions back;  // what was written: '<V1' / '<V2' name the dtype only with it
    back.void_dtype = a.view.dtype;
    const Status s2 = npy::read_npy_bytes(image, &b, back);
    if (!s2.ok()) die("cannot read back what was written:", s2.message());
    if (!(b.view.shape == a.view.shape) || b.view.dtype != a.view.dtype) die("round trip changed the shape or dtype");
    const Tensor ca = Tensor::copy_of(a.view), cb = Tensor::copy_of(b.view);
    if (ca.nbytes() != cb.nbytes() || std::memcmp(ca.data(), cb.data(), ca.nbytes()) != 0) {
      die("round trip changed the values");
    }
  } else if (s.message().empty()) {
    die("an error without a message");
  }

  if (data[0] % 16 == 0) {
    std::FILE* f = std::fopen(temp_path(), "wb");
    if (!f) return 0;
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
    npy::NpyArray c;
    const Status sf = npy::read_npy(temp_path(), &c, options);
    ::unlink(temp_path());
    if (sf.ok() != s.ok()) die("file and memory reads disagree:", s.message() + " | " + sf.message());
    if (sf.ok()) {
      const Tensor ca = Tensor::copy_of(a.view), cc = Tensor::copy_of(c.view);
      if (!(c.view.shape == a.view.shape) || ca.nbytes() != cc.nbytes() ||
          std::memcmp(ca.data(), cc.data(), ca.nbytes()) != 0) {
        die("file and memory reads give different tensors");
      }
    }
  }
  return 0;
}
