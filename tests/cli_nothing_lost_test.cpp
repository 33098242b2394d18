// Nothing lost: the real `multigather` executable never leaves a partial output or a temporary
// file behind when writing --output fails, and an existing output survives every failure:
//  - an unwritable folder (chmod 0555 when not root; for root, which ignores permissions, a
//    folder of /proc, where no one can create files);
//  - a full disk: a 1 MiB tmpfs (needs the right to mount; skipped with the reason otherwise);
//  - a write that fails midway: RLIMIT_FSIZE below the output size (works for any user);
//  - kill -9 during a large write: the destination is the old file, never a partial one; the
//    killed writer's temporary file (".out.npy.tmp-<pid>-<n>") is left, and the next successful
//    write of the same output removes it (tools/npy.hpp, write_npy).
// And the destination rules of np.save (tools/npy.hpp, write_file): a FIFO and a character
// device are written through and stay what they are, a symbolic link is followed, a replaced
// file keeps its mode and owner, a read-only or another user's file (tried as an unprivileged
// user where the test can drop privileges) and a hard-linked file are refused with exit code 3.
#include <gtest/gtest.h>
#include <grp.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
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

/// The executable spawn() runs: the build's, or a copy that an unprivileged user can reach.
std::string executable = MULTIGATHER_CLI_PATH;

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
    std::vector<char*> argv{const_cast<char*>(executable.c_str())};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(executable.c_str(), argv.data());
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

// ---- Destinations that are not a plain regular file ------------------------------------------

constexpr uid_t kNobody = 65534;

/// The child's part of running as user and group 65534 (nobody, nogroup).
void drop_privileges() {
  if (::setgroups(0, nullptr) != 0 || ::setgid(kNobody) != 0 || ::setuid(kNobody) != 0) ::_exit(126);
}

class OutputPath : public NothingLost {
 protected:
  void SetUp() override {
    NothingLost::SetUp();
    make_operands(3, 4);  // 3 rows of x = [1, 8, 15, 22]
    expected_ = mg::npy::to_npy_bytes(mg::TensorView(expected_values_.data(), DType::kUInt8, {3, 4}));
  }
  void TearDown() override {
    executable = MULTIGATHER_CLI_PATH;
    NothingLost::TearDown();
  }
  mode_t mode_of(const fs::path& p) {
    struct stat st {};
    EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
    return st.st_mode;
  }
  /// Makes `dir_` and the operands reachable by user nobody, with a copy of the executable
  /// inside (the build folder may sit in a private folder, e.g. CI's mktemp -d).
  void open_up_for_nobody() {
    fs::permissions(dir_, fs::perms::all);
    fs::permissions(dir_ / "in", fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                     fs::perms::others_read | fs::perms::others_exec);
    const fs::path exe = dir_ / "multigather";
    fs::copy_file(MULTIGATHER_CLI_PATH, exe);
    fs::permissions(exe, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                             fs::perms::others_read | fs::perms::others_exec);
    executable = exe.string();
    const std::string err = path("stderr.txt");
    std::ofstream(err).close();
    fs::permissions(err, fs::perms::all);
  }
  std::vector<std::uint8_t> expected_values_ = {1, 8, 15, 22, 1, 8, 15, 22, 1, 8, 15, 22};
  std::string expected_;  // the .npy bytes of the run's output
};

TEST_F(OutputPath, FifoIsWrittenThroughAndStaysAFifo) {
  const fs::path fifo = dir_ / "out.npy";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0) << std::strerror(errno);
  std::string got;
  std::thread reader([&] { got = read_file(fifo.string()); });  // open waits for the writer
  const Exit e = run(fifo.string());
  reader.join();
  EXPECT_EQ(e.code, 0) << e.err;
  EXPECT_TRUE(S_ISFIFO(mode_of(fifo)));
  EXPECT_EQ(got, expected_);
  EXPECT_EQ(listing(dir_).count("out.npy"), 1u);
}

