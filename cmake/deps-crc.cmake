# The .lpp chunk CRC-32 (src/lib/sample/profile-chunk.c) is zlib's crc32_z:
# docs/dependencies.md says why.
pkg_check_modules(ZLIB REQUIRED IMPORTED_TARGET zlib)
target_link_libraries(locprof_lib PUBLIC PkgConfig::ZLIB)
