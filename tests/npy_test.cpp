// .npy reading and writing (tools/npy.hpp): numpy's own bytes as the oracle for headers, every
// dtype round trip, Fortran order, big endian, format versions, and corrupt files.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "multigather/gather.hpp"
#include "npy.hpp"
#include "scratch_dir.hpp"

namespace fs = std::filesystem;
using namespace multigather;

namespace {

class NpyTest : public ScratchDirTest {
 protected:
  std::string write_bytes(const std::string& name, const std::string& bytes) const {
    std::ofstream(path(name), std::ios::binary) << bytes;
    return path(name);
  }
  /// The error message of reading `bytes` as a .npy file.
  std::string read_error(const std::string& bytes, const npy::ReadOptions& options = {}) {
    npy::NpyArray a;
    const Status s = npy::read_npy(write_bytes("f.npy", bytes), &a, options);
    EXPECT_FALSE(s.ok());
    return s.message();
  }
  std::string prefix() const { return "'" + path("f.npy") + "': "; }

};

/// A hand-written header: magic, version, little-endian length, the dict text (padded to 64).
std::string header(const std::string& dict, int major = 1) {
  std::string text = dict;
  const std::size_t preamble = major == 1 ? 10 : 12;
  text.append(64 - (preamble + text.size() + 1) % 64, ' ');
  text += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  for (std::size_t i = 0; i < (major == 1 ? 2u : 4u); ++i) {
    out += static_cast<char>((text.size() >> (8 * i)) & 0xff);
  }
  return out + text;
}

template <class T>
std::string raw(std::initializer_list<T> values) {
  std::string s;
  for (T v : values) s.append(reinterpret_cast<const char*>(&v), sizeof v);
  return s;
}

// np.save's exact header bytes (numpy 2.4.6, printed with repr(open(f,'rb').read())).
TEST_F(NpyTest, HeaderBytesEqualNumpys) {
  const std::string pad58(58, ' '), pad62(62, ' '), pad59(59, ' ');
  float f[6] = {};
  EXPECT_EQ(npy::to_npy_bytes(TensorView(f, DType::kFloat32, {2, 3})).substr(0, 128),
            std::string("\x93NUMPY\x01\x00v\x00", 10) +
                "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" + pad58 + "\n");
  bool b = false;
  EXPECT_EQ(npy::to_npy_bytes(TensorView(&b, DType::kBool, {})).substr(0, 128),
            std::string("\x93NUMPY\x01\x00v\x00", 10) +
                "{'descr': '|b1', 'fortran_order': False, 'shape': (), }" + pad62 + "\n");
  double c[10] = {};
  EXPECT_EQ(npy::to_npy_bytes(TensorView(c, DType::kComplex128, {5})),
            std::string("\x93NUMPY\x01\x00v\x00", 10) +
                "{'descr': '<c16', 'fortran_order': False, 'shape': (5,), }" + pad59 + "\n" +
                std::string(80, '\0'));
}

// Every dtype: write, read back, same dtype, shape and bytes; the descr is the documented one.
TEST_F(NpyTest, EveryDtypeRoundTrips) {
  const char* descrs[kDTypeCount] = {"|b1", "|i1", "|u1", "<i2", "<u2", "<i4", "<u4", "<i8",
                                     "<u8", "<f2", "<V2", "<f4", "<f8", "<c8", "<c16", "<V1",
                                     "<V1"};
  for (int t = 0; t < kDTypeCount; ++t) {
    const auto dtype = static_cast<DType>(t);
    SCOPED_TRACE(std::string(dtype_name(dtype)));
    Tensor tensor(dtype, {2, 3});
    auto* bytes = static_cast<unsigned char*>(tensor.data());
    for (std::size_t i = 0; i < tensor.nbytes(); ++i) {
      bytes[i] = static_cast<unsigned char>(dtype == DType::kBool ? i % 2 : (i * 37 + 11) & 0x7f);
    }
    ASSERT_TRUE(npy::write_npy(path("t.npy"), tensor.view()).ok());
    npy::ReadOptions options;
    // '<V1' names no dtype.
    if (dtype == DType::kFloat8E4M3FN || dtype == DType::kFloat8E5M2) options.void_dtype = dtype;
    npy::NpyArray a;
    const Status s = npy::read_npy(path("t.npy"), &a, options);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(a.descr, descrs[t]);
    EXPECT_EQ(npy::descr_of(dtype), descrs[t]);
    EXPECT_EQ(a.view.dtype, dtype);
    EXPECT_EQ(a.view.shape, (Dims{2, 3}));
    EXPECT_TRUE(a.view.is_contiguous());
    EXPECT_EQ(std::memcmp(a.view.data, tensor.data(), tensor.nbytes()), 0);
  }
}

// examples/elements_axis0/input.npy was written by np.save (examples/make_examples.py).
TEST_F(NpyTest, ReadsNumpyWrittenFile) {
  npy::NpyArray a;
  const Status s =
      npy::read_npy(std::string(MULTIGATHER_SOURCE_DIR) + "/examples/elements_axis0/input.npy", &a);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(a.descr, "<i8");
  ASSERT_EQ(a.view.shape, (Dims{4, 3}));
  const auto* v = static_cast<const std::int64_t*>(a.view.data);
  EXPECT_EQ(std::vector<std::int64_t>(v, v + 12),
            (std::vector<std::int64_t>{0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32}));
}

// A Fortran-order [2,3] file holds the columns one after the other; the view gets strides
// [1,2] over those bytes, so element [i][j] is at i + 2*j.
TEST_F(NpyTest, FortranOrderBecomesStrides) {
  const std::string bytes =
      header("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }") +
      raw<std::int32_t>({0, 10, 1, 11, 2, 12});
  npy::NpyArray a;
  ASSERT_TRUE(npy::read_npy(write_bytes("f.npy", bytes), &a).ok());
  EXPECT_TRUE(a.fortran_order);
  EXPECT_EQ(a.view.shape, (Dims{2, 3}));
  EXPECT_EQ(a.view.strides, (Dims{1, 2}));
  const Tensor c = Tensor::copy_of(a.view);
  const auto* v = c.data_as<std::int32_t>();
  EXPECT_EQ(std::vector<std::int32_t>(v, v + 6), (std::vector<std::int32_t>{0, 1, 2, 10, 11, 12}));
}

TEST_F(NpyTest, BigEndianIsByteSwapped) {
  std::string bytes = header("{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }");
  bytes += std::string("\x00\x00\x01\x02\xff\xff\xff\xfe", 8);
  npy::NpyArray a;
  ASSERT_TRUE(npy::read_npy(write_bytes("f.npy", bytes), &a).ok());
  EXPECT_EQ(a.view.dtype, DType::kInt32);
  EXPECT_EQ(static_cast<const std::int32_t*>(a.view.data)[0], 0x0102);
  EXPECT_EQ(static_cast<const std::int32_t*>(a.view.data)[1], -2);

  // complex64: each float32 part is swapped on its own. 1.0f = 3f800000, 2.0f = 40000000.
  bytes = header("{'descr': '>c8', 'fortran_order': False, 'shape': (1,), }") +
          std::string("\x3f\x80\x00\x00\x40\x00\x00\x00", 8);
  ASSERT_TRUE(npy::read_npy(write_bytes("f.npy", bytes), &a).ok());
  EXPECT_EQ(static_cast<const float*>(a.view.data)[0], 1.0f);
  EXPECT_EQ(static_cast<const float*>(a.view.data)[1], 2.0f);
}

TEST_F(NpyTest, Versions2And3) {
  for (int major : {2, 3}) {
    const std::string bytes =
        header("{'descr': '<u2', 'fortran_order': False, 'shape': (3,), }", major) +
        raw<std::uint16_t>({7, 8, 9});
    npy::NpyArray a;
    const Status s = npy::read_npy(write_bytes("f.npy", bytes), &a);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(a.major_version, major);
    EXPECT_EQ(static_cast<const std::uint16_t*>(a.view.data)[2], 9);
  }
}

TEST_F(NpyTest, MlDtypesDescrs) {
  // ml_dtypes writes bfloat16 as '<V2' and float8_e5m2 as '<f1'.
  npy::NpyArray a;
  std::string bytes = header("{'descr': '<V2', 'fortran_order': False, 'shape': (1,), }") +
                      raw<std::uint16_t>({0x3f80});
  ASSERT_TRUE(npy::read_npy(write_bytes("f.npy", bytes), &a).ok());
  EXPECT_EQ(a.view.dtype, DType::kBFloat16);
  bytes = header("{'descr': '<f1', 'fortran_order': False, 'shape': (1,), }") + "\x3c";
  ASSERT_TRUE(npy::read_npy(write_bytes("f.npy", bytes), &a).ok());
  EXPECT_EQ(a.view.dtype, DType::kFloat8E5M2);

  // Plain numpy void ('|V2') and '<V1' name no dtype: an error, or the dtype the caller gives.
  bytes = header("{'descr': '|V2', 'fortran_order': False, 'shape': (1,), }") + "ab";
  EXPECT_EQ(read_error(bytes),
            prefix() + "unsupported descr '|V2': raw 2-byte void data that names no dtype "
                       "(ml_dtypes writes '<V2' only for bfloat16 but '<V1' for every 1-byte "
                       "type); pass its dtype with --input-dtype");
  npy::ReadOptions options;
  options.void_dtype = DType::kFloat16;
  ASSERT_TRUE(npy::read_npy(write_bytes("f.npy", bytes), &a, options).ok());
  EXPECT_EQ(a.view.dtype, DType::kFloat16);
  options.void_dtype = DType::kFloat32;
  EXPECT_EQ(read_error(bytes, options),
            prefix() + "unsupported descr '|V2': the given dtype float32 has 4-byte elements, "
                       "not 2");
}

TEST_F(NpyTest, CorruptFilesGiveClearErrors) {
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  EXPECT_EQ(read_error(""), prefix() + "not a .npy file (it does not start with \\x93NUMPY)");
  EXPECT_EQ(read_error("PK\x03\x04 a zip file"),
            prefix() + "not a .npy file (it does not start with \\x93NUMPY)");
  EXPECT_EQ(read_error(std::string("\x93NUMPY\x01", 7)),
            prefix() + "truncated file: 7 bytes, shorter than the 10-byte .npy preamble");
  EXPECT_EQ(read_error(header(dict).substr(0, 30)),
            prefix() + "truncated file: the header needs 118 bytes but only 20 follow the preamble");
  std::string v4 = header(dict);
  v4[6] = 4;
  EXPECT_EQ(read_error(v4), prefix() + "unsupported .npy format version 4.0 (supported: 1.0, 2.0, 3.0)");
  std::string huge_len = header(dict, 2);
  huge_len[11] = '\x7f';  // header length 0x7f000074
  EXPECT_EQ(read_error(huge_len),
            prefix() + "the header length 2130706548 exceeds the limit of 65536 bytes");

  // A lying header: 4e12 bytes promised, 24 present. Nothing is allocated.
  EXPECT_EQ(read_error(header("{'descr': '<f4', 'fortran_order': False, "
                              "'shape': (1000000, 1000000), }") + std::string(24, '\0')),
            prefix() + "truncated file: the header declares shape (1000000, 1000000) of float32 "
                       "(4000000000000 bytes) but only 24 bytes of data follow");
  EXPECT_EQ(read_error(header(dict) + std::string(23, '\0')),
            prefix() + "truncated file: the header declares shape (2, 3) of float32 (24 bytes) "
                       "but only 23 bytes of data follow");
  EXPECT_EQ(read_error(header("{'descr': '<f8', 'fortran_order': False, "
                              "'shape': (4611686018427387904, 4), }")),
            prefix() + "shape (4611686018427387904, 4) has a byte size that overflows 64 bits");
  EXPECT_EQ(read_error(header("{'descr': '<f8', 'fortran_order': False, "
                              "'shape': (99999999999999999999,), }")),
            prefix() + "malformed header: a size in 'shape' does not fit in 64 bits at offset 51 "
                       "of '{'descr': '<f8', 'fortran_order': False, 'shape': "
                       "(99999999999999999999,), }'");
}

TEST_F(NpyTest, UnsupportedAndMalformedHeaders) {
  const auto msg = [&](const std::string& dict) {
    const std::string m = read_error(header(dict) + std::string(64, '\0'));
    return m.substr(0, m.find(" at offset"));
  };
  EXPECT_EQ(msg("{'descr': '<U3', 'fortran_order': False, 'shape': (1,), }"),
            prefix() + "unsupported descr '<U3': multigather reads bool, int8..int64, "
                       "uint8..uint64, float16/32/64, complex64/128, bfloat16 ('<V2') and "
                       "float8_e5m2 ('<f1') arrays");
  EXPECT_EQ(msg("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }"),
            prefix() + "unsupported descr '|O': expected a byte order (<, >, | or =), a kind and "
                       "a width, like '<f4'");
  EXPECT_EQ(msg("{'descr': [('x', '<f4')], 'fortran_order': False, 'shape': (1,), }"),
            prefix() + "structured dtypes (a list descr) are not supported");
  EXPECT_EQ(msg("{'descr': '<f4', 'shape': (1,), }"),
            prefix() + "malformed header: key 'fortran_order' is missing");
  EXPECT_EQ(msg("{'descr': '<f4', 'fortran_order': 0, 'shape': (1,), }"),
            prefix() + "malformed header: 'fortran_order' must be True or False");
  EXPECT_EQ(msg("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }"),
            prefix() + "malformed header: 'shape' has a negative size");
  EXPECT_EQ(msg("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}"),
            prefix() + "malformed header: unexpected key 'x' (a .npy header has exactly 'descr', "
                       "'fortran_order' and 'shape')");
  EXPECT_EQ(msg("{'descr': '<f4', 'fortran_order': False, 'shape': "
                "(1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1), }"),
            prefix() + "'shape' has rank 17, above the maximum rank 16");
}

// Every prefix of a valid file, and random single-byte corruptions of its header, are either
// read or rejected with a message: never a crash (run under -DMULTIGATHER_SANITIZE too).
TEST_F(NpyTest, TruncationsAndCorruptionsNeverCrash) {
  float f[6] = {1, 2, 3, 4, 5, 6};
  const std::string good = npy::to_npy_bytes(TensorView(f, DType::kFloat32, {2, 3}));
  for (std::size_t n = 0; n < good.size(); ++n) {
    npy::NpyArray a;
    EXPECT_FALSE(npy::read_npy(write_bytes("t.npy", good.substr(0, n)), &a).ok()) << n;
  }
  const unsigned seed = 20261121;
  std::mt19937 rng(seed);
  int rejected = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::string bad = good;
    bad[rng() % 128] = static_cast<char>(rng() & 0xff);
    npy::NpyArray a;
    if (!npy::read_npy(write_bytes("t.npy", bad), &a).ok()) ++rejected;
  }
  EXPECT_GT(rejected, 0) << "seed " << seed;
}

