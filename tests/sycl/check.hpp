// Shared by the SYCL suite's programs: named checks that print
// `PASS name` or `FAIL name: why`, and a summary that becomes the exit status.
//
// A program is a list of sections (`section("name", [&] { ... })`); an
// exception escaping a section is reported as a failure of that section, so
// one unsupported call does not hide the results of the others.
#pragma once

#include <sycl/sycl.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <sstream>
#include <string>

namespace suite {

inline int passed = 0;
inline int failed = 0;

inline bool check(bool ok, const std::string &name, const std::string &why = "") {
  if (ok) {
    ++passed;
    std::printf("PASS %s\n", name.c_str());
  } else {
    ++failed;
    std::printf("FAIL %s%s%s\n", name.c_str(), why.empty() ? "" : ": ", why.c_str());
  }
  std::fflush(stdout);
  return ok;
}

template <typename A, typename B>
bool check_eq(const A &actual, const B &expected, const std::string &name) {
  if (actual == expected) return check(true, name);
  std::ostringstream why;
  why << "got " << actual << ", expected " << expected;
  return check(false, name, why.str());
}

// Runs one section; a SYCL or standard exception counts as one failure.
inline void section(const std::string &name, const std::function<void()> &body) {
  try {
    body();
  } catch (const sycl::exception &e) {
    check(false, name, std::string("sycl::exception (") + e.code().message() + "): " + e.what());
  } catch (const std::exception &e) {
    check(false, name, std::string("exception: ") + e.what());
  }
}

// Every element of [p, p + n) equals v; names the first mismatch otherwise.
template <typename T>
bool check_all(const T *p, size_t n, T v, const std::string &name) {
  for (size_t i = 0; i < n; ++i) {
    if (!(p[i] == v)) {
      std::ostringstream why;
      why << "element " << i << " is " << +p[i] << ", expected " << +v;
      return check(false, name, why.str());
    }
  }
  return check(true, name);
}

inline int summary() {
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}

// The backend the runner expects every platform to report
// (SYCL_SUITE_BACKEND: native_cpu or opencl).
inline sycl::backend expected_backend() {
  const char *name = std::getenv("SYCL_SUITE_BACKEND");
  if (name && std::strcmp(name, "opencl") == 0) return sycl::backend::opencl;
  return sycl::backend::ext_oneapi_native_cpu;
}

// Runs body and reports whether it threw a sycl::exception; `what` gets
// its code and message.
template <typename F>
bool throws_sycl(F &&body, std::string *what = nullptr) {
  try {
    body();
  } catch (const sycl::exception &e) {
    if (what) *what = e.code().message() + ": " + e.what();
    return true;
  }
  return false;
}

}  // namespace suite

// The programs call the checks unqualified.
using suite::check;
using suite::check_all;
using suite::check_eq;
using suite::section;
using suite::throws_sycl;
