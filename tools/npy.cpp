// .npy reading and writing; see npy.hpp for the format, the dtype table and the guarantees.
#include "npy.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <span>
#include <utility>

namespace multigather::npy {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
/// Longest header accepted. Real headers are under 200 bytes (rank <= 16); numpy's own np.load
/// refuses headers over 10000 bytes unless told otherwise.
constexpr std::uint64_t kMaxHeaderBytes = 1 << 16;

struct DescrEntry {
  std::string_view descr;  // without the byte-order character
  DType dtype;
};

// The descrs read (byte-order character dropped). 'V2' and 'V1' are void: see dtype_of_descr.
constexpr DescrEntry kDescrs[] = {
    {"b1", DType::kBool},       {"i1", DType::kInt8},       {"u1", DType::kUInt8},
    {"i2", DType::kInt16},      {"u2", DType::kUInt16},     {"i4", DType::kInt32},
    {"u4", DType::kUInt32},     {"i8", DType::kInt64},      {"u8", DType::kUInt64},
    {"f2", DType::kFloat16},    {"V2", DType::kBFloat16},   {"f4", DType::kFloat32},
    {"f8", DType::kFloat64},    {"c8", DType::kComplex64},  {"c16", DType::kComplex128},
    {"V1", DType::kFloat8E4M3FN}, {"f1", DType::kFloat8E5M2},
};

std::string quote(std::string_view s) { return "'" + std::string(s) + "'"; }

// ---- The header's Python dict literal ------------------------------------------------------

class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : text_(text) {}

  Status parse(std::string* descr, bool* fortran_order, Dims* shape) {
    bool seen_descr = false, seen_fortran = false, seen_shape = false;
    skip_space();
    if (!consume('{')) return fail("the header does not start with '{'");
    while (true) {
      skip_space();
      if (consume('}')) break;
      std::string key;
      MULTIGATHER_RETURN_IF_ERROR(parse_string(&key, "a key"));
      skip_space();
      if (!consume(':')) return fail("expected ':' after key " + quote(key));
      skip_space();
      if (key == "descr") {
        if (seen_descr) return fail("key 'descr' appears twice");
        seen_descr = true;
        if (peek() == '[') {
          return InvalidArgument("structured dtypes (a list descr) are not supported");
        }
        MULTIGATHER_RETURN_IF_ERROR(parse_string(descr, "the descr string"));
      } else if (key == "fortran_order") {
        if (seen_fortran) return fail("key 'fortran_order' appears twice");
        seen_fortran = true;
        MULTIGATHER_RETURN_IF_ERROR(parse_bool(fortran_order));
      } else if (key == "shape") {
        if (seen_shape) return fail("key 'shape' appears twice");
        seen_shape = true;
        MULTIGATHER_RETURN_IF_ERROR(parse_shape(shape));
      } else {
        return fail("unexpected key " + quote(key) +
                    " (a .npy header has exactly 'descr', 'fortran_order' and 'shape')");
      }
      skip_space();
      if (consume(',')) continue;
      if (consume('}')) break;
      return fail("expected ',' or '}' after the value of " + quote(key));
    }
    skip_space();
    if (pos_ != text_.size()) return fail("unexpected text after the closing '}'");
    if (!seen_descr) return fail("key 'descr' is missing");
    if (!seen_fortran) return fail("key 'fortran_order' is missing");
    if (!seen_shape) return fail("key 'shape' is missing");
    return Status::Ok();
  }

