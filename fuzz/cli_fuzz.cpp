// fuzz/cli_fuzz.cpp: the command-line tool's argument parser and dispatch, in-process.
//
// The bytes are split at '\n' into arguments (argv[1..]); the tool runs as `multigather ...`
// with its output captured. It must return one of its exit codes (cli.hpp's ExitCode) and,
// on failure, write exactly one line "multigather: error: ..." to stderr; it must never crash,
// throw or hang.
//
// Safety: the target runs in a private temporary folder (created at start-up) holding two small
// .npy files, x.npy (float32 [2,3]) and i.npy (int64 [2,3]), and every '/' in the arguments
// becomes '_', so an --output can only create files inside that folder; they are removed after
// each run.
//
// Output paths (tools/npy.hpp, write_file): each run also finds link.npy (a symbolic link to the
// missing linked.npy), ro.npy (mode 0444) and hard.npy (hard-linked as hard2.npy); after the
// run link.npy must still be a link, ro.npy keep its mode and the hard-linked file its content
// and both names (a hard-linked output is refused).
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.hpp"
#include "fuzz_support.hpp"
#include "npy.hpp"

using namespace multigather;

namespace {

std::string g_dir;
int g_dir_fd = -1;   // the private folder
int g_home_fd = -1;  // the folder libFuzzer was started in (its corpus paths are relative to it)

void clean_dir() {
  DIR* d = ::opendir(".");
  if (!d) return;
  std::vector<std::string> extra;
  while (dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n != "." && n != ".." && n != "x.npy" && n != "i.npy") extra.push_back(n);
  }
  ::closedir(d);
  for (const std::string& n : extra) {
    if (::unlink(n.c_str()) != 0) std::remove(n.c_str());
  }
}

void remove_dir() {
  if (::chdir(g_dir.c_str()) != 0) return;
  clean_dir();
  ::unlink("x.npy");
  ::unlink("i.npy");
  if (::chdir("/") == 0) ::rmdir(g_dir.c_str());
}

/// The output-path fixtures of one run (in the private folder, the current directory).
void make_path_fixtures() {
  if (::symlink("linked.npy", "link.npy") != 0) std::abort();
  const int ro = ::open("ro.npy", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
  const int hard = ::open("hard.npy", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (ro < 0 || hard < 0 || ::write(hard, "hard", 4) != 4 || ::link("hard.npy", "hard2.npy") != 0) std::abort();
  ::close(ro);
  ::close(hard);
}

/// The write_file rules held for the fixtures.
void check_path_fixtures(const std::string& args) {
  struct stat st {};
  if (::lstat("link.npy", &st) != 0 || !S_ISLNK(st.st_mode)) fuzz::die("link.npy is no longer a symbolic link after:", args);
  if (::stat("ro.npy", &st) != 0 || (st.st_mode & 07777) != 0444) fuzz::die("ro.npy lost its mode 0444 after:", args);
  char buf[8] = {};
  const int fd = ::open("hard2.npy", O_RDONLY | O_CLOEXEC);
  const ssize_t n = fd >= 0 ? ::read(fd, buf, sizeof buf) : -1;
  if (fd >= 0) ::close(fd);
  if (n != 4 || std::string(buf, 4) != "hard" || ::stat("hard.npy", &st) != 0 || st.st_nlink != 2) {
    fuzz::die("the hard-linked hard.npy was replaced or written after:", args);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  char templ[] = "/tmp/multigather-cli-fuzz-XXXXXX";
  g_home_fd = ::open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (!::mkdtemp(templ) || ::chdir(templ) != 0 || g_home_fd < 0) std::abort();
  g_dir = templ;
  g_dir_fd = ::open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  const float x[] = {0, 1, 2, 3, 4, 5};
  const std::int64_t i[] = {1, 0, 1, -1, 0, 2};
  if (!npy::write_npy("x.npy", TensorView(x, DType::kFloat32, {2, 3})).ok() ||
      !npy::write_npy("i.npy", TensorView(i, DType::kInt64, {2, 3})).ok()) {
    std::abort();
  }
  std::atexit(remove_dir);
  if (g_dir_fd < 0 || ::fchdir(g_home_fd) != 0) std::abort();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 4096) return 0;
  std::vector<std::string> args{"multigather"};
  std::string cur;
  for (std::size_t k = 0; k < size; ++k) {
    const char ch = static_cast<char>(data[k]);
    if (ch == '\n') {
      args.push_back(cur);
      cur.clear();
    } else {
      cur += ch == '/' ? '_' : ch;
    }
  }
  if (size > 0) args.push_back(cur);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  std::ostringstream out, err;
  if (::fchdir(g_dir_fd) != 0) std::abort();  // relative paths: inside the private folder
  make_path_fixtures();
  const int code = cli::main(static_cast<int>(args.size()), argv.data(), out, err);
  if (code < 0 || code > 4) fuzz::die("exit code outside 0-4:", std::to_string(code));
  const std::string e = err.str();
  if (code != 0) {
    if (e.rfind("multigather: error: ", 0) != 0 || e.find('\n') != e.size() - 1) {
      fuzz::die("a failure without exactly one error line:", e);
    }
  }
  std::string joined;
  for (std::size_t a = 1; a < args.size(); ++a) joined += (a > 1 ? " " : "") + args[a];
  check_path_fixtures(joined);
  clean_dir();
  if (::fchdir(g_home_fd) != 0) std::abort();
  return 0;
}
