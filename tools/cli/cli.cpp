// The multigather tool: command-line parsing (CLI11), dispatch to an op, .npy in and out.
#include "cli.hpp"

#include <CLI/CLI.hpp>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <iostream>

#include <filesystem>
#include <fstream>
#include <map>
#include <new>
#include <string>
#include <vector>

#include "../npy.hpp"
#include "multigather/attributes.hpp"
#include "multigather/interrupt.hpp"
#include "op.hpp"
#include "print.hpp"

#ifndef MULTIGATHER_VERSION
#define MULTIGATHER_VERSION "unknown"
#endif

namespace multigather::cli {
namespace {

/// "--index_mode=clamp" -> "--index-mode=clamp": options may be spelled with underscores.
/// Only the name part of "--" arguments changes; values and anything after "--" stay as typed.
std::vector<std::string> normalize(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  for (std::size_t i = 1; i < args.size(); ++i) {
    std::string& a = args[i];
    if (a == "--") break;
    if (a.rfind("--", 0) != 0) continue;
    const std::size_t end = std::min(a.find('='), a.size());
    std::replace(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(end), '_', '-');
  }
  return args;
}

std::string one_line(std::string s) {
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

int fail(std::ostream& err, int code, const std::string& message) {
  err << "multigather: error: " << one_line(message) << "\n";
  return code;
}

int exit_code_of(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk: return kExitOk;
    case StatusCode::kOutOfRange: return kExitOutOfRange;
    case StatusCode::kInternal: return kExitInternal;
    case StatusCode::kCancelled: return kExitInterrupted;
    default: return kExitUsage;
  }
}

volatile std::sig_atomic_t sigint_received = 0;

extern "C" void on_sigint(int) { sigint_received = 1; }

/// While alive: SIGINT sets a flag that the engines' interrupt check reads (InterruptScope),
/// instead of killing the process; the previous disposition is restored after.
class SigintInterrupt {
 public:
  SigintInterrupt() noexcept {
    sigint_received = 0;
    struct sigaction action {};
    action.sa_handler = &on_sigint;
    sigemptyset(&action.sa_mask);
    installed_ = ::sigaction(SIGINT, &action, &previous_) == 0;
  }
  ~SigintInterrupt() {
    if (installed_) ::sigaction(SIGINT, &previous_, nullptr);
  }
  SigintInterrupt(const SigintInterrupt&) = delete;
  SigintInterrupt& operator=(const SigintInterrupt&) = delete;