 private:
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool consume(char c) {
    if (peek() != c || pos_ >= text_.size()) return false;
    ++pos_;
    return true;
  }
  bool consume(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  Status fail(const std::string& what) const {
    std::string_view shown = text_.substr(0, 120);
    while (!shown.empty() && (shown.back() == ' ' || shown.back() == '\n')) shown.remove_suffix(1);
    return InvalidArgument("malformed header: " + what + " at offset " + std::to_string(pos_) +
                           " of " + quote(shown));
  }
  Status parse_string(std::string* out, std::string_view what) {
    const char q = peek();
    if (q != '\'' && q != '"') return fail("expected " + std::string(what) + " in quotes");
    ++pos_;
    const std::size_t end = text_.find(q, pos_);
    if (end == std::string_view::npos) return fail("unterminated string");
    *out = std::string(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return Status::Ok();
  }
  Status parse_bool(bool* out) {
    if (consume(std::string_view("True"))) { *out = true; return Status::Ok(); }
    if (consume(std::string_view("False"))) { *out = false; return Status::Ok(); }
    return fail("'fortran_order' must be True or False");
  }
  Status parse_shape(Dims* shape) {
    *shape = Dims{};
    if (!consume('(')) return fail("'shape' must be a tuple like (2, 3)");
    while (true) {
      skip_space();
      if (consume(')')) return Status::Ok();
      if (peek() == '-') return fail("'shape' has a negative size");
      std::uint64_t v = 0;
      const char* first = text_.data() + pos_;
      const char* last = text_.data() + text_.size();
      const auto r = std::from_chars(first, last, v);
      if (r.ec == std::errc::result_out_of_range ||
          (r.ec == std::errc() && v > static_cast<std::uint64_t>(INT64_MAX))) {
        return fail("a size in 'shape' does not fit in 64 bits");
      }
      if (r.ec != std::errc()) return fail("'shape' must hold non-negative integers");
      pos_ += static_cast<std::size_t>(r.ptr - first);
      consume('L');  // Python 2 long literals, as old numpy wrote them
      shape->push_back(static_cast<std::int64_t>(v));
      skip_space();
      if (consume(',')) continue;
      if (consume(')')) return Status::Ok();
      return fail("expected ',' or ')' in 'shape'");
    }
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

// ---- descr <-> DType ---------------------------------------------------------------------------

Status dtype_of_descr(const std::string& descr, const ReadOptions& options, DType* dtype,
                      bool* big_endian) {
  const auto unsupported = [&](const std::string& why) {
    return InvalidArgument("unsupported descr " + quote(descr) + ": " + why);
  };
  if (descr.size() < 3 || std::string_view("<>|=").find(descr[0]) == std::string_view::npos) {
    return unsupported("expected a byte order (<, >, | or =), a kind and a width, like '<f4'");
  }
  const char order = descr[0];
  const std::string_view body = std::string_view(descr).substr(1);
  *big_endian = order == '>';
  if (body[0] == 'V') {
    std::uint64_t width = 0;
    const auto r = std::from_chars(body.data() + 1, body.data() + body.size(), width);
    if (r.ec != std::errc() || r.ptr != body.data() + body.size()) {
      return unsupported("bad void width");
    }
    *big_endian = false;  // raw bytes have no byte order
    // '<V2' is ml_dtypes' bfloat16 (plain numpy void is written '|V2').
    if (body == "V2" && order == '<' && !options.void_dtype) {
      *dtype = DType::kBFloat16;
      return Status::Ok();
    }
    if (!options.void_dtype) {
      return unsupported("raw " + std::to_string(width) +
                         "-byte void data that names no dtype (ml_dtypes writes '<V2' only for "
                         "bfloat16 but '<V1' for every 1-byte type); pass its dtype with "
                         "--input-dtype");
    }
    if (element_size(*options.void_dtype) != width) {
      return unsupported("the given dtype " + std::string(dtype_name(*options.void_dtype)) +
                         " has " + std::to_string(element_size(*options.void_dtype)) +
                         "-byte elements, not " + std::to_string(width));
    }
    *dtype = *options.void_dtype;
    return Status::Ok();
  }
  for (const DescrEntry& e : kDescrs) {
    if (e.descr[0] != 'V' && e.descr == body) {
      *dtype = e.dtype;
      if (element_size(e.dtype) == 1) *big_endian = false;
      return Status::Ok();
    }
  }
  return unsupported(
      "multigather reads bool, int8..int64, uint8..uint64, float16/32/64, complex64/128, "
      "bfloat16 ('<V2') and float8_e5m2 ('<f1') arrays");
}

void byte_swap(void* data, std::size_t nbytes, DType dtype) {
  std::size_t width = element_size(dtype);
  if (dtype == DType::kComplex64 || dtype == DType::kComplex128) width /= 2;  // swap each part
  auto* p = static_cast<unsigned char*>(data);
  for (std::size_t i = 0; i + width <= nbytes; i += width) {
    for (std::size_t a = 0, b = width - 1; a < b; ++a, --b) std::swap(p[i + a], p[i + b]);
  }
}

std::uint32_t read_le(std::string_view bytes, std::size_t at, int n) {
  std::uint32_t v = 0;
  for (int i = n - 1; i >= 0; --i) {
    v = (v << 8) | static_cast<unsigned char>(bytes[at + static_cast<std::size_t>(i)]);
  }
  return v;
}

std::string shape_tuple(const Dims& shape) {
  std::string s = "(";
  for (int d = 0; d < shape.size(); ++d) s += (d ? ", " : "") + std::to_string(shape[d]);
  if (shape.size() == 1) s += ",";
  return s + ")";
}

std::string header_bytes(const TensorView& view) {
  std::string dict = "{'descr': '" + std::string(descr_of(view.dtype)) +
                     "', 'fortran_order': False, 'shape': " + shape_tuple(view.shape) + ", }";
  // Like numpy: room to grow the first size in place (21 digits), then spaces so that the data
  // starts at a multiple of 64 bytes, then '\n'. The bytes equal np.save's.
  if (view.shape.size() > 0) {
    dict.append(21 - std::min<std::size_t>(21, std::to_string(view.shape[0]).size()), ' ');
  }

  const bool v2 = dict.size() + 11 > 65535;
  const std::size_t preamble = v2 ? 12 : 10;
  dict.append(64 - (preamble + dict.size() + 1) % 64, ' ');  // numpy pads 64 when aligned
  dict += '\n';
  std::string out(kMagic);
  out += static_cast<char>(v2 ? 2 : 1);
  out += '\0';
  const std::size_t n = dict.size();
  for (std::size_t i = 0; i < (v2 ? 4u : 2u); ++i) out += static_cast<char>((n >> (8 * i)) & 0xff);
  return out + dict;
}

std::string errno_text() { return std::strerror(errno); }

struct FileCloser {
  void operator()(std::FILE* f) const noexcept { std::fclose(f); }
};

// The array of a checked header (data_bytes already checked against what is available):
// `read_data(dst, n)` copies the n data bytes.
template <class ReadData>
Status make_array(const NpyHeader& h, ReadData&& read_data, NpyArray* out) {
  NpyArray a;
  Dims storage_shape = h.shape;
  if (h.fortran_order) {
    for (int d = 0; d < h.shape.size(); ++d) storage_shape[d] = h.shape[h.shape.size() - 1 - d];
  }
  a.storage = Tensor(h.dtype, storage_shape);
  MULTIGATHER_RETURN_IF_ERROR(read_data(a.storage.data(), static_cast<std::size_t>(h.data_bytes)));
  if (h.big_endian) byte_swap(a.storage.data(), static_cast<std::size_t>(h.data_bytes), h.dtype);
  Dims strides = contiguous_strides(h.shape);
  if (h.fortran_order) {
    // The storage's C-order strides, reversed: the same saturating products (a zero size may
    // sit beside sizes whose product overflows; found by fuzz/npy_fuzz).
    const Dims storage_strides = contiguous_strides(storage_shape);
    for (int d = 0; d < h.shape.size(); ++d) strides[d] = storage_strides[h.shape.size() - 1 - d];
  }
  a.view = TensorView(a.storage.data(), h.dtype, h.shape, strides);
  a.descr = h.descr;
  a.fortran_order = h.fortran_order;
  a.major_version = h.major_version;
  a.minor_version = h.minor_version;
  *out = std::move(a);
  return Status::Ok();
}

std::string truncated_message(const NpyHeader& h, std::uint64_t available) {
  return "truncated file: the header declares shape " + shape_tuple(h.shape) + " of " +
         std::string(dtype_name(h.dtype)) + " (" + std::to_string(h.data_bytes) +
         " bytes) but only " + std::to_string(available) + " bytes of data follow";
}

/// Removes the temporary files that writers of `name` killed before their rename (kill -9,
/// a power cut) left in `dir`: ".<name>.tmp-<pid>-<n>" whose process <pid> no longer exists.
/// A live writer's file is left alone (kill(pid, 0) succeeds or fails with EPERM); a reused pid
/// only delays the removal to a later write. Best effort: errors are ignored.
void remove_stale_temporaries(const std::filesystem::path& dir, const std::string& name) {
  const std::string prefix = "." + name + ".tmp-";
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string entry = it->path().filename().string();
    if (entry.rfind(prefix, 0) != 0) continue;
    long pid = 0;
    const char* first = entry.data() + prefix.size();
    const auto r = std::from_chars(first, entry.data() + entry.size(), pid);
    if (r.ec != std::errc() || r.ptr == first || *r.ptr != '-' || pid <= 0 || pid == ::getpid()) continue;
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
      std::error_code ignored;
      std::filesystem::remove(it->path(), ignored);
    }
  }
}

}  // namespace

std::string_view descr_of(DType dtype) noexcept {
  switch (dtype) {
    case DType::kBool: return "|b1";
    case DType::kInt8: return "|i1";
    case DType::kUInt8: return "|u1";
    case DType::kInt16: return "<i2";
    case DType::kUInt16: return "<u2";
    case DType::kInt32: return "<i4";
    case DType::kUInt32: return "<u4";
    case DType::kInt64: return "<i8";
    case DType::kUInt64: return "<u8";
    case DType::kFloat16: return "<f2";
    case DType::kBFloat16: return "<V2";
    case DType::kFloat32: return "<f4";
    case DType::kFloat64: return "<f8";
    case DType::kComplex64: return "<c8";
    case DType::kComplex128: return "<c16";
    case DType::kFloat8E4M3FN: return "<V1";
    case DType::kFloat8E5M2: return "<V1";  // loadable by numpy, unlike ml_dtypes' '<f1'
  }
  return "";
}

Status parse_header(std::string_view bytes, const ReadOptions& options, NpyHeader* header) {
  if (bytes.size() < kMagic.size() || bytes.substr(0, kMagic.size()) != kMagic) {
    return InvalidArgument("not a .npy file (it does not start with \\x93NUMPY)");
  }
  if (bytes.size() < 10) {
    return InvalidArgument("truncated file: " + std::to_string(bytes.size()) +
                           " bytes, shorter than the 10-byte .npy preamble");
  }
  const int major = static_cast<unsigned char>(bytes[6]);
  const int minor = static_cast<unsigned char>(bytes[7]);
  if ((major != 1 && major != 2 && major != 3) || minor != 0) {
    return InvalidArgument("unsupported .npy format version " + std::to_string(major) + "." +
                           std::to_string(minor) + " (supported: 1.0, 2.0, 3.0)");
  }
  const std::size_t len_size = major == 1 ? 2 : 4;
  if (bytes.size() < 8 + len_size) {
    return InvalidArgument("truncated file: " + std::to_string(bytes.size()) +
                           " bytes, shorter than the .npy preamble");
  }
  const std::uint64_t header_len = read_le(bytes, 8, static_cast<int>(len_size));
  if (header_len > kMaxHeaderBytes) {
    return InvalidArgument("the header length " + std::to_string(header_len) +
                           " exceeds the limit of " + std::to_string(kMaxHeaderBytes) + " bytes");
  }
  const std::uint64_t offset = 8 + len_size + header_len;
  if (offset > bytes.size()) {
    return InvalidArgument("truncated file: the header needs " + std::to_string(header_len) +
                           " bytes but only " + std::to_string(bytes.size() - 8 - len_size) +
                           " follow the preamble");
  }
  NpyHeader h;
  h.major_version = major;
  h.minor_version = minor;
  h.data_offset = offset;
  const std::string_view text = bytes.substr(8 + len_size, header_len);
  MULTIGATHER_RETURN_IF_ERROR(HeaderParser(text).parse(&h.descr, &h.fortran_order, &h.shape));
  if (h.shape.overflowed()) {
    return InvalidArgument("'shape' has rank " + std::to_string(h.shape.size()) +
                           ", above the maximum rank " +
                           std::to_string(kMaxRank));
  }
  MULTIGATHER_RETURN_IF_ERROR(dtype_of_descr(h.descr, options, &h.dtype, &h.big_endian));
  std::int64_t numel = 0;
  const std::uint64_t width = element_size(h.dtype);
  if (!element_count(h.shape, &numel) ||
      static_cast<std::uint64_t>(numel) > std::numeric_limits<std::uint64_t>::max() / width) {
    return InvalidArgument("shape " + shape_tuple(h.shape) + " has a byte size that overflows " +
                           "64 bits");
  }
  h.data_bytes = static_cast<std::uint64_t>(numel) * width;
  *header = std::move(h);
  return Status::Ok();
}

Status read_npy(const std::string& path, NpyArray* out, const ReadOptions& options) {
  const auto fail = [&](const std::string& what) { return InvalidArgument(quote(path) + ": " + what); };
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) return fail("cannot open: no such file");
  if (!std::filesystem::is_regular_file(status)) return fail("not a regular file");
  const std::uint64_t file_size = std::filesystem::file_size(path, ec);
  if (ec) return fail("cannot read the size: " + ec.message());
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file) return fail("cannot open: " + errno_text());

  // Preamble and header (at most 12 + kMaxHeaderBytes bytes), then the data.
  std::string head(static_cast<std::size_t>(std::min<std::uint64_t>(file_size, 12)), '\0');
  if (std::fread(head.data(), 1, head.size(), file.get()) != head.size()) {
    return fail("read error: " + errno_text());
  }
  if (head.size() >= 12 && head.substr(0, 6) == kMagic) {
    const std::size_t len_size = head[6] == 1 ? 2 : 4;
    const std::uint64_t header_len = read_le(head, 8, static_cast<int>(len_size));
    const std::uint64_t want =
        std::min<std::uint64_t>(file_size, 8 + len_size + std::min(header_len, kMaxHeaderBytes));
    if (want > head.size()) {
      const std::size_t have = head.size();
      head.resize(static_cast<std::size_t>(want));
      if (std::fread(head.data() + have, 1, head.size() - have, file.get()) != head.size() - have) {
        return fail("read error: " + errno_text());
      }
    }
  }
  NpyHeader h;
  Status s = parse_header(head, options, &h);
  if (!s.ok()) return fail(s.message());
  const std::uint64_t available = file_size - h.data_offset;
  if (h.data_bytes > available) {
    return fail(truncated_message(h, available));
  }

  return make_array(
      h,
      [&](void* dst, std::size_t n) -> Status {
        if (std::fseek(file.get(), static_cast<long>(h.data_offset), SEEK_SET) != 0 ||
            std::fread(dst, 1, n, file.get()) != n) {
          return fail("read error: " + errno_text());
        }
        return Status::Ok();
      },
      out);
}

