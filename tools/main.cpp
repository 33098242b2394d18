// The multigather executable: the whole tool is multigather::cli::main (tools/cli/cli.cpp).
#include <iostream>

#include "cli/cli.hpp"

int main(int argc, char** argv) { return multigather::cli::main(argc, argv, std::cout, std::cerr); }
