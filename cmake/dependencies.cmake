# Debian 12 packages only (see scripts/setup). CAF and SOCI ship no CMake config:
# small IMPORTED targets are declared here.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(OpenSSL 3 REQUIRED)
find_package(CURL REQUIRED)
find_package(PostgreSQL REQUIRED)
find_package(SQLite3 REQUIRED)
find_package(Boost 1.81.0 EXACT REQUIRED COMPONENTS json CONFIG)
find_package(Catch2 2 REQUIRED)
pkg_check_modules(Pistache REQUIRED IMPORTED_TARGET libpistache)
# The store emulator's HTTP/2-over-TLS listeners (libnghttp2-dev; libcurl uses the same library).
pkg_check_modules(nghttp2 REQUIRED IMPORTED_TARGET libnghttp2)
# Entitlement patterns on product ids (model/entitlements/): RE2, linear-time matching
# whatever the pattern (libre2-dev).
pkg_check_modules(re2 REQUIRED IMPORTED_TARGET re2)

find_path(CAF_INCLUDE_DIR caf/all.hpp REQUIRED)
find_library(CAF_CORE_LIBRARY caf_core REQUIRED)
find_library(CAF_IO_LIBRARY caf_io REQUIRED)
add_library(CAF::core UNKNOWN IMPORTED)
set_target_properties(CAF::core PROPERTIES IMPORTED_LOCATION ${CAF_CORE_LIBRARY}
  INTERFACE_INCLUDE_DIRECTORIES ${CAF_INCLUDE_DIR}
  INTERFACE_LINK_LIBRARIES Threads::Threads)

find_path(SOCI_INCLUDE_DIR soci/soci.h REQUIRED)
find_library(SOCI_CORE_LIBRARY soci_core REQUIRED)
find_library(SOCI_POSTGRESQL_LIBRARY soci_postgresql REQUIRED)
find_library(SOCI_SQLITE3_LIBRARY soci_sqlite3 REQUIRED)
add_library(SOCI::core UNKNOWN IMPORTED)
set_target_properties(SOCI::core PROPERTIES IMPORTED_LOCATION ${SOCI_CORE_LIBRARY}
  INTERFACE_INCLUDE_DIRECTORIES ${SOCI_INCLUDE_DIR}
  INTERFACE_LINK_LIBRARIES "Threads::Threads;${CMAKE_DL_LIBS}")
add_library(SOCI::postgresql UNKNOWN IMPORTED)
set_target_properties(SOCI::postgresql PROPERTIES IMPORTED_LOCATION ${SOCI_POSTGRESQL_LIBRARY}
  INTERFACE_INCLUDE_DIRECTORIES "${PostgreSQL_INCLUDE_DIRS}"
  INTERFACE_LINK_LIBRARIES "SOCI::core;PostgreSQL::PostgreSQL")
add_library(SOCI::sqlite3 UNKNOWN IMPORTED)
set_target_properties(SOCI::sqlite3 PROPERTIES IMPORTED_LOCATION ${SOCI_SQLITE3_LIBRARY}
  INTERFACE_LINK_LIBRARIES "SOCI::core;SQLite::SQLite3")

# jemalloc for the service binaries: glibc malloc's arena locking and
# consolidation cost ~15 % of receiptd's CPU under load (bench/README.md).
# Not under sanitizers: they replace malloc themselves (cmake/sanitize.cmake).
if(RECEIPTD_SANITIZE OR RECEIPTD_FUZZ)
  set(JEMALLOC_LIBRARY "")
else()
  find_library(JEMALLOC_LIBRARY NAMES jemalloc REQUIRED)
endif()
