// NodePool: a memory resource that recycles the small blocks of node-based containers.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <memory_resource>
#include <vector>

namespace bindersim {

// A std::pmr::memory_resource for the nodes of maps, sets and lists that grow and shrink all
// the time: a freed block goes on a free list of its size class and the next allocation of that
// class takes it back, so a container in steady state calls no malloc. Blocks of up to
// kMaxBlockBytes come from chunks the pool owns and releases when it is destroyed; larger or
// over-aligned requests go to the upstream resource. Memory is bounded by the largest number
// of blocks alive at once. Not thread-safe: one pool per owner.
class NodePool final : public std::pmr::memory_resource {
 public:
  static constexpr std::size_t kGranule = alignof(std::max_align_t);  // 16 on x86-64, arm64
  static constexpr std::size_t kMaxBlockBytes = 256;

  NodePool() = default;
  NodePool(const NodePool&) = delete;
  NodePool& operator=(const NodePool&) = delete;

 private:
  struct FreeBlock {
    FreeBlock* next;
  };
  static constexpr std::size_t kClasses = kMaxBlockBytes / kGranule;
  static constexpr std::size_t kChunkBytes = 16 * 1024;

  void* do_allocate(std::size_t bytes, std::size_t alignment) override;
  void do_deallocate(void* block, std::size_t bytes, std::size_t alignment) override;
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }
  static bool pooled(std::size_t bytes, std::size_t alignment) {
    return bytes > 0 && bytes <= kMaxBlockBytes && alignment <= kGranule;
  }
  static std::size_t class_of(std::size_t bytes) { return (bytes - 1) / kGranule; }

  std::array<FreeBlock*, kClasses> free_{};  // per size class: blocks given back
  std::vector<std::unique_ptr<std::byte[]>> chunks_;
  std::byte* chunk_next_ = nullptr;  // the unused rest of the newest chunk
  std::size_t chunk_left_ = 0;
};

}  // namespace bindersim