 private:
  static bool check(void*) noexcept { return sigint_received != 0; }
  struct sigaction previous_ {};
  bool installed_ = false;
  InterruptScope scope_{&SigintInterrupt::check, nullptr};
};

struct RunArgs {
  std::string input, indices, updates, output, input_dtype;
};

struct ExplainArgs {
  std::string input_shape, indices_shape, updates_shape;
  std::string svg, input, indices, updates, input_dtype, cells;
  std::int64_t max_cells = 400;
};

void add_run_flags(CLI::App& command, RunArgs& a, const CliOp& op) {
  if (op.is_scatter()) {
    command.add_option("--updates", a.updates,
                       "Updates tensor (.npy, the input's dtype; its shape broadcasts to the "
                       "scatter shape)")
        ->required()
        ->type_name("FILE");
  }
  command.add_option("--input", a.input, "Input tensor (.npy, any supported dtype)")
      ->required()
      ->type_name("FILE");
  command.add_option("--indices", a.indices, "Indices tensor (.npy, an integer dtype)")
      ->required()
      ->type_name("FILE");
  command.add_option("--output", a.output,
                     "Write the result here (.npy; a regular file is replaced atomically, keeping its mode and owner; "
                     "/dev/null or a FIFO is written through; see docs/cli.md); "
                     "without it the result is printed as text")
      ->type_name("FILE");
  command.add_option("--input-dtype", a.input_dtype,
                     "Element dtype of an --input whose descr is raw void ('|V2', '<V1'), e.g. "
                     "bfloat16 or float8_e4m3fn")
      ->type_name("DTYPE");
}

void add_explain_flags(CLI::App& command, ExplainArgs& a, const CliOp& op) {
  if (op.is_scatter()) {
    command.add_option("--updates-shape", a.updates_shape,
                       "Updates shape, e.g. 2,3; required unless --svg with --updates is given")
        ->expected(0, 1)
        ->type_name("LIST");
    command.add_option("--updates", a.updates,
                       "With --svg: the updates tensor (.npy, the input's dtype) whose values the "
                       "picture shows (without it, update cells show their positions: u0, u1, ...)")
        ->type_name("FILE");
  }
  command.add_option("--input-shape", a.input_shape,
                         "Input shape, e.g. 4,2,1,2 (rank 0: --input-shape=); required unless --input is given")
          ->expected(0, 1)
          ->type_name("LIST");
  command.add_option("--indices-shape", a.indices_shape,
                         "Indices shape, e.g. 1,3,2,2; required unless --indices is given")
          ->expected(0, 1)
          ->type_name("LIST");
  command.add_option("--svg", a.svg,
                     "Draw the op as an SVG picture into FILE ('-': standard output): input, "
                     "indices and output cells, which input cell each output cell takes (a scatter: "
                     "which output cell each update reaches and how duplicates combine), the "
                     "indices cells that gave its coordinates (small shapes only, see --max-cells)")
      ->type_name("FILE");
  command.add_option("--input", a.input,
                     "With --svg: the input tensor (.npy) whose values the picture shows (without "
                     "it, input cells show their positions)")
      ->type_name("FILE");
  command.add_option("--indices", a.indices,
                     "With --svg: the indices tensor (.npy) the picture uses (without it, indices "
                     "are filled n-1, n-2, ..., 0 per coordinate)")
      ->type_name("FILE");
  command.add_option("--input-dtype", a.input_dtype,
                     "Element dtype of an --input whose descr is raw void ('|V2', '<V1')")
      ->type_name("DTYPE");
  command.add_option("--cells", a.cells,
                     "With --svg: the output cells (C-order positions in the output; a scatter: "
                     "positions in G, one per update) whose lookups get arrows, e.g. 0,5 (default: "
                     "all for at most 6 cells, else 4 spread out)")
      ->expected(0, 1)
      ->type_name("LIST");
  command.add_option(
      "--max-cells", a.max_cells,
      "With --svg: the most cells drawn for input, indices or output (default 400)")
      ->type_name("N");
}

int do_run(const CliOp& op, const RunArgs& a, std::ostream& out, std::ostream& err) {
  npy::ReadOptions read_options;
  if (!a.input_dtype.empty()) {
    read_options.void_dtype = parse_dtype(a.input_dtype);
    if (!read_options.void_dtype) {
      return fail(err, kExitUsage, "--input-dtype: '" + a.input_dtype + "' is not a dtype name");
    }
  }
  npy::NpyArray input, indices;
  Status s = npy::read_npy(a.input, &input, read_options);
  if (!s.ok()) return fail(err, kExitIo, "--input " + s.message());
  s = npy::read_npy(a.indices, &indices);
  if (!s.ok()) return fail(err, kExitIo, "--indices " + s.message());
  npy::NpyArray updates;
  if (op.is_scatter()) {
    s = npy::read_npy(a.updates, &updates, read_options);
    if (!s.ok()) return fail(err, kExitIo, "--updates " + s.message());
  }

  Tensor output;
  {
    // Ctrl-C stops the engine at its next poll (exit code 130, nothing written); outside the
    // computation SIGINT keeps its default action (the output's temporary file is then removed
    // by the next write of the same path).
    const SigintInterrupt interrupt;
    s = op.run(input.view, indices.view, op.is_scatter() ? &updates.view : nullptr, &output);
  }
  if (!s.ok()) return fail(err, exit_code_of(s), s.message());

  if (!a.output.empty()) {
    s = npy::write_npy(a.output, output.view());
    if (!s.ok()) return fail(err, kExitIo, "--output " + s.message());
    return kExitOk;
  }
  out << dtype_name(output.dtype()) << " " << to_string(output.shape()) << "\n"
      << format_tensor(output.view()) << "\n";
  return kExitOk;
}

/// A shape flag's text through the library's one list parser (parse_attribute): "4,2,1,2",
/// "[4, 2]", "" (rank 0). Errors name the flag: "--input-shape: '4,x' is not a list of ...".
Status parse_shape(const std::string& text, const std::string& flag, std::vector<std::int64_t>* out) {
  const AttrSpec spec{flag, AttrType::kIntList, "", {}, ""};
  AttrValue value;
  const Status s = parse_attribute(spec, text, &value);
  if (!s.ok()) {
    const std::string prefix = "attribute " + flag + ": ";
    const std::string& m = s.message();
    return Status(s.code(), flag + ": " + (m.rfind(prefix, 0) == 0 ? m.substr(prefix.size()) : m));
  }
  *out = std::move(value.list);
  return Status::Ok();
}

int do_explain(const CliOp& op, const CLI::App& command, const ExplainArgs& a, std::ostream& out,
               std::ostream& err) {
  const bool have_input = !a.input.empty(), have_indices = !a.indices.empty(), have_updates = !a.updates.empty();
  const bool have_input_shape = command.get_option("--input-shape")->count() > 0;
  const bool have_indices_shape = command.get_option("--indices-shape")->count() > 0;
  if (a.svg.empty()) {
    for (const char* flag : {"--input", "--indices", "--updates", "--cells"}) {
      const std::string f = flag;
      const bool given = f == "--input" ? have_input : f == "--indices" ? have_indices : f == "--updates" ? have_updates : !a.cells.empty();
      if (given) return fail(err, kExitUsage, std::string(flag) + " is an option of explain --svg FILE (the picture); the text explain takes shapes only");
    }
    if (command.get_option("--max-cells")->count() > 0) return fail(err, kExitUsage, "--max-cells is an option of explain --svg FILE");
  }
  if (have_input && have_input_shape) return fail(err, kExitUsage, "--input and --input-shape: give one of them (the shape is read from the file)");
  if (have_indices && have_indices_shape) return fail(err, kExitUsage, "--indices and --indices-shape: give one of them (the shape is read from the file)");
  if (!have_input && !have_input_shape) return fail(err, kExitUsage, "--input-shape is required (or, with --svg, --input FILE)");
  if (!have_indices && !have_indices_shape) return fail(err, kExitUsage, "--indices-shape is required (or, with --svg, --indices FILE)");
  if (!a.input_dtype.empty() && !have_input) return fail(err, kExitUsage, "--input-dtype describes an --input FILE; there is none");
  const bool have_updates_shape = op.is_scatter() && command.get_option("--updates-shape")->count() > 0;
  if (op.is_scatter()) {
    if (have_updates && have_updates_shape) return fail(err, kExitUsage, "--updates and --updates-shape: give one of them (the shape is read from the file)");
    if (!have_updates && !have_updates_shape) return fail(err, kExitUsage, "--updates-shape is required (or, with --svg, --updates FILE)");
  }

  std::vector<std::int64_t> input_shape, indices_shape;
  Status s;
  if (have_input_shape) s = parse_shape(a.input_shape, "--input-shape", &input_shape);
  if (s.ok() && have_indices_shape) s = parse_shape(a.indices_shape, "--indices-shape", &indices_shape);
  std::vector<std::int64_t> updates_shape;
  if (s.ok() && have_updates_shape) s = parse_shape(a.updates_shape, "--updates-shape", &updates_shape);
  if (!s.ok()) return fail(err, exit_code_of(s), s.message());
  if (a.svg.empty()) {
    const Dims updates_dims(updates_shape);
    s = op.explain(Dims(input_shape), Dims(indices_shape), op.is_scatter() ? &updates_dims : nullptr, out);
    if (!s.ok()) return fail(err, exit_code_of(s), s.message());
    return kExitOk;
  }

  SvgOptions options;
  if (a.max_cells < 1) return fail(err, kExitUsage, "--max-cells: " + std::to_string(a.max_cells) + " is not a positive number of cells");
  options.max_cells = a.max_cells;
  if (!a.cells.empty()) {
    s = parse_shape(a.cells, "--cells", &options.cells);
    if (!s.ok()) return fail(err, exit_code_of(s), s.message());
  }
  npy::ReadOptions read_options;
  if (!a.input_dtype.empty()) {
    read_options.void_dtype = parse_dtype(a.input_dtype);
    if (!read_options.void_dtype) return fail(err, kExitUsage, "--input-dtype: '" + a.input_dtype + "' is not a dtype name");
  }
  npy::NpyArray input_file, indices_file, updates_file;
  TensorView input(nullptr, DType::kFloat32, Dims(input_shape));
  TensorView indices(nullptr, DType::kInt64, Dims(indices_shape));  // explain_svg: --indices-dtype
  if (have_input) {
    s = npy::read_npy(a.input, &input_file, read_options);
    if (!s.ok()) return fail(err, kExitIo, "--input " + s.message());
    input = input_file.view;
  }
  if (have_indices) {
    s = npy::read_npy(a.indices, &indices_file);
    if (!s.ok()) return fail(err, kExitIo, "--indices " + s.message());
    indices = indices_file.view;
  }
  TensorView updates(nullptr, input.dtype, Dims(updates_shape));
  if (have_updates) {
    s = npy::read_npy(a.updates, &updates_file, read_options);
    if (!s.ok()) return fail(err, kExitIo, "--updates " + s.message());
    updates = updates_file.view;
  }
  std::string svg;
  s = op.explain_svg(input, indices, op.is_scatter() ? &updates : nullptr, options, &svg);
  if (!s.ok()) {
    // Size limits are the picture's own rule: name the flag.
    const std::string m = s.message();
    return fail(err, exit_code_of(s), (m.rfind("the ", 0) == 0 ? "--svg: " : m.rfind("cells:", 0) == 0 ? "--" : "") + m);
  }
  if (a.svg == "-") {
    out << svg;
    return kExitOk;
  }
  const std::string_view pieces[] = {svg};
  s = npy::write_file(a.svg, pieces);  // the --output rules: atomic, links followed, mode kept
  if (!s.ok()) return fail(err, kExitIo, "--svg " + s.message());
  return kExitOk;
}

extern "C" char** environ;

/// Whole ONNX models (`lower MODEL.onnx -o OUT.onnx`, `explain MODEL.onnx`) are rewritten with
/// onnx's own Python helpers: the multigather Python package's multigather._onnx_cli runs them,
/// with the interpreter beside this executable (a venv's bin/) or else python3 from PATH
/// (MULTIGATHER_PYTHON overrides). Its output goes straight to this process's streams.
int run_onnx_command(const std::vector<std::string>& args, std::ostream& err) {
  std::string python = "python3";
  if (const char* p = std::getenv("MULTIGATHER_PYTHON"); p != nullptr && *p != '\0') {
    python = p;
  } else {
    std::error_code ec;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec && std::filesystem::exists(self.parent_path() / "python3", ec)) {
      python = (self.parent_path() / "python3").string();
    }
  }
  static const char kStub[] =
      "import sys\n"
      "try:\n"
      "    from multigather._onnx_cli import main\n"
      "    import onnx\n"
      "except ImportError as e:\n"
      "    sys.stderr.write('multigather ' + sys.argv[1] + ': error: whole models need the multigather '\n"
      "                     'Python package and onnx in ' + sys.executable + ' (python3 -m pip install . onnx; '\n"
      "                     'MULTIGATHER_PYTHON names another interpreter): ' + str(e) + '\\n')\n"
      "    sys.exit(2)\n"
      "sys.exit(main(sys.argv[1:]))\n";
  std::vector<std::string> argv_text = {python, "-c", kStub};
  argv_text.insert(argv_text.end(), args.begin() + 1, args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::cout.flush();
  pid_t pid = 0;
  if (posix_spawnp(&pid, python.c_str(), nullptr, nullptr, argv.data(), environ) != 0) {
    return fail(err, kExitUsage, args[1] + ": cannot start " + python +
                                     " (whole ONNX models need Python with the multigather package; "
                                     "MULTIGATHER_PYTHON names the interpreter)");
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return fail(err, kExitInternal, "waitpid failed");
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : kExitInternal;
}

bool is_onnx_model_command(const std::vector<std::string>& args) {
  if (args.size() >= 2 && args[1] == "lower") return true;
  if (args.size() < 3 || args[1] != "explain") return false;
  const std::string& a = args[2];
  return a.size() > 5 && a.compare(a.size() - 5, 5, ".onnx") == 0;
}

int run_tool(std::vector<std::string> args, std::ostream& out, std::ostream& err) {
  std::vector<std::unique_ptr<CliOp>> run_ops = make_cli_ops();
  std::vector<std::unique_ptr<CliOp>> explain_ops = make_cli_ops();
  if (is_onnx_model_command(args)) return run_onnx_command(args, err);

  if (args.size() >= 2 && args[1].rfind("-", 0) != 0 && args[1] != "run" &&
      args[1] != "explain" && args[1] != "ops") {
    return fail(err, kExitUsage, "unknown command '" + args[1] +
                                     "' (expected run, explain, lower or ops; see multigather --help)");
  }
  // An op name that is not registered gets a message that says where the list is.
  if (args.size() >= 2 && (args[1] == "run" || args[1] == "explain")) {
    if (args.size() == 2) {
      return fail(err, kExitUsage, args[1] + ": missing the op name, e.g. multigather " + args[1] +
                                       " gather_multiaxis ... (multigather ops lists the ops)");
    }
    const std::string& name = args[2];
    bool known = name.rfind("-", 0) == 0;
    for (const auto& op : run_ops) known = known || op->name() == name;
    if (!known) {
      return fail(err, kExitUsage,
                  "unknown op '" + name + "' (multigather ops lists the available ops)");
    }
  }

  CLI::App app("multigather: one gather operator, gather_multiaxis, for every ML framework's "
               "gather. Tensors are .npy files.",
               "multigather");
  app.set_version_flag("--version", "multigather " MULTIGATHER_VERSION);
  app.require_subcommand(1);
  app.footer("Whole ONNX models (Python with the multigather package and onnx): multigather lower "
             "MODEL.onnx -o OUT.onnx [--inline] rewrites every gather and scatter node onto the one "
             "operator; multigather explain MODEL.onnx [--svg DIR] prints what each became "
             "(docs/onnx.md).\n\nExit codes: 0 ok, 1 internal error, 2 usage or validation error, 3 I/O or .npy "
             "format error, 4 index out of range (index_mode=error).");

  RunArgs run_args;
  ExplainArgs explain_args;
  std::map<const CLI::App*, const CliOp*> op_of;
  // One subcommand per op under `run` and under `explain`: the common flags, then the op's.
  const auto add_op_commands = [&](CLI::App* parent, std::vector<std::unique_ptr<CliOp>>& list,
                                   const auto& add_common_flags) {
    parent->require_subcommand(1);
    for (const auto& op : list) {
      CLI::App* sub = parent->add_subcommand(std::string(op->name()), std::string(op->summary()));
      add_common_flags(*sub, *op);
      op->add_flags(*sub);
      op_of[sub] = op.get();
    }
  };
  CLI::App* run = app.add_subcommand("run", "Run an op on .npy files: run OP --input X.npy "
                                            "--indices I.npy [--updates U.npy (scatter ops)] "
                                            "[--output OUT.npy] [op flags]");
  add_op_commands(run, run_ops, [&](CLI::App& sub, const CliOp& op) { add_run_flags(sub, run_args, op); });
  CLI::App* explain = app.add_subcommand(
      "explain", "Print an op's output shape, broadcasting and formula for given shapes (no data)");
  add_op_commands(explain, explain_ops,
                  [&](CLI::App& sub, const CliOp& op) { add_explain_flags(sub, explain_args, op); });
  CLI::App* ops = app.add_subcommand("ops", "List the available ops (from the op registry)");
  std::string ops_format = "text";
  ops->add_option("--format", ops_format,
                  "text (default): names and formulas; md: docs/cli.md's op table; json: the "
                  "registry rows; reference: docs/quick_reference.md")
      ->check(CLI::IsMember({"text", "md", "json", "reference"}))
      ->type_name("FORMAT");

  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {  // --help, --version
      std::ostringstream ignored;
      app.exit(e, out, ignored);
      return kExitOk;
    }
    return fail(err, kExitUsage, e.what());
  }

  if (ops->parsed()) {
    out << (ops_format == "md"          ? ops_markdown_table()
            : ops_format == "json"      ? ops_json()
            : ops_format == "reference" ? ops_quick_reference()
                                        : ops_text());
    return kExitOk;
  }
  for (CLI::App* parent : {run, explain}) {
    if (!parent->parsed()) continue;
    for (const CLI::App* sub : parent->get_subcommands()) {
      const CliOp& op = *op_of.at(sub);
      return parent == run ? do_run(op, run_args, out, err)
                           : do_explain(op, *sub, explain_args, out, err);
    }
  }
  return fail(err, kExitInternal, "no command was selected");
}

}  // namespace

int main(int argc, char** argv, std::ostream& out, std::ostream& err) {
  try {
    return run_tool(normalize(argc, argv), out, err);
  } catch (const std::bad_alloc&) {
    return fail(err, kExitInternal, "out of memory");
  } catch (const std::exception& e) {
    return fail(err, kExitInternal, std::string("internal error: ") + e.what());
  }
}

}  // namespace multigather::cli
