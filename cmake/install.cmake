# What `cmake --install` puts under the prefix (README.md, "Install"):
#   bin/locprof
#   lib/locprof/        the runtime, the LLVM pass, valgrind/ the valgrind
#                       tool (installed by src/rt, src/pass, src/vg)
#   lib/liblocprof.a, lib/pkgconfig/locprof.pc, include/locprof/*.h
#   share/man/man1/     locprof.1 and locprof-CMD.1, from the help texts
#   share/bash-completion/completions/locprof
# Included by the top-level CMakeLists.txt after every subdirectory, so
# that the library's dependencies are all known.

# liblocprof is installed static: its API has no stable ABI yet (no
# soname to keep), and a static archive needs no run-time search path in
# the programs that use it.
install(TARGETS locprof_lib ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/locprof DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")

# locprof.pc: a static library needs its dependencies on every link, so
# their flags go in Libs (from the pkg-config modules each cmake/deps-*.cmake
# file found), not in Libs.private.
get_target_property(lib_deps locprof_lib INTERFACE_LINK_LIBRARIES)
set(pc_libs "")
foreach(dep ${lib_deps})
  if(dep MATCHES "^PkgConfig::(.+)$")
    list(APPEND pc_libs ${${CMAKE_MATCH_1}_LDFLAGS})
  elseif(dep MATCHES "^/.*/lib([^/]+)\\.(so|a)$")
    list(APPEND pc_libs -l${CMAKE_MATCH_1})
  elseif(dep MATCHES "^-")
    list(APPEND pc_libs ${dep})
  endif()
endforeach()
if(LOCPROF_SANITIZE) # the archive's objects call the sanitizers' runtimes
  list(PREPEND pc_libs -fsanitize=address,undefined)
endif()
list(REMOVE_DUPLICATES pc_libs)
list(JOIN pc_libs " " pc_libs)
# The prefix is found from the .pc file's own place: `cmake --install
# --prefix DIR` and moved trees give the right paths.
file(RELATIVE_PATH pc_to_prefix ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" pc_to_prefix "${pc_to_prefix}")
file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/locprof.pc CONTENT
"prefix=\${pcfiledir}/${pc_to_prefix}
libdir=\${prefix}/${CMAKE_INSTALL_LIBDIR}
includedir=\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}

Name: locprof
Description: data-locality profiling library: traces, stack and reuse distances, cache simulation, StatCache/StatStack models
Version: ${PROJECT_VERSION}
Cflags: -I\${includedir}
Libs: -L\${libdir} -llocprof ${pc_libs}
")
install(FILES ${PROJECT_BINARY_DIR}/locprof.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# Manual pages and bash completion, generated from `locprof help CMD`.
set(help_docs ${PROJECT_BINARY_DIR}/help-docs)
add_custom_command(OUTPUT ${help_docs}/man1/locprof.1 ${help_docs}/completion/locprof
  COMMAND bash ${PROJECT_SOURCE_DIR}/cmake/help-docs.sh $<TARGET_FILE:locprof> ${help_docs}
  DEPENDS locprof ${PROJECT_SOURCE_DIR}/cmake/help-docs.sh VERBATIM)
add_custom_target(locprof_help_docs ALL DEPENDS ${help_docs}/man1/locprof.1 ${help_docs}/completion/locprof)
install(DIRECTORY ${help_docs}/man1 DESTINATION ${CMAKE_INSTALL_MANDIR})
install(FILES ${help_docs}/completion/locprof DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