TEST_F(NpyTest, WriteIsAtomicAndReportsErrors) {
  std::int16_t v[2] = {1, 2};
  const TensorView view(v, DType::kInt16, {2});
  const std::string target = path("out.npy");
  std::ofstream(target) << "old contents";
  ASSERT_TRUE(npy::write_npy(target, view).ok());
  npy::NpyArray a;
  ASSERT_TRUE(npy::read_npy(target, &a).ok());
  EXPECT_EQ(static_cast<const std::int16_t*>(a.view.data)[1], 2);
  // Only the target is left in the folder (no temporary file).
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);

  const Status missing_dir = npy::write_npy(path("no/such/dir/out.npy"), view);
  EXPECT_EQ(missing_dir.message().substr(0, missing_dir.message().find(": No such")),
            "'" + path("no/such/dir/out.npy") + "': cannot create a temporary file in '" +
                path("no/such/dir") + "'");
  EXPECT_EQ(npy::write_npy(dir_.string(), view).message(), "'" + dir_.string() + "': is a directory");
}

// A strided view (a transpose) is written in C order.
TEST_F(NpyTest, WritesStridedViewsInCOrder) {
  const std::int32_t v[6] = {0, 1, 2, 10, 11, 12};  // [2,3]
  const TensorView transposed(v, DType::kInt32, {3, 2}, {1, 3});
  ASSERT_TRUE(npy::write_npy(path("t.npy"), transposed).ok());
  npy::NpyArray a;
  ASSERT_TRUE(npy::read_npy(path("t.npy"), &a).ok());
  EXPECT_EQ(a.view.shape, (Dims{3, 2}));
  const auto* r = static_cast<const std::int32_t*>(a.view.data);
  EXPECT_EQ(std::vector<std::int32_t>(r, r + 6), (std::vector<std::int32_t>{0, 10, 1, 11, 2, 12}));
}

