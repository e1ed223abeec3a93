// Test helper: the message of a ConfigError.
#pragma once

#include <string>

#include "bindersim/common/error.hpp"

namespace bindersim::testing {

// The message of the ConfigError thrown by `action`, or a marker when nothing was thrown.
template <typename Action>
std::string error_of(Action&& action) {
  try {
    action();
  } catch (const ConfigError& error) {
    return error.what();
  }
  return "<no ConfigError>";
}

}  // namespace bindersim::testing