Status read_npy_bytes(std::string_view bytes, NpyArray* out, const ReadOptions& options) {
  NpyHeader h;
  MULTIGATHER_RETURN_IF_ERROR(parse_header(bytes, options, &h));
  const std::uint64_t available = bytes.size() - h.data_offset;
  if (h.data_bytes > available) return InvalidArgument(truncated_message(h, available));
  return make_array(
      h,
      [&](void* dst, std::size_t n) {
        if (n > 0) std::memcpy(dst, bytes.data() + h.data_offset, n);
        return Status::Ok();
      },
      out);
}

std::string to_npy_bytes(const TensorView& view) {
  std::string out = header_bytes(view);
  const Tensor copy = Tensor::copy_of(view);
  out.append(static_cast<const char*>(copy.data()), copy.nbytes());
  return out;
}

namespace {

namespace fs = std::filesystem;

/// `path` with its symbolic links followed, as open(2) follows them: a relative target is read
/// from the link's folder; a dangling link resolves to the missing file it names (the write
/// creates it there, as np.save does). At most 40 links, the kernel's own limit (ELOOP).
Status follow_links(const std::string& path, fs::path* out) {
  fs::path p(path);
  for (int links = 0;; ++links) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) break;
    if (links == 40) return InvalidArgument("too many levels of symbolic links (40 followed)");
    std::error_code ec;
    const fs::path target = fs::read_symlink(p, ec);
    if (ec) return InvalidArgument("cannot read the symbolic link " + quote(p.string()) + ": " + ec.message());
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  *out = p;
  return Status::Ok();
}

