# CTest `c_api_pkg_config` (tests/CMakeLists.txt): a C program built against the INSTALLED
# multigather (the build-tree prefix MULTIGATHER_C_API_PREFIX) the way a user builds one, with
# nothing but pkg-config:
#
#     PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig cc -std=c99 -pedantic -Werror app.c \
#         $(pkg-config --cflags --libs multigather)
#     LD_LIBRARY_PATH=$PREFIX/lib ./app
#
# Checks that multigather.pc is relocatable (no absolute path of the prefix in it) and names this
# prefix, that the installed libmultigather.so.<VERSION> has the SONAME
# libmultigather.so.<SOVERSION> and exports the C and C++ APIs, that the program links the
# SHARED library (NEEDED libmultigather.so.<SOVERSION>, no RPATH/RUNPATH from the .pc, ldd finds
# the prefix's copy) and computes the right result; and that `pkg-config --static --libs` (Libs.private) is enough to
# link the static libmultigather.a from C. pkg-config missing is a failure, not a skip
# (scripts/setup.sh installs it).
#
#   cmake -DPREFIX=... -DLIBDIR=lib -DCC=cc -DSOURCE=pkg_config_consumer.c -DWORK_DIR=...
#         -DVERSION=0.1.0 -DSOVERSION=0.1 [-DSANITIZE=address,undefined] [-DSTATIC=OFF]
#         -P pkg_config_test.cmake
# (STATIC=OFF: a BUILD_SHARED_LIBS build, which installs no libmultigather.a.)
cmake_minimum_required(VERSION 3.25)
foreach(_var PREFIX LIBDIR CC SOURCE WORK_DIR VERSION SOVERSION)
  if(NOT DEFINED ${_var} OR "${${_var}}" STREQUAL "")
    message(FATAL_ERROR "pkg_config_test.cmake: -D${_var}=... is required")
  endif()
endforeach()

find_program(PKG_CONFIG NAMES pkg-config pkgconf)
if(NOT PKG_CONFIG)
  message(FATAL_ERROR "pkg-config not found: install it (Debian: apt-get install pkg-config; "
                      "scripts/setup.sh does)")
endif()
find_program(READELF readelf REQUIRED)
find_program(LDD ldd REQUIRED)

set(libdir "${PREFIX}/${LIBDIR}")
set(so "libmultigather.so")
set(pc "${libdir}/pkgconfig/multigather.pc")
# A sanitized build's library needs the sanitizer runtimes in the executable.
set(extra_flags "")
if(SANITIZE)
  set(extra_flags "-fsanitize=${SANITIZE}")
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

function(fail)
  string(JOIN "" text ${ARGN})
  message(FATAL_ERROR "c_api_pkg_config: ${text}")
endfunction()

