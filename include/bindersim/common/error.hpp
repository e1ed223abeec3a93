// Error handling: ConfigError for bad input at the boundary, BSIM_CHECK for broken invariants.
#pragma once

#include <stdexcept>
#include <string>

namespace bindersim {

// Bad input (scenario, topology, options). The message is one line:
// "<file>: <json pointer>: <what was expected, what was found, valid values>".
// The CLI prints it and exits 2.
class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(const std::string& message) : std::runtime_error(message) {}
};

[[noreturn]] void check_failed(const char* expr, const char* file, int line, const char* message);

}  // namespace bindersim

// Aborts with file:line when an internal invariant does not hold. Never used for input errors.
#define BSIM_CHECK(cond)                                             \
  do {                                                               \
    if (!(cond)) [[unlikely]]                                        \
      ::bindersim::check_failed(#cond, __FILE__, __LINE__, nullptr); \
  } while (0)

#define BSIM_CHECK_MSG(cond, msg)                                  \
  do {                                                             \
    if (!(cond)) [[unlikely]]                                      \
      ::bindersim::check_failed(#cond, __FILE__, __LINE__, (msg)); \
  } while (0)

namespace bindersim {
// Unsigned 128-bit integer (a GCC/Clang extension) for exact products and sums.
__extension__ using Uint128 = unsigned __int128;
// Signed 128-bit integer, for sums that may be negative.
__extension__ using Int128 = __int128;
// |value|, exact for every value (the most negative one included).
inline Uint128 magnitude(Int128 value) {
  return value < 0 ? static_cast<Uint128>(-(value + 1)) + 1 : static_cast<Uint128>(value);
}
}  // namespace bindersim
