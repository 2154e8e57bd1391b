# src/lib/prediction/ (cross-architecture prediction) fits models with GSL and
# finds loops in binaries with Zydis (the x86 decoder of the pmu backend too;
# src/lib/symbol/ finds the functions enclosing OpenMP regions with it)
# - docs/dependencies.md says why.
pkg_check_modules(LP_GSL REQUIRED IMPORTED_TARGET gsl)
find_library(ZYDIS_LIB Zydis REQUIRED)
find_path(ZYDIS_INCLUDE Zydis/Zydis.h REQUIRED)
target_include_directories(locprof_lib SYSTEM PRIVATE ${ZYDIS_INCLUDE})
target_link_libraries(locprof_lib PUBLIC PkgConfig::LP_GSL ${ZYDIS_LIB})
