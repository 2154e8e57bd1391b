# src/lib/symbol/ symbolises pcs and data addresses with elfutils
# (libdwfl, part of libdw) - docs/dependencies.md says why.
pkg_check_modules(LIBDW REQUIRED IMPORTED_TARGET libdw libelf)
target_link_libraries(locprof_lib PUBLIC PkgConfig::LIBDW)
# C++ names are demangled with libiberty (Debian's libiberty-dev: a static
# library, no pkg-config file).
find_library(LIBIBERTY_LIB NAMES libiberty.a iberty REQUIRED)
find_path(LIBIBERTY_INCLUDE libiberty/demangle.h REQUIRED)
target_include_directories(locprof_lib PRIVATE ${LIBIBERTY_INCLUDE})
target_link_libraries(locprof_lib PUBLIC ${LIBIBERTY_LIB})