TEST_F(OutputPath, CharacterDeviceIsWrittenThroughAndStaysADevice) {
  // Copies of /dev/null (1,3) and /dev/full (1,7) in the scratch folder: a regression must not
  // break the machine's own /dev/null.
  const fs::path null = dir_ / "null", full = dir_ / "full";
  if (::mknod(null.c_str(), S_IFCHR | 0666, ::makedev(1, 3)) != 0 ||
      ::mknod(full.c_str(), S_IFCHR | 0666, ::makedev(1, 7)) != 0) {
    GTEST_SKIP() << "cannot make device nodes here (" << std::strerror(errno) << ")";
  }
  if (::open(null.c_str(), O_WRONLY) < 0) GTEST_SKIP() << "device nodes do not open here (nodev mount)";
  const Exit e = run(null.string());
  EXPECT_EQ(e.code, 0) << e.err;
  EXPECT_TRUE(S_ISCHR(mode_of(null)));
  const Exit f = run(full.string());
  EXPECT_EQ(f.code, 3) << f.err;
  EXPECT_EQ(f.err, "multigather: error: --output '" + full.string() + "': write error: No space left on device\n");
  EXPECT_TRUE(S_ISCHR(mode_of(full)));
  EXPECT_EQ(listing(dir_), (std::set<std::string>{"full", "in", "null", "stderr.txt"}));
}

TEST_F(OutputPath, SymlinkIsFollowed) {
  fs::create_directories(dir_ / "real");
  std::ofstream(dir_ / "real" / "target.npy") << "old";
  fs::create_symlink("real/target.npy", dir_ / "out.npy");
  const Exit e = run((dir_ / "out.npy").string());
  EXPECT_EQ(e.code, 0) << e.err;
  EXPECT_TRUE(S_ISLNK(mode_of(dir_ / "out.npy")));
  EXPECT_EQ(read_file((dir_ / "real" / "target.npy").string()), expected_);
  EXPECT_EQ(listing(dir_ / "real"), std::set<std::string>{"target.npy"});
  // A dangling link: the file it names is created, the link stays.
  fs::create_symlink("real/new.npy", dir_ / "dangling.npy");
  const Exit d = run((dir_ / "dangling.npy").string());
  EXPECT_EQ(d.code, 0) << d.err;
  EXPECT_TRUE(S_ISLNK(mode_of(dir_ / "dangling.npy")));
  EXPECT_EQ(read_file((dir_ / "real" / "new.npy").string()), expected_);
}

