// Fill values: parsing and conversion to an element of the input's dtype; index mode names.
#include <cerrno>
#include <charconv>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <string>

#include "multigather/options.hpp"

namespace multigather {

std::string_view index_mode_name(IndexMode mode) noexcept {
  switch (mode) {
    case IndexMode::kError: return "error";
    case IndexMode::kClamp: return "clamp";
    case IndexMode::kWrap: return "wrap";
    case IndexMode::kFill: return "fill";
    case IndexMode::kDrop: return "drop";
  }
  return "unknown";
}

bool parse_index_mode(std::string_view name, IndexMode* mode) noexcept {
  for (IndexMode m : {IndexMode::kError, IndexMode::kClamp, IndexMode::kWrap, IndexMode::kFill,
                      IndexMode::kDrop}) {
    if (index_mode_name(m) == name) {
      *mode = m;
      return true;
    }
  }
  return false;
}

bool Scalar::parse(std::string_view text, Scalar* out) {
  if (text == "true") { *out = from_int(1); return true; }
  if (text == "false") { *out = from_int(0); return true; }
  const char* first = text.data();
  const char* last = text.data() + text.size();
  if (text.empty()) return false;
  std::int64_t i = 0;
  auto r = std::from_chars(first, last, i);
  if (r.ec == std::errc() && r.ptr == last) { *out = from_int(i); return true; }
  std::uint64_t u = 0;
  r = std::from_chars(first, last, u);
  if (r.ec == std::errc() && r.ptr == last) { *out = from_uint(u); return true; }
  // strtod handles "nan", "inf", "-inf", "1e-3" (from_chars for double needs newer libstdc++).
  std::string s(text);
  char* end = nullptr;
  errno = 0;
  const double f = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || s.empty()) return false;
  *out = from_float(f);
  return true;
}

std::string Scalar::to_string() const {
  switch (kind) {
    case Kind::kInt: return std::to_string(i);
    case Kind::kUInt: return std::to_string(u);
    case Kind::kFloat: {
      char buf[64];
      auto r = std::to_chars(buf, buf + sizeof buf, f);
      return std::string(buf, r.ptr);
    }
  }
  return "?";
}

namespace {

template <class T>
Status put_integer(const Scalar& v, void* out, DType dtype, std::string_view what) {
  using L = std::numeric_limits<T>;
  const auto fail = [&] {
    return InvalidArgument(std::string(what) + " " + v.to_string() + " is not representable in " +
                           std::string(dtype_name(dtype)));
  };
  T value{};
  switch (v.kind) {
    case Scalar::Kind::kInt:
      if constexpr (L::is_signed) {
        if (v.i < static_cast<std::int64_t>(L::min()) || v.i > static_cast<std::int64_t>(L::max())) return fail();
      } else {
        if (v.i < 0 || static_cast<std::uint64_t>(v.i) > static_cast<std::uint64_t>(L::max())) return fail();
      }
      value = static_cast<T>(v.i);
      break;
    case Scalar::Kind::kUInt:
      if (v.u > static_cast<std::uint64_t>(L::max())) return fail();
      value = static_cast<T>(v.u);
      break;
    case Scalar::Kind::kFloat:
      if (!std::isfinite(v.f) || std::trunc(v.f) != v.f) return fail();
      // Compare in long double so that 2^63 / 2^64 bounds are exact.
      if (static_cast<long double>(v.f) < static_cast<long double>(L::min()) ||
          static_cast<long double>(v.f) > static_cast<long double>(L::max()))
        return fail();
      value = static_cast<T>(v.f);
      break;
  }
  std::memcpy(out, &value, sizeof(T));
  return Status::Ok();
}

double as_double(const Scalar& v) {
  switch (v.kind) {
    case Scalar::Kind::kInt: return static_cast<double>(v.i);
    case Scalar::Kind::kUInt: return static_cast<double>(v.u);
    case Scalar::Kind::kFloat: return v.f;
  }
  return 0.0;
}

std::uint8_t float_to_fp8(double x, int exp_bits, int man_bits, bool fn) {
  // Round-to-nearest-even conversion through an exhaustive search of the 256 codes: simple and
  // exact for a one-off fill value.
  auto decode = [&](int code) -> double {
    const int sign = code >> 7;
    const int e = (code >> man_bits) & ((1 << exp_bits) - 1);
    const int m = code & ((1 << man_bits) - 1);
    const int bias = (1 << (exp_bits - 1)) - 1;
    double val;
    if (fn) {
      if (e == (1 << exp_bits) - 1 && m == (1 << man_bits) - 1) return std::nan("");
    } else if (e == (1 << exp_bits) - 1) {
      return m ? std::nan("") : (sign ? -INFINITY : INFINITY);
    }
    if (e == 0) val = std::ldexp(m, 1 - bias - man_bits);
    else val = std::ldexp(m + (1 << man_bits), e - bias - man_bits);
    return sign ? -val : val;
  };
  if (std::isnan(x)) return fn ? 0x7f : 0x7e;
  int best = 0;
  double best_err = INFINITY;
  for (int c = 0; c < 256; ++c) {
    const double d = decode(c);
    if (std::isnan(d)) continue;
    const double err = std::fabs(d - x);
    if (err < best_err || (err == best_err && (c & 1) == 0 && (best & 1) == 1)) {
      best = c;
      best_err = err;
    }
  }
  return static_cast<std::uint8_t>(best);
}

/// A finite value that rounds to infinity in `dtype` (a float type narrower than double) is not
/// representable: an infinite fill must be asked for as inf.
Status overflow(const Scalar& v, DType dtype, std::string_view what) {
  return InvalidArgument(std::string(what) + " " + v.to_string() + " is not representable in " +
                         std::string(dtype_name(dtype)) + " (it overflows to infinity; pass inf " +
                         "for an infinite value)");
}

}  // namespace

