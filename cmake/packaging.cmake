# What `cmake --install` puts where, per Debian package, and the two packages CPack makes from it
# (scripts/package runs this from a clean tree):
#   kernodeck       the CLI, the static kernodeck-probe, the plugins in /usr/lib/kernodeck (where
#                   the binaries look: beside themselves, then ../lib/kernodeck), man pages, bash
#                   completion, docs. Depends: from dpkg-shlibdeps, plus the two libraries kernodeck
#                   opens with dlopen (libarchive, libcurl), which no ELF header names.
#   kernodeck-hook  the static kernodeck-hook, its man page and installer: no runtime dependency.
# The man pages and the completion script are made at build time from the binaries' own --help
# (scripts/gen-man, `kernodeck completion bash`), so they cannot drift from it.
include(GNUInstallDirs)
# `cpack` and `make install` do not build the whole tree (the tests) first: scripts/package builds
# everything before packaging, and a test build packages what it has built (ship_test.cc).
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

set(KERNODECK_GENERATED_DOCS OFF)
find_program(KERNODECK_GZIP gzip)
# Found here too: CMakeLists.txt looks for python3 after including this file, so on a first
# configure (a fresh clone) it would not be known yet and no package rule would be made.
find_program(KERNODECK_PYTHON3 python3)
# A cross build (arm64) makes its pages and completion by running its own binaries through the
# emulator (qemu-aarch64-static, cmake/aarch64-linux-gnu.cmake); without one it packages nothing.
set(run_built "")
if(CMAKE_CROSSCOMPILING AND CMAKE_CROSSCOMPILING_EMULATOR)
  list(JOIN CMAKE_CROSSCOMPILING_EMULATOR " " run_built)
