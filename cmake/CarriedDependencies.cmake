# Build dependencies from a carried folder, for a machine without the development packages
# (the GPU machine's image has no GoogleTest, Google Benchmark, CLI11 or nlohmann-json, no apt
# and no internet). scripts/gpu-deps.sh fills the folder on a machine that has them, with the
# provenance of each copy; the build reads it only when MULTIGATHER_DEPS_DIR names it AND
# find_package finds nothing. Without MULTIGATHER_DEPS_DIR every dependency stays REQUIRED, as
# before (CI sees no difference).
#
#   <deps>/googletest/        sources of GoogleTest (Debian's /usr/src/googletest), built here
#   <deps>/include/nlohmann/  nlohmann-json's headers (header-only)
#   <deps>/include/CLI/       CLI11's headers (header-only)
#   Google Benchmark is not carried: without it only the GPU benchmark is built.
set(MULTIGATHER_DEPS_DIR "" CACHE PATH
    "Folder of carried build dependencies (scripts/gpu-deps.sh), used where find_package fails")

# GTest::gtest_main: the installed package, else the carried sources (built as a subproject).
macro(multigather_find_gtest)
  if(NOT MULTIGATHER_DEPS_DIR)
    find_package(GTest REQUIRED)
  elseif(NOT TARGET GTest::gtest_main)
    find_package(GTest QUIET)
    if(NOT GTest_FOUND)
      if(NOT EXISTS "${MULTIGATHER_DEPS_DIR}/googletest/CMakeLists.txt")
        message(FATAL_ERROR "GoogleTest: not installed and not carried in ${MULTIGATHER_DEPS_DIR} "
                            "(run scripts/gpu-deps.sh)")
      endif()
      message(STATUS "multigather: GoogleTest from the carried sources in ${MULTIGATHER_DEPS_DIR}/googletest")
      set(BUILD_GMOCK OFF CACHE BOOL "" FORCE)
      set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
      set(gtest_force_shared_crt ON CACHE BOOL "" FORCE)
      add_subdirectory("${MULTIGATHER_DEPS_DIR}/googletest" "${PROJECT_BINARY_DIR}/_deps/googletest"
                       EXCLUDE_FROM_ALL SYSTEM)
    endif()
  endif()
endmacro()

# <name>::<name> as an interface target over carried headers <deps>/include/<marker>.
function(_multigather_carried_headers target marker what)
  if(NOT EXISTS "${MULTIGATHER_DEPS_DIR}/include/${marker}")
    message(FATAL_ERROR "${what}: not installed and not carried in ${MULTIGATHER_DEPS_DIR} "
                        "(run scripts/gpu-deps.sh)")
  endif()
  message(STATUS "multigather: ${what} from the carried headers in ${MULTIGATHER_DEPS_DIR}/include")
  add_library(${target} INTERFACE IMPORTED GLOBAL)
  set_target_properties(${target} PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${MULTIGATHER_DEPS_DIR}/include"
    INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${MULTIGATHER_DEPS_DIR}/include")
endfunction()

macro(multigather_find_nlohmann_json)
  if(NOT MULTIGATHER_DEPS_DIR)
    find_package(nlohmann_json 3 REQUIRED)
  elseif(NOT TARGET nlohmann_json::nlohmann_json)
    find_package(nlohmann_json 3 QUIET)
    if(NOT nlohmann_json_FOUND)
      _multigather_carried_headers(nlohmann_json::nlohmann_json nlohmann/json.hpp nlohmann-json)
    endif()
  endif()
endmacro()

macro(multigather_find_cli11)
  if(NOT MULTIGATHER_DEPS_DIR)
    find_package(CLI11 2.1 CONFIG REQUIRED)
  elseif(NOT TARGET CLI11::CLI11)
    find_package(CLI11 2.1 CONFIG QUIET)
    if(NOT CLI11_FOUND)
      _multigather_carried_headers(CLI11::CLI11 CLI/CLI.hpp CLI11)
    endif()
  endif()
endmacro()

# Sets MULTIGATHER_HAVE_BENCHMARK. Without a carried folder Google Benchmark is REQUIRED; with
# one (a GPU machine) its absence leaves only the GPU benchmark, which does not need it.
macro(multigather_find_benchmark)
  if(NOT MULTIGATHER_DEPS_DIR)
    find_package(benchmark REQUIRED)
  else()
    find_package(benchmark QUIET)
  endif()
  if(TARGET benchmark::benchmark)
    set(MULTIGATHER_HAVE_BENCHMARK ON)
  else()
    set(MULTIGATHER_HAVE_BENCHMARK OFF)
    message(STATUS "multigather: no Google Benchmark; building the GPU benchmark only")
  endif()
endmacro()
