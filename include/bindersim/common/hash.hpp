// Stable 64-bit hashes of bytes and of JSON documents, for run identities and input digests.
// They are part of the result and sweep formats: changing them changes every stored hash.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace bindersim {

// 64-bit FNV-1a of `bytes` (offset basis 0xcbf29ce484222325, prime 0x100000001b3).
std::uint64_t fnv1a64(std::string_view bytes);

// fnv1a64 of the document's canonical JSON: keys sorted, no spaces, invalid UTF-8 replaced
// (nlohmann::json::dump()), so that it does not depend on the file's whitespace or key order.
std::uint64_t document_hash(const nlohmann::json& document);

// A 64-bit hash or fingerprint as the 16 lowercase hex digits result files carry (a string,
// because JSON numbers lose 64-bit precision).
std::string hex64(std::uint64_t value);

}  // namespace bindersim
