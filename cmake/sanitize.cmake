# Sanitizer and fuzzing builds, on demand only (scripts/test --sanitize=…,
# scripts/fuzz). The default build and CI set neither switch.
set(RECEIPTD_SANITIZE "" CACHE STRING
  "Instrument everything: address (ASan+UBSan) or thread (TSan); empty for none")
set_property(CACHE RECEIPTD_SANITIZE PROPERTY STRINGS "" address thread)
option(RECEIPTD_FUZZ "Build the libFuzzer targets of tests/fuzz (clang only)" OFF)

if(RECEIPTD_SANITIZE STREQUAL "address")
  # UB aborts instead of printing and going on, so a test or fuzz run fails on it.
  # No vptr check: it needs the typeinfo of every polymorphic class it sees, and
  # libsoci exports none for its backends (undefined references at link time).
  set(receiptd_sanitize_flags -fsanitize=address,undefined -fno-sanitize=vptr
      -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
elseif(RECEIPTD_SANITIZE STREQUAL "thread")
  set(receiptd_sanitize_flags -fsanitize=thread -fno-omit-frame-pointer)
elseif(NOT RECEIPTD_SANITIZE STREQUAL "")
  message(FATAL_ERROR "RECEIPTD_SANITIZE must be address, thread or empty, not ${RECEIPTD_SANITIZE}")
endif()
if(receiptd_sanitize_flags)
  add_compile_options(${receiptd_sanitize_flags})
  add_link_options(${receiptd_sanitize_flags})
endif()

if(RECEIPTD_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "RECEIPTD_FUZZ needs clang (libFuzzer): -DCMAKE_CXX_COMPILER=clang++-16")
  endif()
  # Coverage feedback for every library the targets link; the targets themselves
  # link -fsanitize=fuzzer (tests/fuzz/CMakeLists.txt).
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
