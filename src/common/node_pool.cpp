#include "bindersim/common/node_pool.hpp"

namespace bindersim {

void* NodePool::do_allocate(std::size_t bytes, std::size_t alignment) {
  if (!pooled(bytes, alignment)) {
    return std::pmr::new_delete_resource()->allocate(bytes, alignment);
  }
  const std::size_t size_class = class_of(bytes);
  if (FreeBlock* block = free_[size_class]) {
    free_[size_class] = block->next;
    return block;
  }
  const std::size_t size = (size_class + 1) * kGranule;
  if (chunk_left_ < size) {
    // The rest of the current chunk (less than one block) is left unused.
    chunks_.push_back(std::make_unique<std::byte[]>(kChunkBytes));
    chunk_next_ = chunks_.back().get();
    chunk_left_ = kChunkBytes;
  }
  void* block = chunk_next_;
  chunk_next_ += size;
  chunk_left_ -= size;
  return block;
}

void NodePool::do_deallocate(void* block, std::size_t bytes, std::size_t alignment) {
  if (!pooled(bytes, alignment)) {
    std::pmr::new_delete_resource()->deallocate(block, bytes, alignment);
    return;
  }
  const std::size_t size_class = class_of(bytes);
  free_[size_class] = ::new (block) FreeBlock{free_[size_class]};
}

}  // namespace bindersim
