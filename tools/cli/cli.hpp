// tools/cli/cli.hpp: the `multigather` command-line tool as a library function, so that tests
// run it in-process; tools/main.cpp only forwards to it.
//
//   multigather run OP --input X.npy --indices I.npy [--output OUT.npy] [op flags...]
//   multigather explain OP --input-shape=4,2,1,2 --indices-shape=1,3,2,2 [op flags...]
//   multigather ops [--format=text|md|json|reference]
//
// Every option accepts `--name=value` and `--name value`, spelled with dashes or underscores.
// On failure one line starting "multigather: error: " goes to `err` and the exit code says
// which kind of failure it was (ExitCode). docs/cli.md documents the commands.
#pragma once

#include <ostream>

namespace multigather::cli {

/// Exit codes of the tool (documented in docs/cli.md; tests assert them).
enum ExitCode : int {
  kExitOk = 0,
  kExitInternal = 1,    // a bug in multigather, or out of memory
  kExitUsage = 2,       // bad command line, unknown op, or arguments the operator rejects
                        // (ranks, shapes, axes, dtypes, attribute values)
  kExitIo = 3,          // a file cannot be read or written, or is not a valid/supported .npy
  kExitOutOfRange = 4,  // an index value is out of range under index_mode=error
  kExitInterrupted = 130,  // Ctrl-C (SIGINT) stopped `run` (128 + SIGINT, the shell's convention)
};

/// Runs the tool on argv[0..argc) (argv[0] is the program name). Normal output goes to `out`,
/// the error line to `err`. Never throws; returns an ExitCode.
int main(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace multigather::cli
