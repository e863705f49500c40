// The ops tests' main: registers the generic op suite (one test per check and op, derived from the
// manifest at run time) before GoogleTest lists or runs anything.
#include <gtest/gtest.h>

#include "generic/generic_call.hpp"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  tileops::generic::register_generic_suite();
  return RUN_ALL_TESTS();
}
