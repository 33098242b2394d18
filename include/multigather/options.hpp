// multigather/options.hpp: the vocabulary of a call's options, shared by the core operator
// (gather.hpp, scatter.hpp), the registry's typed attributes (attributes.hpp) and every backend:
// the index policy (IndexMode, docs/spec.md section 1's resolve), the scatter's Reduction
// (section 4), fill values (Scalar) and GatherOptions.
#pragma once

#include "multigather/task_pool.hpp"

#include <cstdint>
#include <string>
#include <string_view>

#include "multigather/dtype.hpp"
#include "multigather/status.hpp"

namespace multigather {

/// What happens to an index outside [0, n) after the negative rule (SPEC section 1).
enum class IndexMode : std::uint8_t {
  kError = 0,  // the call fails with an IndexOutOfRange status naming the index
  kClamp = 1,  // clamp to [0, n-1] (WebNN; numpy clip = clamp with negative_indices=false)
  kWrap = 2,   // floor modulo n (numpy mode='wrap'); the negative rule is not applied first
  kFill = 3,   // the output element becomes fill_value (TF on GPU, JAX mode='fill')
  kDrop = 4,   // scatter only: the update is skipped (JAX mode='drop', StableHLO, TF on GPU)
};

std::string_view index_mode_name(IndexMode mode) noexcept;  // "error", "clamp", "wrap", "fill", "drop"
/// Parses "error" / "clamp" / "wrap" / "fill" / "drop"; false for anything else.
bool parse_index_mode(std::string_view name, IndexMode* mode) noexcept;

/// How the updates reaching one output element combine (docs/spec.md section 4).
enum class Reduction : std::uint8_t {
  kNone = 0,  // assign: the last update in row-major order wins
  kAdd = 1,
  kMul = 2,
  kMin = 3,
  kMax = 4,
};

std::string_view reduction_name(Reduction reduction) noexcept;  // "none", "add", "mul", "min", "max"
/// Parses "none" / "add" / "mul" / "min" / "max"; false for anything else.
bool parse_reduction(std::string_view name, Reduction* reduction) noexcept;

/// A fill value before it is converted to the input's dtype. Integers stay exact (int64 and
/// uint64 are not squeezed through a double).
struct Scalar {
  enum class Kind : std::uint8_t { kInt, kUInt, kFloat } kind = Kind::kInt;
  std::int64_t i = 0;
  std::uint64_t u = 0;
  double f = 0.0;

  Scalar() = default;
  static Scalar from_int(std::int64_t v) { Scalar s; s.kind = Kind::kInt; s.i = v; return s; }
  static Scalar from_uint(std::uint64_t v) { Scalar s; s.kind = Kind::kUInt; s.u = v; return s; }
  static Scalar from_float(double v) { Scalar s; s.kind = Kind::kFloat; s.f = v; return s; }
  /// Parses "0", "-3", "18446744073709551615", "1.5", "nan", "-inf", "true"/"false".
  static bool parse(std::string_view text, Scalar* out);
  std::string to_string() const;
};

/// Writes `value` as one element of `dtype` into `out` (element_size(dtype) bytes). Fails with a
/// message naming `what` (e.g. "fill_value") when the value is not representable: an integer
/// out of the type's range, a non-integral float for an integer type, NaN for an integer type.
/// Floats round to nearest (float16/bfloat16 too); complex types take the value as real part.
Status encode_scalar(const Scalar& value, DType dtype, void* out, std::string_view what);

/// Options of gather_multiaxis (SPEC section 1).
struct GatherOptions {
  IndexMode index_mode = IndexMode::kError;
  /// v < 0 becomes v + n before index_mode applies (signed index types; ignored in wrap mode).
  bool negative_indices = true;
  /// Used when index_mode == kFill; converted to the input dtype (must be representable).
  Scalar fill_value;
  /// Threads for the CPU engine: 0 = decide from the work size (about one thread per 256 KiB
  /// moved; small calls stay on the calling thread), n > 0 = at most n, 1 = the calling thread
  /// only. With 0, no more than the cores that the 1-minute load average leaves idle (on a busy
  /// machine a call runs on the calling thread); an explicit n is not capped that way, only by
  /// the work size. Without OpenMP every call uses 1.
  int num_threads = 0;
  /// A host framework's thread pool (multigather/task_pool.hpp) for the engine's parallel loops
  /// instead of OpenMP's team (null: OpenMP, or the pool of the execute call it runs in); it
  /// must outlive the call; with num_threads 0 its size bounds the threads.
  const TaskPool* task_pool = nullptr;
};

}  // namespace multigather
