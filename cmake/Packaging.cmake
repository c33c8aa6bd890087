# `cmake --install` and the Debian package (`cpack -G DEB`): the binary and its wrapper in bin, the
# report schema and example hostfiles in share/fabricproof, a man page made from --help.
# CUDA and NCCL are not Debian packages and are not dependencies: the binary carries the static CUDA
# runtime (which opens the driver when there is one) and opens libnccl.so.2 at run time.
include(GNUInstallDirs)

install(TARGETS fabricproof RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(PROGRAMS scripts/fabricproof-mpirun DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES schemas/report.schema.json schemas/spec.schema.json DESTINATION ${CMAKE_INSTALL_DATADIR}/fabricproof/schemas)
install(DIRECTORY specs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/fabricproof/specs)
install(DIRECTORY hostfiles/ DESTINATION ${CMAKE_INSTALL_DATADIR}/fabricproof/hostfiles)
install(FILES README.md CHANGELOG.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})

set(_man ${PROJECT_BINARY_DIR}/man/fabricproof.1)
add_custom_command(
  OUTPUT ${_man}.gz
  COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/man
  COMMAND ${CMAKE_COMMAND} -DBIN=$<TARGET_FILE:fabricproof> -DOUT=${_man} -DVERSION=${PROJECT_VERSION}
          -P ${PROJECT_SOURCE_DIR}/cmake/ManPage.cmake
  COMMAND gzip -9nf ${_man}
  DEPENDS fabricproof ${PROJECT_SOURCE_DIR}/cmake/ManPage.cmake
  COMMENT "Writing the man page from fabricproof --help"
  VERBATIM)
add_custom_target(fabricproof_man ALL DEPENDS ${_man}.gz)
install(FILES ${_man}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME fabricproof)
set(CPACK_PACKAGE_VENDOR fabricproof)
set(CPACK_PACKAGE_CONTACT "fabricproof developers <fabricproof@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "acceptance test suite for GPU clusters (RDMA verbs, GPUDirect, NCCL, uplink)")
set(CPACK_PACKAGE_DESCRIPTION "Run with mpirun or srun across all nodes of a GPU cluster: an inventory checked for health and
consistency, a pairwise RDMA verbs bandwidth/latency matrix, GPUDirect RDMA checks, NCCL sweeps
with a transport audit, an uplink check, and one acceptance report (JSON, Markdown, HTML, JUnit,
Prometheus). CUDA and NCCL are used when present at run time.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # fabricproof_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION net)
# dpkg-shlibdeps turns every linked library into its Debian package (libopenmpi3, libibverbs1,
# libhwloc15, libfmt9, ...); the rest are what the binary starts or opens at run time.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "openmpi-bin, ibverbs-providers")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "iperf3, iproute2, rdma-core")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "perftest, infiniband-diags, prometheus-node-exporter")
include(CPack)
