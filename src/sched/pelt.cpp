#include "bindersim/sched/pelt.hpp"

namespace bindersim::sched {
void PeltSignal::update(SimTime now, bool active, double ceiling) {
  if (now <= last_update_) return;
  advance(now, pelt_decay(now - last_update_), active, ceiling);
}

double PeltSignal::decayed_value(SimTime now) const {
  return now <= last_update_ ? value_ : value_ * pelt_decay(now - last_update_);
}

}  // namespace bindersim::sched
