// numpy-style text for tensors: a port of numpy.core.arrayprint's _formatArray and
// FloatingFormat (default options: linewidth 75, threshold 1000, edgeitems 3, precision 8,
// floatmode 'maxprec').
#include "print.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

namespace multigather::cli {
namespace {

constexpr int kLineWidth = 75;
constexpr std::int64_t kThreshold = 1000;
constexpr std::int64_t kEdgeItems = 3;
constexpr int kPrecision = 8;

// ---- Element values ----------------------------------------------------------------------------

enum class Kind { kBool, kSigned, kUnsigned, kFloat, kComplex };

Kind kind_of(DType dtype) {
  switch (dtype) {
    case DType::kBool: return Kind::kBool;
    case DType::kInt8: case DType::kInt16: case DType::kInt32: case DType::kInt64:
      return Kind::kSigned;
    case DType::kUInt8: case DType::kUInt16: case DType::kUInt32: case DType::kUInt64:
      return Kind::kUnsigned;
    case DType::kComplex64: case DType::kComplex128: return Kind::kComplex;
    default: return Kind::kFloat;
  }
}

template <class T>
T load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

std::int64_t signed_value(const unsigned char* p, DType dtype) {
  switch (element_size(dtype)) {
    case 1: return load<std::int8_t>(p);
    case 2: return load<std::int16_t>(p);
    case 4: return load<std::int32_t>(p);
    default: return load<std::int64_t>(p);
  }
}

std::uint64_t unsigned_value(const unsigned char* p, DType dtype) {
  switch (element_size(dtype)) {
    case 1: return load<std::uint8_t>(p);
    case 2: return load<std::uint16_t>(p);
    case 4: return load<std::uint32_t>(p);
    default: return load<std::uint64_t>(p);
  }
}

/// The value of a real float element, or of the real (part = 0) or imaginary (part = 1) half
/// of a complex one.
double float_value(const unsigned char* p, DType dtype, int part) {
  switch (dtype) {
    case DType::kFloat16: return half_to_float(load<std::uint16_t>(p));
    case DType::kBFloat16: return bfloat16_to_float(load<std::uint16_t>(p));
    case DType::kFloat32: return load<float>(p);
    case DType::kFloat64: return load<double>(p);
    case DType::kComplex64: return load<float>(p + 4 * part);
    case DType::kComplex128: return load<double>(p + 8 * part);
    case DType::kFloat8E4M3FN: return float8_e4m3fn_to_double(*p);
    case DType::kFloat8E5M2: return float8_e5m2_to_double(*p);
    default: return 0.0;
  }
}

/// The dtype a part is stored in (complex64 parts are float32, complex128 parts float64).
DType part_dtype(DType dtype) {
  if (dtype == DType::kComplex64) return DType::kFloat32;
  if (dtype == DType::kComplex128) return DType::kFloat64;
  return dtype;
}

/// True when `candidate` rounds to the same element of `dtype` as `value`.
bool same_element(double candidate, double value, DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
      return float_to_half(static_cast<float>(candidate)) == float_to_half(static_cast<float>(value));
    case DType::kBFloat16:
      return float_to_bfloat16(static_cast<float>(candidate)) ==
             float_to_bfloat16(static_cast<float>(value));
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E5M2: {
      // 256 codes: the candidate must be strictly nearer to `value` than to any other code.
      const double gap = std::fabs(candidate - value);
      for (int c = 0; c < 256; ++c) {
        const auto b = static_cast<unsigned char>(c);
        const double v = dtype == DType::kFloat8E4M3FN ? float8_e4m3fn_to_double(b)
                                                       : float8_e5m2_to_double(b);
        if (std::isfinite(v) && v != value && std::fabs(candidate - v) <= gap) return false;
      }
      return true;
    }
    default: return false;
  }
}

/// The shortest decimal (as a double) that identifies finite `value` among the values of
/// `dtype`: numpy's unique=True digits.
double shortest_decimal(double value, DType dtype) {
  if (dtype == DType::kFloat64 || value == 0.0) return value;
  char buf[64];
  if (dtype == DType::kFloat32) {
    const auto r = std::to_chars(buf, buf + sizeof buf - 1, static_cast<float>(value));
    *r.ptr = '\0';
    return std::strtod(buf, nullptr);
  }
  for (int digits = 0; digits < 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*e", digits, value);
    const double candidate = std::strtod(buf, nullptr);
    if (same_element(candidate, value, dtype)) return candidate;
  }
  return value;
}

// ---- Float formatting (numpy's FloatingFormat) -------------------------------------------------

/// Digits of `v` (already a shortest decimal) in positional or scientific notation, with at most
/// kPrecision fractional digits, always with a '.', e.g. "1.", "-2.5", "1.e+08".
std::string dragon4(double v, bool scientific, bool force_sign) {
  char buf[512];
  auto r = std::to_chars(buf, buf + sizeof buf,
                         v, scientific ? std::chars_format::scientific : std::chars_format::fixed);
  std::string s(buf, r.ptr);
  const std::size_t e = s.find('e');
  std::string mant = scientific ? s.substr(0, e) : s;
  std::string exp = scientific ? s.substr(e) : "";
  std::size_t dot = mant.find('.');
  if (dot != std::string::npos && mant.size() - dot - 1 > static_cast<std::size_t>(kPrecision)) {
    std::snprintf(buf, sizeof buf, scientific ? "%.*e" : "%.*f", kPrecision, v);
    s = buf;
    const std::size_t e2 = s.find('e');
    mant = scientific ? s.substr(0, e2) : s;
    exp = scientific ? s.substr(e2) : "";
    while (!mant.empty() && mant.back() == '0') mant.pop_back();
    dot = mant.find('.');
  }
  if (dot == std::string::npos) mant += '.';
  if (force_sign && mant[0] != '-') mant = "+" + mant;
  return mant + exp;
}

double exp_cutoff(DType dtype) {
  switch (dtype) {
    case DType::kFloat16: return 1e3;
    case DType::kFloat32: return 1e6;
    default: return 1e8;  // float64, and the ml_dtypes types, which numpy's printer does not know
  }
}

class FloatFormat {
 public:
  /// Chooses notation and padding for `values` (numpy's fillFormat).
  /// `dtype` is the real dtype of the values: numpy switches to scientific notation at
  /// 10 ** min(8, decimal precision of the dtype) (numpy >= 2.2).
  FloatFormat(const std::vector<double>& values, DType dtype, bool force_sign)
      : force_sign_(force_sign) {
    std::vector<double> finite;
    bool has_nonfinite = false, neg_inf = false;
    for (double v : values) {
      if (std::isfinite(v)) {
        finite.push_back(v);
      } else {
        has_nonfinite = true;
        neg_inf = neg_inf || (std::isinf(v) && v < 0);
      }
    }
    double max_abs = 0.0, min_abs = INFINITY;
    for (double v : finite) {
      if (v == 0.0) continue;
      max_abs = std::max(max_abs, std::fabs(v));
      min_abs = std::min(min_abs, std::fabs(v));
    }
    scientific_ = max_abs > 0.0 && (max_abs >= exp_cutoff(dtype) || min_abs < 1e-4 ||
                                    max_abs / min_abs > 1000.0);
    for (double v : finite) {
      const std::string s = dragon4(v, scientific_, force_sign_);
      const std::size_t e = s.find('e');
      const std::string mant = s.substr(0, e);
      const std::size_t dot = mant.find('.');
      if (scientific_) exp_size_ = std::max(exp_size_, static_cast<int>(s.size() - e) - 2);
      pad_left_ = std::max(pad_left_, static_cast<int>(dot));
      frac_ = std::max(frac_, static_cast<int>(mant.size() - dot - 1));
    }
    pad_right_ = scientific_ ? exp_size_ + 2 + frac_ : frac_;
    if (has_nonfinite) {
      const int neg = (force_sign_ || neg_inf) ? 1 : 0;
      pad_left_ = std::max({pad_left_, 3 - (pad_right_ + 1), 3 + neg - (pad_right_ + 1)});
    }
  }

