#include "bindersim/common/error.hpp"

#include <cstdio>
#include <cstdlib>

namespace bindersim {

void check_failed(const char* expr, const char* file, int line, const char* message) {
  std::fprintf(stderr, "bindersim: internal check failed at %s:%d: %s%s%s\n", file, line, expr,
               message ? ": " : "", message ? message : "");
  std::abort();
}

}  // namespace bindersim