# run(<output variable> <command>...): the command's stdout; its failure fails the test.
function(run out_var)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    list(JOIN ARGN " " cmd)
    fail("`${cmd}` failed (${rc}):\n${out}${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

# ---- The installed files --------------------------------------------------------------------
if(NOT DEFINED STATIC)
  set(STATIC ON)
endif()
set(_files "${pc}" "${libdir}/${so}" "${libdir}/${so}.${SOVERSION}" "${libdir}/${so}.${VERSION}")
if(STATIC)
  list(APPEND _files "${libdir}/libmultigather.a")
endif()
foreach(_file IN LISTS _files)
  if(NOT EXISTS "${_file}")
    fail("${_file} is not installed")
  endif()
endforeach()
if(IS_SYMLINK "${libdir}/${so}.${VERSION}" OR NOT IS_SYMLINK "${libdir}/${so}"
   OR NOT IS_SYMLINK "${libdir}/${so}.${SOVERSION}")
  fail("expected ${so} -> ${so}.${SOVERSION} -> ${so}.${VERSION} (the file)")
endif()
file(REAL_PATH "${libdir}/${so}" _real)
file(REAL_PATH "${libdir}/${so}.${VERSION}" _file)
if(NOT _real STREQUAL _file)
  fail("${libdir}/${so} resolves to ${_real}, not ${so}.${VERSION}")
endif()

run(dynamic "${READELF}" -d -W "${libdir}/${so}.${VERSION}")
if(NOT dynamic MATCHES "\\(SONAME\\)[^\n]*\\[([^\n]*)\\]")
  fail("${so}.${VERSION} has no SONAME:\n${dynamic}")
endif()
if(NOT CMAKE_MATCH_1 STREQUAL "${so}.${SOVERSION}")
  fail("the SONAME of ${so}.${VERSION} is ${CMAKE_MATCH_1}, expected ${so}.${SOVERSION}")
endif()
message(STATUS "SONAME ${CMAKE_MATCH_1}")
# The C API and the C++ API are exported (defined, default visibility).
run(symbols "${READELF}" --dyn-syms -W "${libdir}/${so}.${VERSION}")
foreach(_sym mg_gather_multiaxis mg_run_op mg_last_error
             "_ZN11multigather16gather_multiaxis[A-Za-z0-9_]*")
  if(NOT symbols MATCHES "FUNC +(GLOBAL|WEAK) +DEFAULT +[0-9]+ ${_sym}\n")
    fail("${so}.${VERSION} does not export ${_sym}")
  endif()
endforeach()

file(READ "${pc}" pc_text)
message(STATUS "${pc}:\n${pc_text}")
string(FIND "${pc_text}" "${PREFIX}" _at)
if(NOT _at EQUAL -1)
  fail("${pc} names the install prefix ${PREFIX}: not relocatable")
endif()

# ---- pkg-config -----------------------------------------------------------------------------
set(ENV{PKG_CONFIG_PATH} "${libdir}/pkgconfig")
run(version "${PKG_CONFIG}" --modversion multigather)
string(STRIP "${version}" version)
if(NOT version STREQUAL "${VERSION}")
  fail("pkg-config --modversion multigather: ${version}, expected ${VERSION}")
endif()
run(flags "${PKG_CONFIG}" --cflags --libs multigather)
string(STRIP "${flags}" flags)
message(STATUS "pkg-config --cflags --libs multigather: ${flags}")
separate_arguments(flags UNIX_COMMAND "${flags}")
# The -I and -L folders are this prefix's.
set(_seen_L FALSE)
foreach(_flag IN LISTS flags)
  if(_flag MATCHES "^-([IL])(.+)$")
    set(_kind ${CMAKE_MATCH_1})
    file(REAL_PATH "${CMAKE_MATCH_2}" _dir)
    if(_kind STREQUAL "L")
      file(REAL_PATH "${libdir}" _want)
      set(_seen_L TRUE)
    else()
      file(REAL_PATH "${PREFIX}/include" _want)
    endif()
    if(NOT _dir STREQUAL _want)
      fail("pkg-config gives ${_flag} (${_dir}), expected ${_want}")
    endif()
  endif()
endforeach()
if(NOT _seen_L OR NOT "-lmultigather" IN_LIST flags)
  fail("pkg-config --libs multigather lacks -L<libdir> -lmultigather")
endif()

# ---- The static library through Libs.private (first: nothing on LD_LIBRARY_PATH yet) -------
if(STATIC)
  run(static_flags "${PKG_CONFIG}" --cflags --static --libs multigather)
  string(STRIP "${static_flags}" static_flags)
  message(STATUS "pkg-config --cflags --static --libs multigather: ${static_flags}")
  separate_arguments(static_flags UNIX_COMMAND "${static_flags}")
  list(TRANSFORM static_flags REPLACE "^-lmultigather$" "${libdir}/libmultigather.a")
  set(static_exe "${WORK_DIR}/consumer_static")
  run(_out "${CC}" -std=c99 -pedantic -Wall -Wextra -Werror "${SOURCE}" ${static_flags}
           ${extra_flags} -o "${static_exe}")
  run(dynamic "${READELF}" -d -W "${static_exe}")
  if(dynamic MATCHES "NEEDED[^\n]*libmultigather")
    fail("consumer_static needs the shared library:\n${dynamic}")
  endif()
  run(output "${static_exe}")
  message(STATUS "consumer_static (libmultigather.a + Libs.private): ${output}")
endif()

# ---- The shared library: what a user builds ---------------------------------------------------
set(exe "${WORK_DIR}/consumer")
run(_out "${CC}" -std=c99 -pedantic -Wall -Wextra -Werror "${SOURCE}" ${flags} ${extra_flags}
         -o "${exe}")
run(dynamic "${READELF}" -d -W "${exe}")
if(NOT dynamic MATCHES "\\(NEEDED\\)[^\n]*\\[${so}\\.${SOVERSION}\\]")
  fail("consumer does not link ${so}.${SOVERSION}:\n${dynamic}")
endif()
if(dynamic MATCHES "\\((RPATH|RUNPATH)\\)")
  fail("consumer has an ${CMAKE_MATCH_1} (the .pc must not add one):\n${dynamic}")
endif()
message(STATUS "consumer: NEEDED ${so}.${SOVERSION}, no RPATH/RUNPATH")
if(DEFINED ENV{LD_LIBRARY_PATH} AND NOT "$ENV{LD_LIBRARY_PATH}" STREQUAL "")
  set(ENV{LD_LIBRARY_PATH} "${libdir}:$ENV{LD_LIBRARY_PATH}")
else()
  set(ENV{LD_LIBRARY_PATH} "${libdir}")
endif()
run(ldd_out "${LDD}" "${exe}")
string(FIND "${ldd_out}" "${so}.${SOVERSION} => ${libdir}/${so}.${SOVERSION}" _at)
if(_at EQUAL -1)
  fail("ldd does not resolve ${so}.${SOVERSION} to ${libdir}:\n${ldd_out}")
endif()
run(output "${exe}")
message(STATUS "consumer (${so}.${SOVERSION}): ${output}")
if(NOT output MATCHES "\\[\\[30 11 12\\] \\[20 1 32\\]\\]")
  fail("unexpected output: ${output}")
endif()