Status encode_scalar(const Scalar& v, DType dtype, void* out, std::string_view what) {
  switch (dtype) {
    case DType::kBool: {
      const double d = as_double(v);
      if (!(d == 0.0 || d == 1.0)) {
        return InvalidArgument(std::string(what) + " " + v.to_string() + " is not representable in bool");
      }
      const std::uint8_t b = d == 1.0;
      std::memcpy(out, &b, 1);
      return Status::Ok();
    }
    case DType::kInt8: return put_integer<std::int8_t>(v, out, dtype, what);
    case DType::kUInt8: return put_integer<std::uint8_t>(v, out, dtype, what);
    case DType::kInt16: return put_integer<std::int16_t>(v, out, dtype, what);
    case DType::kUInt16: return put_integer<std::uint16_t>(v, out, dtype, what);
    case DType::kInt32: return put_integer<std::int32_t>(v, out, dtype, what);
    case DType::kUInt32: return put_integer<std::uint32_t>(v, out, dtype, what);
    case DType::kInt64: return put_integer<std::int64_t>(v, out, dtype, what);
    case DType::kUInt64: return put_integer<std::uint64_t>(v, out, dtype, what);
    case DType::kFloat16: {
      const std::uint16_t h = float_to_half(static_cast<float>(as_double(v)));
      if (std::isfinite(as_double(v)) && (h & 0x7fff) == 0x7c00) return overflow(v, dtype, what);
      std::memcpy(out, &h, 2);
      return Status::Ok();
    }
    case DType::kBFloat16: {
      const std::uint16_t h = float_to_bfloat16(static_cast<float>(as_double(v)));
      if (std::isfinite(as_double(v)) && (h & 0x7fff) == 0x7f80) return overflow(v, dtype, what);
      std::memcpy(out, &h, 2);
      return Status::Ok();
    }
    case DType::kFloat32: {
      const float f = static_cast<float>(as_double(v));
      if (std::isfinite(as_double(v)) && std::isinf(f)) return overflow(v, dtype, what);
      std::memcpy(out, &f, 4);
      return Status::Ok();
    }
    case DType::kFloat64: {
      const double f = as_double(v);
      std::memcpy(out, &f, 8);
      return Status::Ok();
    }
    case DType::kComplex64: {
      const std::complex<float> c(static_cast<float>(as_double(v)), 0.0f);
      if (std::isfinite(as_double(v)) && std::isinf(c.real())) return overflow(v, dtype, what);
      std::memcpy(out, &c, 8);
      return Status::Ok();
    }
    case DType::kComplex128: {
      const std::complex<double> c(as_double(v), 0.0);
      std::memcpy(out, &c, 16);
      return Status::Ok();
    }
    case DType::kFloat8E4M3FN: {
      const std::uint8_t b = float_to_fp8(as_double(v), 4, 3, true);
      std::memcpy(out, &b, 1);
      return Status::Ok();
    }
    case DType::kFloat8E5M2: {
      const std::uint8_t b = float_to_fp8(as_double(v), 5, 2, false);
      std::memcpy(out, &b, 1);
      return Status::Ok();
    }
  }
  return TypeError(std::string(what) + ": dtype " + std::to_string(static_cast<int>(dtype)) +
                   " is not supported");
}

}  // namespace multigather
