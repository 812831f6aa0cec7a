# Sourced on a GPU host without a package manager, in the project's root
# (docs/gpu-host.md): unpacks the Debian packages that tools/offline/prepare
# put in .offline/debs into a folder of its own (CUDALAB_OFFLINE_DEPS, default
# /tmp/cudalab-offline-deps) and points the compiler, the linker, pkg-config
# and CMake at it.
_cudalab_deps=${CUDALAB_OFFLINE_DEPS:-/tmp/cudalab-offline-deps}
if [ ! -d "$_cudalab_deps/usr" ]; then
  mkdir -p "$_cudalab_deps"
  for _deb in .offline/debs/*.deb; do dpkg-deb -x "$_deb" "$_cudalab_deps"; done
fi
_cudalab_lib=$_cudalab_deps/usr/lib/x86_64-linux-gnu
export CPATH="$_cudalab_deps/usr/include${CPATH:+:$CPATH}"
export LIBRARY_PATH="$_cudalab_lib${LIBRARY_PATH:+:$LIBRARY_PATH}"
export LD_LIBRARY_PATH="$_cudalab_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PKG_CONFIG_PATH="$_cudalab_lib/pkgconfig:$_cudalab_deps/usr/share/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export CMAKE_PREFIX_PATH="$_cudalab_deps/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
unset _cudalab_deps _cudalab_lib _deb