  std::string operator()(double v) const {
    if (!std::isfinite(v)) {
      std::string s = std::isnan(v) ? "nan" : (v < 0 ? "-inf" : "inf");
      if (force_sign_ && s[0] != '-') s = "+" + s;
      const int width = pad_left_ + pad_right_ + 1;
      return std::string(std::max(0, width - static_cast<int>(s.size())), ' ') + s;
    }
    std::string s = dragon4(v, scientific_, force_sign_);
    const std::size_t e = s.find('e');
    std::string mant = s.substr(0, e);
    const std::string exp = e == std::string::npos ? "" : s.substr(e);
    const int dot = static_cast<int>(mant.find('.'));
    const int frac = static_cast<int>(mant.size()) - dot - 1;
    if (scientific_) {
      mant += std::string(static_cast<std::size_t>(frac_ - frac), '0');  // same digit count
      return std::string(static_cast<std::size_t>(std::max(0, pad_left_ - dot)), ' ') + mant + exp;
    }
    return std::string(static_cast<std::size_t>(std::max(0, pad_left_ - dot)), ' ') + mant +
           std::string(static_cast<std::size_t>(std::max(0, pad_right_ - frac)), ' ');
  }

 private:
  bool force_sign_;
  bool scientific_ = false;
  int pad_left_ = 0;
  int pad_right_ = 0;
  int frac_ = 0;
  int exp_size_ = 0;
};

// ---- Layout (numpy's _formatArray) -------------------------------------------------------------

struct Layout {
  const TensorView& view;
  bool summarize;
  std::function<std::string(const unsigned char*)> word;

