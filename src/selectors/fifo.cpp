#include "bindersim/selectors/fifo.hpp"

#include "bindersim/selectors/registry.hpp"

namespace bindersim::selectors {

Selection FifoSelector::do_select(const SelectionRequest& request, const MachineView& /*machine*/) {
  Selection selection;
  if (!request.waiting.empty()) selection.index = 0;
  return selection;
}

std::unique_ptr<Selector> make_fifo_selector(const JsonNode* params) {
  expect_no_params(params);
  return std::make_unique<FifoSelector>();
}

}  // namespace bindersim::selectors
