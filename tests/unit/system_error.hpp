// The message of the exit-4 error a call throws, for the tests of the system
// layer's promises about links, special files and folders.
#pragma once
#include <catch2/catch.hpp>
#include <string>

#include "sys/base/error.hpp"

namespace loopkit::testing {

// the message of the exit-4 error that f throws ("" and a failure if none)
template <class F>
std::string system_error(F f) {
  try {
    f();
  } catch (const Error& e) {
    CHECK(e.code() == Exit::system);
    return e.what();
  }
  FAIL_CHECK("no error");
  return "";
}

}  // namespace loopkit::testing