// read_npy_bytes (what the npy fuzz target drives): the reader on an image in memory, with
// read_npy's checks and messages (no path prefix).
TEST(NpyBytes, ReadsWhatToNpyBytesWrites) {
  const std::int16_t v[6] = {1, -2, 3, -4, 5, -6};
  const TensorView view(v, DType::kInt16, {3, 2});
  npy::NpyArray a;
  ASSERT_TRUE(npy::read_npy_bytes(npy::to_npy_bytes(view), &a).ok());
  EXPECT_EQ(to_string(a.view.shape), "[3,2]");
  EXPECT_EQ(a.view.dtype, DType::kInt16);
  EXPECT_EQ(std::memcmp(a.view.data, v, sizeof v), 0);
}

TEST(NpyBytes, ALyingHeaderIsAnErrorBeforeAnyAllocation) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (400000000, 400000000), }";
  header.append(64 - (10 + header.size() + 1) % 64, ' ');
  header += '\n';
  std::string image = std::string("\x93NUMPY\x01\x00", 8);
  image += static_cast<char>(header.size() & 0xff);
  image += static_cast<char>(header.size() >> 8);
  image += header + std::string(8, '\0');
  npy::NpyArray a;
  const Status s = npy::read_npy_bytes(image, &a);
  EXPECT_EQ(s.message(), "truncated file: the header declares shape (400000000, 400000000) of "
                         "float32 (640000000000000000 bytes) but only 8 bytes of data follow");
}

// Found by the npy fuzz target (an hour's run): a Fortran-order header whose sizes include a 0
// beside sizes whose product overflows int64 computed its strides with a signed overflow
// (UBSan). It is an empty array; the strides saturate as for C order.
TEST(NpyBytes, FortranOrderEmptyWithHugeSizesHasNoOverflow) {
  std::string header =
      "{'descr': '<u2', 'fortran_order': True, 'shape': (6, 9223372036854775807, 4, 0, 4000000000), }";
  header.append(64 - (10 + header.size() + 1) % 64, ' ');
  header += '\n';
  std::string image = std::string("\x93NUMPY\x01\x00", 8);
  image += static_cast<char>(header.size() & 0xff);
  image += static_cast<char>(header.size() >> 8);
  image += header;
  npy::NpyArray a;
  ASSERT_TRUE(npy::read_npy_bytes(image, &a).ok());
  EXPECT_EQ(a.view.shape, (Dims{6, 9223372036854775807, 4, 0, 4000000000}));
  EXPECT_EQ(a.view.numel(), 0);
  EXPECT_EQ(a.view.strides[0], 1);
  EXPECT_EQ(a.view.strides[1], 6);
}

}  // namespace