/// Writes `pieces` to the open descriptor `fd`, retrying short writes and EINTR.
bool write_all(int fd, std::span<const std::string_view> pieces) {
  for (std::string_view piece : pieces) {
    const char* p = piece.data();
    std::size_t n = piece.size();
    while (n > 0) {
      const ssize_t w = ::write(fd, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return false;
      p += w;
      n -= static_cast<std::size_t>(w);
    }
  }
  return true;
}

/// Writes through an existing character device or FIFO (what np.save does: /dev/null discards,
/// a FIFO's reader gets the bytes; opening a FIFO waits for its reader).
Status write_through(const fs::path& target, std::span<const std::string_view> pieces) {
  const int fd = ::open(target.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return InvalidArgument("cannot open for writing: " + errno_text());
  bool ok = write_all(fd, pieces);
  std::string why = ok ? "" : "write error: " + errno_text();
  if (::close(fd) != 0 && ok) { ok = false; why = "close failed: " + errno_text(); }
  return ok ? Status::Ok() : InvalidArgument(why);
}

/// Writes `pieces` to a new temporary file in `target`'s folder and renames it over `target`.
/// `existing`: the regular file being replaced (its mode and owner are kept), or null.
Status replace_atomically(const fs::path& target, const struct stat* existing,
                          std::span<const std::string_view> pieces) {
  const fs::path dir = target.has_parent_path() ? target.parent_path() : ".";
  static std::atomic<unsigned> counter{0};
  std::string tmp;
  int fd = -1;
  // A replacement starts private (0600) and gets the old file's mode once written; a new file
  // gets 0666 less the umask, as np.save's.
  const mode_t create_mode = existing != nullptr ? 0600 : 0666;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    tmp = (dir / ("." + target.filename().string() + ".tmp-" + std::to_string(::getpid()) + "-" +
                  std::to_string(counter++)))
              .string();
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, create_mode);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) return InvalidArgument("cannot create a temporary file in " + quote(dir.string()) + ": " + errno_text());

  bool ok = write_all(fd, pieces);
  std::string why = ok ? "" : "write error: " + errno_text();
  if (ok && existing != nullptr) {
    struct stat mine {};
    if (::fstat(fd, &mine) != 0) {
      ok = false;
      why = "cannot read the temporary file's owner: " + errno_text();
    } else if ((mine.st_uid != existing->st_uid || mine.st_gid != existing->st_gid) &&
               ::fchown(fd, existing->st_uid, existing->st_gid) != 0) {
      ok = false;
      why = "cannot keep its owner " + std::to_string(existing->st_uid) + ":" +
            std::to_string(existing->st_gid) + " in a replacement (" + errno_text() +
            "); the file is left as it is";
    }
    // After fchown, which clears the set-user-ID and set-group-ID bits.
    if (ok && ::fchmod(fd, existing->st_mode & 07777) != 0) {
      ok = false;
      why = "cannot keep its mode in a replacement: " + errno_text();
    }
  }
  if (ok && ::fsync(fd) != 0) { ok = false; why = "fsync failed: " + errno_text(); }
  if (::close(fd) != 0 && ok) { ok = false; why = "close failed: " + errno_text(); }
  if (ok && std::rename(tmp.c_str(), target.c_str()) != 0) {
    ok = false;
    why = "cannot replace the file: " + errno_text();
  }
  if (!ok) {
    ::unlink(tmp.c_str());
    return InvalidArgument(why);
  }
  remove_stale_temporaries(dir, target.filename().string());
  return Status::Ok();
}

}  // namespace

