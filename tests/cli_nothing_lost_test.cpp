// Nothing lost: the real `multigather` executable never leaves a partial output or a temporary
// file behind when writing --output fails, and an existing output survives every failure:
//  - an unwritable folder (chmod 0555 when not root; for root, which ignores permissions, a
//    folder of /proc, where no one can create files);
//  - a full disk: a 1 MiB tmpfs (needs the right to mount; skipped with the reason otherwise);
//  - a write that fails midway: RLIMIT_FSIZE below the output size (works for any user);
//  - kill -9 during a large write: the destination is the old file, never a partial one; the
//    killed writer's temporary file (".out.npy.tmp-<pid>-<n>") is left, and the next successful
//    write of the same output removes it (tools/npy.hpp, write_npy).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "npy.hpp"
#include "scratch_dir.hpp"

namespace fs = std::filesystem;
namespace mg = multigather;
using mg::DType;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

std::set<std::string> listing(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

struct Exit {
  int code = -1;     // exit status, or -signal
  std::string err;   // stderr
};

/// Starts the real executable with `args`; `before_exec` runs in the child (limits, signals).
pid_t spawn(const std::vector<std::string>& args, const std::string& err_path,
            void (*before_exec)() = nullptr) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (before_exec) before_exec();
    const int fd = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) ::dup2(fd, 2);
    const int null = ::open("/dev/null", O_RDWR);
    if (null >= 0) { ::dup2(null, 0); ::dup2(null, 1); }
    std::vector<char*> argv{const_cast<char*>(MULTIGATHER_CLI_PATH)};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(MULTIGATHER_CLI_PATH, argv.data());
    ::_exit(127);
  }
  return pid;
}

Exit wait_for(pid_t pid, const std::string& err_path) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  Exit e;
  e.code = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  e.err = read_file(err_path);
  return e;
}

class NothingLost : public ScratchDirTest {
 protected:
  /// Writes input X (uint8 [1, width]) and indices I (int64 [rows, 1], zeros): the run's
  /// output is rows x width bytes (plus the 128-byte header) from a small input.
  void make_operands(std::int64_t rows, std::int64_t width) {
    std::vector<std::uint8_t> x(static_cast<std::size_t>(width));
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<std::uint8_t>(i * 7 + 1);
    std::vector<std::int64_t> idx(static_cast<std::size_t>(rows), 0);
    ASSERT_TRUE(mg::npy::write_npy(inputs("x.npy"), mg::TensorView(x.data(), DType::kUInt8, {1, width})).ok());
    ASSERT_TRUE(mg::npy::write_npy(inputs("i.npy"), mg::TensorView(idx.data(), DType::kInt64, {rows, 1})).ok());
  }
  std::string inputs(const std::string& name) {
    fs::create_directories(dir_ / "in");
    return (dir_ / "in" / name).string();
  }
  std::vector<std::string> run_args(const std::string& out) {
    return {"run", "gather_multiaxis", "--input", inputs("x.npy"), "--indices", inputs("i.npy"),
            "--axes=0", "--output", out};
  }
  Exit run(const std::string& out, void (*before_exec)() = nullptr) {
    const std::string err = path("stderr.txt");
    return wait_for(spawn(run_args(out), err, before_exec), err);
  }
};

TEST_F(NothingLost, UnwritableFolder) {
  make_operands(4, 8);
  if (::geteuid() != 0) {
    const fs::path ro = dir_ / "ro";
    fs::create_directories(ro);
    std::ofstream(ro / "out.npy") << "precious";
    fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
    const Exit e = run((ro / "out.npy").string());
    fs::permissions(ro, fs::perms::owner_all);
    EXPECT_EQ(e.code, 3) << e.err;
    EXPECT_EQ(e.err, "multigather: error: --output '" + (ro / "out.npy").string() +
                         "': cannot create a temporary file in '" + ro.string() +
                         "': Permission denied\n");
    EXPECT_EQ(listing(ro), std::set<std::string>{"out.npy"});
    EXPECT_EQ(read_file((ro / "out.npy").string()), "precious");
  }
  // Root ignores permission bits; no one can create a file in /proc.
  if (fs::is_directory("/proc/self")) {
    const Exit e = run("/proc/self/out.npy");
    EXPECT_EQ(e.code, 3) << e.err;
    EXPECT_EQ(e.err.rfind("multigather: error: --output '/proc/self/out.npy': cannot create a "
                          "temporary file in '/proc/self': ", 0), 0u) << e.err;
    EXPECT_FALSE(fs::exists("/proc/self/out.npy"));
  }
}

