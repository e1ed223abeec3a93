#include "bindersim/common/hash.hpp"

namespace bindersim {

std::uint64_t fnv1a64(std::string_view bytes) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (const char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

std::uint64_t document_hash(const nlohmann::json& document) {
  return fnv1a64(document.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace bindersim
