# Cross-compiling Kernodeck's node pieces for arm64 (GH200/GB200 Grace nodes) on a Debian 12
# amd64 machine: Debian's cross toolchain (crossbuild-essential-arm64) and the multiarch :arm64
# -dev packages, which install into /usr/lib/aarch64-linux-gnu and /usr/include/aarch64-linux-gnu
# (scripts/deps --arm64 installs both). Used by `scripts/build --arch arm64`.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# Headers and libraries only from the target's multiarch folders and the arch-independent
# /usr/include (nlohmann/json); programs (python3 for the module check) from the build machine.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

# pkg-config (libyaml, librpm) must answer for arm64, not for the build machine.
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")

# Tests built for arm64 run through qemu (ctest; the arm64-labelled tests of the amd64 build
# call qemu-aarch64-static themselves).
find_program(KERNODECK_QEMU_AARCH64 qemu-aarch64-static)
if(KERNODECK_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${KERNODECK_QEMU_AARCH64};-L;/usr/aarch64-linux-gnu)
endif()
