// tools/npy.hpp: reading and writing numpy .npy files (the CLI's tensor format).
//
// Format: https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html
//   "\x93NUMPY", major, minor, header length (uint16 for 1.0, uint32 for 2.0 and 3.0), then a
//   Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...), } padded with spaces
//   and ending in '\n' (latin-1 for 1.0/2.0, utf-8 for 3.0), then the raw element bytes.
//
// Dtypes (descr <-> DType; the byte-order character may be '<', '|' or '=' for little endian):
//   |b1 bool   |i1 int8   |u1 uint8   <i2 int16   <u2 uint16   <i4 int32   <u4 uint32
//   <i8 int64  <u8 uint64 <f2 float16 <f4 float32 <f8 float64  <c8 complex64  <c16 complex128
//   <V2 bfloat16: what ml_dtypes (0.6) writes for ml_dtypes.bfloat16, its only 2-byte type.
//       numpy itself writes plain 2-byte void as '|V2', which says nothing about its contents,
//       so '|V2' needs ReadOptions::void_dtype. np.load gives a '|V2' array for both: view it
//       with .view(ml_dtypes.bfloat16).
//   <f1 float8_e5m2 on reading: what ml_dtypes writes for ml_dtypes.float8_e5m2 (numpy itself
//       cannot load such a file).
//   <V1 float8_e4m3fn and float8_e5m2 are written so (np.load works; then .view() the dtype).
//       ml_dtypes writes '<V1' for a dozen 1-byte types (float8_e4m3, float4_e2m1fn, int4, ...),
//       so reading '<V1' / '|V1' needs ReadOptions::void_dtype.
//   Big-endian descrs ('>f4', '>c16', ...) are read and byte-swapped; files are always written
//   little-endian. Structured and object dtypes, strings and datetimes are rejected.
// Layout: C order and Fortran order are both read; a Fortran-order file becomes a view with
//   Fortran strides over the file's bytes (no transpose copy). Files are written in C order.
// Robustness: every header field is checked, and the data size the header promises is checked
//   against the file size BEFORE anything is allocated, so a truncated file or a lying header
//   gives an error naming the file and the numbers, never a crash or a giant allocation.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "multigather/dtype.hpp"
#include "multigather/status.hpp"
#include "multigather/tensor.hpp"

namespace multigather::npy {

/// A tensor read from a .npy file: the bytes (owned) and a view of them with the file's shape
/// (C strides, or Fortran strides for a fortran_order file).
struct NpyArray {
  Tensor storage;         // the element bytes as stored in the file (shape reversed for Fortran)
  TensorView view;        // what the file holds, as a strided view into `storage`
  std::string descr;      // the header's descr, e.g. "<f4"
  bool fortran_order = false;
  int major_version = 1;  // format version of the header (1, 2 or 3)
  int minor_version = 0;
};

struct ReadOptions {
  /// The dtype of the elements when the descr is a raw void ('<V2', '|V1', ...) that names no
  /// dtype; its element size must equal the void's width. Ignored for any other descr.
  std::optional<DType> void_dtype;
};

/// The parsed header of a .npy file.
struct NpyHeader {
  std::string descr;
  DType dtype = DType::kFloat32;
  bool big_endian = false;
  bool fortran_order = false;
  Dims shape;
  int major_version = 1;
  int minor_version = 0;
  std::uint64_t data_offset = 0;  // bytes before the element data
  std::uint64_t data_bytes = 0;   // numel * element size
};

/// Parses the preamble and header at the start of `bytes` (which may also hold data). Errors
/// (InvalidArgument) name the rule, e.g. "not a .npy file (the first 6 bytes are not
/// \x93NUMPY)", "unsupported descr '<U3' (...)".
Status parse_header(std::string_view bytes, const ReadOptions& options, NpyHeader* header);

/// Reads `path`. Errors (InvalidArgument) start with the path: "'x.npy': truncated file: ...".
Status read_npy(const std::string& path, NpyArray* out, const ReadOptions& options = {});

/// Reads a whole .npy image held in memory (what read_npy reads from a file): the same checks
/// and errors, without the path prefix. Used by the fuzz target fuzz/npy_fuzz.cpp.
Status read_npy_bytes(std::string_view bytes, NpyArray* out, const ReadOptions& options = {});

/// The descr this module writes for `dtype` ("<f4", "|b1", "<V2" for bfloat16, "<V1" for the
/// float8 types, ...).
std::string_view descr_of(DType dtype) noexcept;

/// Serializes `view` (any strides) as a version 1.0, C-order .npy image.
std::string to_npy_bytes(const TensorView& view);

/// Writes the concatenation of `pieces` to `path` as np.save writes a file, never leaving a
/// partial file where a regular file is (the destination rules of docs/cli.md's "--output"):
/// - `path` is followed through its symbolic links (at most 40): the write goes to the file a
///   link names, in that file's folder; a dangling link's missing file is created.
/// - A regular file (or none): the bytes go to a new temporary file in the same folder,
///   ".<name>.tmp-<pid>-<n>", which is fsync'ed, then renamed over the file. A replaced file
///   keeps its mode and owner (when the owner cannot be kept, the call fails and the file is
///   left as it is). A file the caller may not write (open(2) with O_WRONLY fails: a read-only
///   file, another user's) is refused, never replaced. A file with more than one hard link is
///   refused (a rename would detach the other names). On any failure (no folder, an unwritable
///   folder, a full disk, a file size limit) the temporary file is removed and the destination
///   is left as it was: it is either the old file or the whole new one, never a partial file.
///   A process killed before its rename (kill -9) cannot remove its temporary file; the next
///   successful write of the same `path` removes such leftovers whose process is gone.
/// - A character device (/dev/null, /dev/full) or a FIFO is written through, as np.save does:
///   it stays what it is (opening a FIFO waits for its reader).
/// - A directory, block device or socket is refused; nothing is written.
/// Errors (InvalidArgument) start with the path as given.
Status write_file(const std::string& path, std::span<const std::string_view> pieces);

/// write_file of `view` as a version 1.0, C-order .npy image.
Status write_npy(const std::string& path, const TensorView& view);

}  // namespace multigather::npy
