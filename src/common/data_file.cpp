#include "bindersim/common/data_file.hpp"

#include <algorithm>

#include "bindersim/common/error.hpp"
#include "bindersim/common/json_reader.hpp"

namespace bindersim {

namespace fs = std::filesystem;

std::vector<std::string> data_file_names(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code error;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    std::error_code file_error;
    if (it->path().extension() == ".json" && fs::is_regular_file(it->path(), file_error)) {
      names.push_back(it->path().stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

fs::path resolve_data_file(const std::string& name_or_path, const fs::path& dir,
                           std::string_view kind, std::string_view kinds) {
  if (name_or_path.empty()) {
    throw ConfigError("empty " + std::string(kind) +
                      " name: give a name or a path to a .json file");
  }
  const fs::path given(name_or_path);
  std::error_code error;
  if (fs::is_regular_file(given, error) || given.extension() == ".json" ||
      name_or_path.find('/') != std::string::npos) {
    return given;
  }
  const fs::path file = dir / (name_or_path + ".json");
  if (fs::is_regular_file(file, error)) return file;
  const std::vector<std::string> names = data_file_names(dir);
  std::string message = "unknown " + std::string(kind) + " " + quote_text(name_or_path);
  if (names.empty()) {
    throw ConfigError(message + "; no " + std::string(kinds) + " found in " + dir.string());
  }
  message += did_you_mean(name_or_path, names) + "; available " + std::string(kinds) + ": ";
  for (std::size_t i = 0; i < names.size(); ++i) message += (i ? ", " : "") + names[i];
  throw ConfigError(message);
}

}  // namespace bindersim