Status write_file(const std::string& path, std::span<const std::string_view> pieces) {
  const auto fail = [&](const Status& s) { return InvalidArgument(quote(path) + ": " + s.message()); };
  if (fs::path(path).filename().empty()) return fail(InvalidArgument("not a file name"));
  fs::path target;
  if (Status s = follow_links(path, &target); !s.ok()) return fail(s);
  struct stat st {};
  if (::stat(target.c_str(), &st) != 0) {
    if (errno != ENOENT) return fail(InvalidArgument("cannot look at the destination: " + errno_text()));
    Status s = replace_atomically(target, nullptr, pieces);  // a new file
    return s.ok() ? s : fail(s);
  }
  if (S_ISDIR(st.st_mode)) return fail(InvalidArgument("is a directory"));
  if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
    Status s = write_through(target, pieces);
    return s.ok() ? s : fail(s);
  }
  if (!S_ISREG(st.st_mode)) {
    const char* kind = S_ISBLK(st.st_mode) ? "a block device" : S_ISSOCK(st.st_mode) ? "a socket" : "not a regular file";
    return fail(InvalidArgument(std::string("is ") + kind + ": an output is written through a character "
                                "device (/dev/null) or a FIFO, or replaces a regular file; nothing was written"));
  }
  if (st.st_nlink > 1) {
    return fail(InvalidArgument("has " + std::to_string(st.st_nlink) + " hard links: replacing it would "
                                "detach the other names from the new content, and writing through it "
                                "could leave a partial file; the file is left as it is (remove it "
                                "first, or write to another path)"));
  }
  // The permission to write the file itself, asked of the kernel (a read-only file, or another
  // user's in a world-writable folder, is refused, never replaced). Nothing is truncated.
  const int probe = ::open(target.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (probe < 0) return fail(InvalidArgument("cannot write the file: " + errno_text() + "; it is left as it is"));
  ::close(probe);
  Status s = replace_atomically(target, &st, pieces);
  return s.ok() ? s : fail(s);
}

Status write_npy(const std::string& path, const TensorView& view) {
  const std::string header = header_bytes(view);
  Tensor copy;
  const void* data = view.data;
  const std::size_t nbytes = static_cast<std::size_t>(view.numel()) * element_size(view.dtype);
  if (!view.is_contiguous()) {
    copy = Tensor::copy_of(view);
    data = copy.data();
  }
  const std::string_view pieces[] = {header, std::string_view(static_cast<const char*>(data), nbytes)};
  return write_file(path, pieces);
}

}  // namespace multigather::npy
