# src/lib/symbol/ symbolises pcs and data addresses with elfutils
# (libdwfl, part of libdw) - docs/dependencies.md says why.
pkg_check_modules(LIBDW REQUIRED IMPORTED_TARGET libdw libelf)
target_link_libraries(locprof_lib PUBLIC PkgConfig::LIBDW)