TEST_F(OutputPath, ReplacedFileKeepsItsModeAndOwner) {
  const fs::path out = dir_ / "out.npy";
  std::ofstream(out) << "old";
  ASSERT_EQ(::chmod(out.c_str(), 0600), 0);
  const bool root = ::geteuid() == 0;
  if (root) ASSERT_EQ(::chown(out.c_str(), kNobody, kNobody), 0);  // another owner to keep
  const Exit e = run(out.string());
  EXPECT_EQ(e.code, 0) << e.err;
  EXPECT_EQ(read_file(out.string()), expected_);
  struct stat st {};
  ASSERT_EQ(::stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  if (root) {
    EXPECT_EQ(st.st_uid, kNobody);
    EXPECT_EQ(st.st_gid, kNobody);
  }
}

TEST_F(OutputPath, FileTheUserCannotWriteIsRefused) {
  const fs::path out = dir_ / "out.npy";
  std::ofstream(out) << "precious";
  ASSERT_EQ(::chmod(out.c_str(), 0444), 0);
  const std::string want = "multigather: error: --output '" + out.string() +
                           "': cannot write the file: Permission denied; it is left as it is\n";
  if (::geteuid() != 0) {  // the user's own read-only file
    const Exit e = run(out.string());
    EXPECT_EQ(e.code, 3) << e.err;
    EXPECT_EQ(e.err, want);
  } else {
    // As user nobody, in a world-writable folder: root's read-only file, then nobody's own.
    open_up_for_nobody();
    const Exit e = run(out.string(), drop_privileges);
    ASSERT_NE(e.code, 126) << "cannot drop privileges here";
    EXPECT_EQ(e.code, 3) << e.err;
    EXPECT_EQ(e.err, want);
    EXPECT_EQ(::chown(out.c_str(), kNobody, kNobody), 0);
    const Exit own = run(out.string(), drop_privileges);
    EXPECT_EQ(own.code, 3) << own.err;
    EXPECT_EQ(own.err, want);
  }
  EXPECT_EQ(read_file(out.string()), "precious");
  EXPECT_EQ(mode_of(out) & 07777, 0444u);
  EXPECT_EQ(listing(dir_).count("out.npy"), 1u);
  for (const std::string& n : listing(dir_)) EXPECT_EQ(n.find(".tmp-"), std::string::npos) << n;
}

TEST_F(OutputPath, HardLinkedFileIsRefused) {
  const fs::path out = dir_ / "out.npy", other = dir_ / "other.npy";
  std::ofstream(out) << "precious";
  fs::create_hard_link(out, other);
  const Exit e = run(out.string());
  EXPECT_EQ(e.code, 3) << e.err;
  EXPECT_EQ(e.err.rfind("multigather: error: --output '" + out.string() + "': has 2 hard links: ", 0), 0u) << e.err;
  EXPECT_EQ(read_file(out.string()), "precious");
  EXPECT_EQ(read_file(other.string()), "precious");
  EXPECT_EQ(fs::hard_link_count(out), 2u);
}

TEST_F(OutputPath, SocketAndDirectoryAreRefused) {
  const fs::path sock = dir_ / "out.sock";
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(sock.string().size(), sizeof(addr.sun_path));
  std::strcpy(addr.sun_path, sock.c_str());
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0) << std::strerror(errno);
  const Exit e = run(sock.string());
  ::close(fd);
  EXPECT_EQ(e.code, 3) << e.err;
  EXPECT_EQ(e.err.rfind("multigather: error: --output '" + sock.string() + "': is a socket: ", 0), 0u) << e.err;
  EXPECT_TRUE(S_ISSOCK(mode_of(sock)));
  const Exit d = run(dir_.string() + "/in");
  EXPECT_EQ(d.code, 3) << d.err;
  EXPECT_EQ(d.err, "multigather: error: --output '" + dir_.string() + "/in': is a directory\n");
}

// ---- Ctrl-C ----------------------------------------------------------------------------------

TEST_F(NothingLost, SigintStopsALongRunWithExitCode130AndNoOutput) {
  // A scatter of 2^17 x 2^17 lookups (minutes) from small files: input [2^17, 1] uint8,
  // indices [1, 2^17] zeros, axes [1]: every row of the input gets 2^17 updates.
  constexpr std::int64_t kN = std::int64_t{1} << 17;
  std::vector<std::uint8_t> x(static_cast<std::size_t>(kN), 1);
  std::vector<std::int64_t> idx(static_cast<std::size_t>(kN), 0);
  const std::uint8_t one = 1;
  ASSERT_TRUE(mg::npy::write_npy(inputs("x.npy"), mg::TensorView(x.data(), DType::kUInt8, {kN, 1})).ok());
  ASSERT_TRUE(mg::npy::write_npy(inputs("i.npy"), mg::TensorView(idx.data(), DType::kInt64, {1, kN})).ok());
  ASSERT_TRUE(mg::npy::write_npy(inputs("u.npy"), mg::TensorView(&one, DType::kUInt8, {1, 1})).ok());
  const fs::path out_dir = dir_ / "out";
  fs::create_directories(out_dir);
  const std::string err = path("stderr.txt");
  const pid_t pid = spawn({"run", "scatter_multiaxis", "--input", inputs("x.npy"), "--indices", inputs("i.npy"),
                           "--updates", inputs("u.npy"), "--axes=1", "--reduction=add", "--output",
                           (out_dir / "out.npy").string()},
                          err);
  std::this_thread::sleep_for(std::chrono::milliseconds(700));  // past reading the files
  const auto sent = std::chrono::steady_clock::now();
  ::kill(pid, SIGINT);
  const Exit e = wait_for(pid, err);
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();
  EXPECT_EQ(e.code, 130) << e.err;
  EXPECT_EQ(e.err.rfind("multigather: error: interrupted", 0), 0u) << e.err;
  EXPECT_LT(waited, 1.0);
  EXPECT_TRUE(listing(out_dir).empty());
}

}  // namespace