  const unsigned char* at(const std::vector<std::int64_t>& index) const {
    std::int64_t offset = 0;
    for (std::size_t d = 0; d < index.size(); ++d) {
      offset += index[d] * view.strides[static_cast<int>(d)];
    }
    return static_cast<const unsigned char*>(view.data) +
           offset * static_cast<std::int64_t>(element_size(view.dtype));
  }

  /// The positions shown along `axis` (all, or the edges with -1 marking "...").
  std::vector<std::int64_t> shown(int axis) const {
    const std::int64_t n = view.shape[axis];
    std::vector<std::int64_t> out;
    if (summarize && n > 2 * kEdgeItems) {
      for (std::int64_t i = 0; i < kEdgeItems; ++i) out.push_back(i);
      out.push_back(-1);
      for (std::int64_t i = n - kEdgeItems; i < n; ++i) out.push_back(i);
    } else {
      for (std::int64_t i = 0; i < n; ++i) out.push_back(i);
    }
    return out;
  }

  static void extend_line(std::string& s, std::string& line, const std::string& word, int width,
                          const std::string& indent) {
    bool wrap = static_cast<int>(line.size() + word.size()) > width;
    if (line.size() <= indent.size()) wrap = false;  // wrapping would not help
    if (wrap) {
      while (!line.empty() && line.back() == ' ') line.pop_back();
      s += line + "\n";
      line = indent;
    }
    line += word;
  }

  std::string recurse(std::vector<std::int64_t>& index, const std::string& indent,
                      int width) const {
    const int axis = static_cast<int>(index.size());
    const int axes_left = view.rank() - axis;
    if (axes_left == 0) return word(at(index));
    const std::string next_indent = indent + " ";
    const int next_width = width - 1;
    const std::vector<std::int64_t> positions = shown(axis);
    std::string s;
    if (axes_left == 1) {
      const int elem_width = width - 1;
      std::string line = indent;
      for (std::size_t n = 0; n < positions.size(); ++n) {
        std::string w;
        if (positions[n] < 0) {
          w = "...";
        } else {
          index.push_back(positions[n]);
          w = recurse(index, next_indent, next_width);
          index.pop_back();
        }
        extend_line(s, line, w, elem_width, indent);
        if (n + 1 < positions.size()) line += " ";
      }
      s += line;
    } else {
      const std::string line_sep(static_cast<std::size_t>(axes_left - 1), '\n');
      for (std::size_t n = 0; n < positions.size(); ++n) {
        if (positions[n] < 0) {
          s += indent + "...";
        } else {
          index.push_back(positions[n]);
          s += indent + recurse(index, next_indent, next_width);
          index.pop_back();
        }
        if (n + 1 < positions.size()) s += line_sep;
      }
    }
    return "[" + s.substr(indent.size()) + "]";
  }