endif()
if(KERNODECK_PYTHON3 AND KERNODECK_GZIP AND (NOT CMAKE_CROSSCOMPILING OR run_built) AND TARGET kernodeck
   AND TARGET kernodeck-hook AND TARGET kdk-mkimage)
  set(KERNODECK_GENERATED_DOCS ON)
  set(man_dir ${CMAKE_BINARY_DIR}/man)
  set(probe_arg "")
  set(probe_dep "")
  if(TARGET kernodeck-probe)
    set(probe_arg --probe $<TARGET_FILE:kernodeck-probe>)
    set(probe_dep kernodeck-probe)
  endif()
  # One stamp for the pages: which pages there are follows the commands --help lists. Their
  # EXAMPLES are the docs' own command lines (scripts/gen-man --docs).
  file(GLOB man_docs ${PROJECT_SOURCE_DIR}/docs/*.md)
  list(SORT man_docs)
  set(man_docs ${PROJECT_SOURCE_DIR}/README.md ${man_docs} ${PROJECT_SOURCE_DIR}/hooks/README.md)
  add_custom_command(OUTPUT ${man_dir}/.stamp
    COMMAND ${CMAKE_COMMAND} -E rm -rf ${man_dir}
    COMMAND ${KERNODECK_PYTHON3} ${PROJECT_SOURCE_DIR}/scripts/gen-man --kernodeck $<TARGET_FILE:kernodeck>
      --hook $<TARGET_FILE:kernodeck-hook> ${probe_arg} --out ${man_dir} "--emulator=${run_built}" --docs ${man_docs}
      > ${CMAKE_BINARY_DIR}/man-pages.txt
    COMMAND ${CMAKE_COMMAND} -E touch ${man_dir}/.stamp
    DEPENDS kernodeck kernodeck-hook ${probe_dep} ${PROJECT_SOURCE_DIR}/scripts/gen-man ${man_docs}
    COMMENT "Man pages from --help (scripts/gen-man)" VERBATIM)
  # The completion script, and the compressed copies the packages install (gzip -n: no name or
  # time in the header, so two builds give the same bytes).
  set(pkg_dir ${CMAKE_BINARY_DIR}/packaging)
  add_custom_command(OUTPUT ${pkg_dir}/.stamp
    COMMAND ${CMAKE_COMMAND} -E rm -rf ${pkg_dir}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${pkg_dir}/man1 ${pkg_dir}/man8 ${pkg_dir}/completions
    COMMAND sh -c "${run_built} $<TARGET_FILE:kernodeck> completion bash > ${pkg_dir}/completions/kernodeck"
    COMMAND sh -c "for f in ${man_dir}/*.1; do gzip -9nc $f > ${pkg_dir}/man1/$(basename $f).gz; done"
    COMMAND sh -c "for f in ${man_dir}/*.8; do gzip -9nc $f > ${pkg_dir}/man8/$(basename $f).gz; done"
    COMMAND sh -c "gzip -9nc ${PROJECT_SOURCE_DIR}/packaging/changelog > ${pkg_dir}/changelog.gz"
    COMMAND ${CMAKE_COMMAND} -E touch ${pkg_dir}/.stamp
    DEPENDS ${man_dir}/.stamp kernodeck ${PROJECT_SOURCE_DIR}/packaging/changelog
    COMMENT "Completion script and compressed man pages" VERBATIM)
  add_custom_target(man_pages ALL DEPENDS ${man_dir}/.stamp ${pkg_dir}/.stamp)
  # The demo image as an OCI layout, so that the README's first audit works with what the package
  # ships: kernodeck audit oci:/usr/share/doc/kernodeck/examples/demo-oci:1.0
  set(demo_layout ${CMAKE_BINARY_DIR}/packaging-demo/demo-oci)
  add_custom_command(OUTPUT ${demo_layout}/index.json
    COMMAND ${CMAKE_COMMAND} -E rm -rf ${demo_layout}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${demo_layout}
    COMMAND sh -c "${run_built} $<TARGET_FILE:kdk-mkimage> ${PROJECT_SOURCE_DIR}/examples/demo/image.json ${demo_layout} >/dev/null"
    DEPENDS kdk-mkimage ${PROJECT_SOURCE_DIR}/examples/demo/image.json
    COMMENT "The demo image as an OCI layout, for the package" VERBATIM)
  add_custom_target(demo_layout ALL DEPENDS ${demo_layout}/index.json)

  # kernodeck
  foreach(t kernodeck kernodeck-probe)
    if(TARGET ${t})
      install(TARGETS ${t} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT kernodeck EXCLUDE_FROM_ALL)
    endif()
  endforeach()
  # The plugins, each in a package of its own (kernodeck-rpm, kernodeck-torch), so that the CLI
  # (and the gate image) does not depend on librpm or LibTorch (~860 MB installed).
  foreach(t rpm torch)
    if(TARGET kernodeck_${t})
      install(TARGETS kernodeck_${t} LIBRARY DESTINATION lib/kernodeck PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ
              COMPONENT ${t} EXCLUDE_FROM_ALL)
      install(FILES ${pkg_dir}/changelog.gz ${PROJECT_SOURCE_DIR}/packaging/copyright
              DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/kernodeck-${t} COMPONENT ${t} EXCLUDE_FROM_ALL)
      install(FILES ${PROJECT_SOURCE_DIR}/packaging/lintian-overrides-kernodeck-${t} RENAME kernodeck-${t}
              DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides COMPONENT ${t} EXCLUDE_FROM_ALL)
    endif()
  endforeach()
  install(DIRECTORY ${pkg_dir}/man1/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT kernodeck EXCLUDE_FROM_ALL)
  install(FILES ${pkg_dir}/completions/kernodeck DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
          COMPONENT kernodeck EXCLUDE_FROM_ALL)
  install(FILES ${PROJECT_SOURCE_DIR}/README.md ${pkg_dir}/changelog.gz ${PROJECT_SOURCE_DIR}/packaging/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR}
          COMPONENT kernodeck EXCLUDE_FROM_ALL)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs COMPONENT kernodeck EXCLUDE_FROM_ALL
          FILES_MATCHING PATTERN "*.md")
  # Overrides of lintian's tags for what is so on purpose (the static binaries).
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/lintian-overrides-kernodeck RENAME kernodeck
          DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides COMPONENT kernodeck EXCLUDE_FROM_ALL)
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/lintian-overrides-kernodeck-hook RENAME kernodeck-hook
          DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides COMPONENT hook EXCLUDE_FROM_ALL)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/demo DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples COMPONENT kernodeck EXCLUDE_FROM_ALL)
  install(DIRECTORY ${demo_layout} DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples COMPONENT kernodeck EXCLUDE_FROM_ALL)

  # kernodeck-hook: the binary, its page, the installer and its files (hooks/install finds the
  # binary beside itself in a checkout's build/, else the packaged /usr/bin/kernodeck-hook).
  install(TARGETS kernodeck-hook RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT hook EXCLUDE_FROM_ALL)
  install(FILES ${pkg_dir}/man8/kernodeck-hook.8.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man8 COMPONENT hook EXCLUDE_FROM_ALL)
  install(PROGRAMS ${PROJECT_SOURCE_DIR}/hooks/install DESTINATION ${CMAKE_INSTALL_DATADIR}/kernodeck-hook COMPONENT hook EXCLUDE_FROM_ALL)
  install(FILES ${PROJECT_SOURCE_DIR}/hooks/kernodeck-hook.json DESTINATION ${CMAKE_INSTALL_DATADIR}/kernodeck-hook COMPONENT hook EXCLUDE_FROM_ALL)
  install(FILES ${PROJECT_SOURCE_DIR}/hooks/README.md ${pkg_dir}/changelog.gz ${PROJECT_SOURCE_DIR}/packaging/copyright
          DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/kernodeck-hook COMPONENT hook EXCLUDE_FROM_ALL)
  # The installer's default hook flags, which an administrator edits: a conffile
  # (packaging/kernodeck-hook/conffiles), kept on upgrade and asked about when both changed.
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/kernodeck-hook/default RENAME kernodeck-hook DESTINATION /etc/default
          COMPONENT hook EXCLUDE_FROM_ALL)
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME kernodeck)
set(CPACK_PACKAGE_VENDOR "Kernodeck")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "Kernodeck maintainers <kernodeck@example.com>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL kernodeck hook)
foreach(t rpm torch)
  if(TARGET kernodeck_${t})
    list(APPEND CPACK_COMPONENTS_ALL ${t})
  endif()
endforeach()
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# A cross build's packages are for its target (kernodeck-hook_<version>_arm64.deb), and
# dpkg-shlibdeps reads their libraries from that architecture's multiarch folders and shlibs
# (DEB_HOST_ARCH, set while cpack runs by the project config file).
if(CMAKE_CROSSCOMPILING AND CMAKE_SYSTEM_PROCESSOR STREQUAL "aarch64")
  set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE arm64)
  set(cross_config ${CMAKE_BINARY_DIR}/CPackCrossArch.cmake)
  file(WRITE ${cross_config} "set(ENV{DEB_HOST_ARCH} arm64)\n")
  set(CPACK_PROJECT_CONFIG_FILE ${cross_config})
endif()
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://example.com/kernodeck")
set(CPACK_DEBIAN_KERNODECK_PACKAGE_NAME kernodeck)
set(CPACK_DEBIAN_HOOK_PACKAGE_NAME kernodeck-hook)
set(CPACK_DEBIAN_KERNODECK_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_HOOK_PACKAGE_SECTION admin)
# libarchive and libcurl are opened with dlopen (oci/archive_lib.h, registry/curl_lib.h); every
# other dependency is what dpkg-shlibdeps reads from the binaries and plugins.
set(CPACK_DEBIAN_KERNODECK_PACKAGE_DEPENDS "libarchive13, libcurl4")
set(CPACK_DEBIAN_KERNODECK_PACKAGE_RECOMMENDS "ca-certificates, man-db")
# The plugins: Recommends of the CLI (apt installs them by default; --no-install-recommends, as
# the gate image does, leaves them out, and the CLI names what each missing plugin removes).
set(CPACK_DEBIAN_RPM_PACKAGE_NAME kernodeck-rpm)
set(CPACK_DEBIAN_TORCH_PACKAGE_NAME kernodeck-torch)
set(CPACK_DEBIAN_RPM_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_TORCH_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_RPM_PACKAGE_DEPENDS "kernodeck (= ${PROJECT_VERSION})")
set(CPACK_DEBIAN_TORCH_PACKAGE_DEPENDS "kernodeck (= ${PROJECT_VERSION})")
set(plugin_recommends "")
foreach(t rpm torch)
  if(TARGET kernodeck_${t})
    list(APPEND plugin_recommends "kernodeck-${t} (= ${PROJECT_VERSION})")
  endif()
endforeach()
if(plugin_recommends)
  list(JOIN plugin_recommends ", " plugin_recommends)
  set(CPACK_DEBIAN_KERNODECK_PACKAGE_RECOMMENDS "${CPACK_DEBIAN_KERNODECK_PACKAGE_RECOMMENDS}, ${plugin_recommends}")
endif()
# The hook's life follows its package (issue 51): postinst refreshes a registration on upgrade,
# prerm unregisters it on removal (hooks/install --uninstall), postrm drops the log on purge.
set(CPACK_DEBIAN_HOOK_PACKAGE_CONTROL_EXTRA
    ${PROJECT_SOURCE_DIR}/packaging/kernodeck-hook/postinst ${PROJECT_SOURCE_DIR}/packaging/kernodeck-hook/prerm
    ${PROJECT_SOURCE_DIR}/packaging/kernodeck-hook/postrm ${PROJECT_SOURCE_DIR}/packaging/kernodeck-hook/conffiles)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# CPack indents the lines after the first itself; each stays under 80 characters.
set(CPACK_COMPONENT_KERNODECK_DESCRIPTION "reproducibility auditor for machine-learning containers
Kernodeck audits a container image without running it (registry, OCI
layout, archive or root filesystem): it verifies digests, inventories
Python environments, PyTorch, CUDA and leaked credentials, and writes
one report (text, JSON, SARIF, CycloneDX, SPDX, HTML). It also attaches
signed reports to images, gates pods on them, and checks references,
sample outputs, resumed training and reproduction dossiers.")
set(CPACK_COMPONENT_RPM_DESCRIPTION "rpm database plugin for Kernodeck
Lets kernodeck read the OS packages of rpm-based images (RHEL, Fedora,
SUSE, Amazon Linux) with librpm. Without it kernodeck says so and
audits the rest of such an image.")
set(CPACK_COMPONENT_TORCH_DESCRIPTION "LibTorch plugin for Kernodeck
Lets kernodeck compute with LibTorch: the probe's compute check,
resume check and inspect, and legacy (pre-zip) .pt files. It pulls
LibTorch and its dependencies; the gate and the audit do not need it.")
set(CPACK_COMPONENT_HOOK_DESCRIPTION "OCI runtime hook that checks a container's GPU needs on the node
kernodeck-hook runs at every container start on a GPU node (podman,
CRI-O, containerd through CDI, runc, crun), checks the container's GPU
needs against the host and, under --policy enforce, refuses a container
that cannot work there. It is linked statically and has no runtime
dependency. The installer is /usr/share/kernodeck-hook/install.")
include(CPack)
