#include "output_file.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "bindersim/common/error.hpp"

namespace bindersim::cli {

void write_file_atomically(const std::string& path, const std::string& content) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    if (!file) throw ConfigError(path + ": cannot write file");
    file << content;
    file.flush();
    if (!file) {
      std::remove(temporary.c_str());
      throw ConfigError(path + ": write failed");
    }
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::remove(temporary.c_str());
    throw ConfigError(path + ": cannot write file: " + error.message());
  }
}

}  // namespace bindersim::cli
