# src/lib/prediction/ (cross-architecture prediction) fits models with GSL and
# finds loops in binaries with Capstone - docs/dependencies.md says why.
pkg_check_modules(LP_GSL REQUIRED IMPORTED_TARGET gsl)
pkg_check_modules(LP_PREDICTION_CAPSTONE REQUIRED IMPORTED_TARGET capstone)
target_link_libraries(locprof_lib PUBLIC PkgConfig::LP_GSL PkgConfig::LP_PREDICTION_CAPSTONE)