TEST_F(NothingLost, FullDisk) {
  const fs::path small = dir_ / "small";
  fs::create_directories(small);
  if (::mount("tmpfs", small.c_str(), "tmpfs", 0, "size=1m") != 0) {
    GTEST_SKIP() << "cannot mount a 1 MiB tmpfs here (" << std::strerror(errno)
                 << "): the full-disk case is covered by FileSizeLimit's failing write";
  }
  make_operands(2048, 1024);  // a 2 MiB output into 1 MiB
  std::ofstream(small / "out.npy") << "precious";
  const Exit e = run((small / "out.npy").string());
  const std::set<std::string> left = listing(small);
  const std::string kept = read_file((small / "out.npy").string());
  ::umount2(small.c_str(), MNT_DETACH);
  EXPECT_EQ(e.code, 3) << e.err;
  EXPECT_EQ(e.err, "multigather: error: --output '" + (small / "out.npy").string() +
                       "': write error: No space left on device\n");
  EXPECT_EQ(left, std::set<std::string>{"out.npy"});
  EXPECT_EQ(kept, "precious");
}

void limit_file_size() {
  ::signal(SIGXFSZ, SIG_IGN);  // write() then fails with EFBIG instead of killing the process
  const rlimit r{64 << 10, 64 << 10};
  ::setrlimit(RLIMIT_FSIZE, &r);
}

TEST_F(NothingLost, FileSizeLimit) {
  make_operands(1024, 1024);  // 1 MiB output, 64 KiB allowed: the write fails midway
  const fs::path out_dir = dir_ / "out";
  fs::create_directories(out_dir);
  std::ofstream(out_dir / "out.npy") << "precious";
  const Exit e = run((out_dir / "out.npy").string(), limit_file_size);
  EXPECT_EQ(e.code, 3) << e.err;
  EXPECT_EQ(e.err, "multigather: error: --output '" + (out_dir / "out.npy").string() +
                       "': write error: File too large\n");
  EXPECT_EQ(listing(out_dir), std::set<std::string>{"out.npy"});
  EXPECT_EQ(read_file((out_dir / "out.npy").string()), "precious");
}

TEST_F(NothingLost, Kill9DuringALargeWrite) {
  constexpr std::int64_t kRows = 25600, kWidth = 4096;  // a 100 MiB output
  make_operands(kRows, kWidth);
  const fs::path out_dir = dir_ / "out";
  fs::create_directories(out_dir);
  const std::string out = (out_dir / "out.npy").string();
  std::ofstream(out) << "precious";

  // Kill the writer once its temporary file has data in it (before its rename).
  const std::string err = path("stderr.txt");
  const pid_t pid = spawn(run_args(out), err);
  const std::string prefix = ".out.npy.tmp-" + std::to_string(pid) + "-";
  bool killed_mid_write = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!killed_mid_write && std::chrono::steady_clock::now() < deadline) {
    for (const auto& e : fs::directory_iterator(out_dir)) {
      const std::string n = e.path().filename().string();
      std::error_code ec;
      if (n.rfind(prefix, 0) == 0 && fs::file_size(e.path(), ec) > 0 && !ec) {
        ::kill(pid, SIGKILL);
        killed_mid_write = true;
        break;
      }
    }
    if (!killed_mid_write) {
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) break;  // finished before we saw it
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  const Exit e = wait_for(pid, err);
  ASSERT_TRUE(killed_mid_write) << "the writer finished before its temporary file was seen";
  EXPECT_EQ(e.code, -SIGKILL);
  // The destination is the old file, never a partial new one; the leftover is recognizable.
  EXPECT_EQ(read_file(out), "precious");
  std::set<std::string> left = listing(out_dir);
  ASSERT_EQ(left.size(), 2u);
  EXPECT_EQ(left.count("out.npy"), 1u);
  left.erase("out.npy");
  EXPECT_EQ(left.begin()->rfind(prefix, 0), 0u) << *left.begin();

  // The next successful write of the same output replaces it whole and removes the leftover.
  const Exit ok = run(out);
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_EQ(listing(out_dir), std::set<std::string>{"out.npy"});
  mg::npy::NpyArray a;
  const mg::Status s = mg::npy::read_npy(out, &a);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(mg::to_string(a.view.shape), "[25600,4096]");
  const auto* bytes = static_cast<const std::uint8_t*>(a.view.data);
  EXPECT_EQ(bytes[0], 1);
  EXPECT_EQ(bytes[kRows * kWidth - 1], static_cast<std::uint8_t>((kWidth - 1) * 7 + 1));
}

}  // namespace