  /// Calls `f` on every element that will be shown.
  void for_each_shown(std::vector<std::int64_t>& index,
                      const std::function<void(const unsigned char*)>& f) const {
    if (static_cast<int>(index.size()) == view.rank()) {
      f(at(index));
      return;
    }
    for (std::int64_t i : shown(static_cast<int>(index.size()))) {
      if (i < 0) continue;
      index.push_back(i);
      for_each_shown(index, f);
      index.pop_back();
    }
  }
};

std::string right_align(std::string s, std::size_t width) {
  return std::string(width > s.size() ? width - s.size() : 0, ' ') + s;
}

}  // namespace

double float8_e4m3fn_to_double(unsigned char bits) noexcept {
  const int exponent = (bits >> 3) & 0xF;
  const int mantissa = bits & 0x7;
  const double sign = (bits & 0x80) ? -1.0 : 1.0;
  if (exponent == 0xF && mantissa == 0x7) return std::nan("");
  if (exponent == 0) return sign * std::ldexp(mantissa / 8.0, -6);
  return sign * std::ldexp(1.0 + mantissa / 8.0, exponent - 7);
}

double float8_e5m2_to_double(unsigned char bits) noexcept {
  return half_to_float(static_cast<std::uint16_t>(bits << 8));
}

std::string format_tensor(const TensorView& view) {
  if (view.numel() == 0) return "[]";
  Layout layout{view, view.numel() > kThreshold, {}};
  const DType dtype = view.dtype;
  const Kind kind = kind_of(dtype);
  const DType part = part_dtype(dtype);
  std::vector<std::int64_t> index;

  // Pass 1: the widths (over the shown elements only, as numpy does).
  std::size_t width = 0;
  std::vector<double> reals, imags;
  layout.for_each_shown(index, [&](const unsigned char* p) {
    switch (kind) {
      case Kind::kBool: width = std::max<std::size_t>(width, *p ? 4 : 5); break;
      case Kind::kSigned: width = std::max(width, std::to_string(signed_value(p, dtype)).size()); break;
      case Kind::kUnsigned: width = std::max(width, std::to_string(unsigned_value(p, dtype)).size()); break;
      case Kind::kFloat:
      case Kind::kComplex: {
        const auto shortest = [&](double v) { return std::isfinite(v) ? shortest_decimal(v, part) : v; };
        reals.push_back(shortest(float_value(p, dtype, 0)));
        if (kind == Kind::kComplex) imags.push_back(shortest(float_value(p, dtype, 1)));
        break;
      }
    }
  });
  const FloatFormat real_format(reals, part, false);
  const FloatFormat imag_format(imags, part, true);

  // Pass 2: the words.
  layout.word = [&](const unsigned char* p) -> std::string {
    switch (kind) {
      case Kind::kBool: return right_align(*p ? "True" : "False", width);
      case Kind::kSigned: return right_align(std::to_string(signed_value(p, dtype)), width);
      case Kind::kUnsigned: return right_align(std::to_string(unsigned_value(p, dtype)), width);
      case Kind::kFloat: {
        const double v = float_value(p, dtype, 0);
        return real_format(std::isfinite(v) ? shortest_decimal(v, part) : v);
      }
      case Kind::kComplex: {
        const double re = float_value(p, dtype, 0), im = float_value(p, dtype, 1);
        std::string i = imag_format(std::isfinite(im) ? shortest_decimal(im, part) : im);
        const std::size_t end = i.find_last_not_of(' ') + 1;
        i = i.substr(0, end) + "j" + std::string(i.size() - end, ' ');
        return real_format(std::isfinite(re) ? shortest_decimal(re, part) : re) + i;
      }
    }
    return "";
  };
  if (view.rank() == 0) return layout.word(static_cast<const unsigned char*>(view.data));
  return layout.recurse(index, " ", kLineWidth);
}

}  // namespace multigather::cli
