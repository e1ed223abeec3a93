// Behaviour of the per-cluster frequency governors (performance, powersave, schedutil) and of
// frequency-scaled execution, on the SA8155P topology: silver 0-3, gold 4-6 and prime 7, each
// cluster a frequency domain with its own operating points and a 40 us transition latency.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "bindersim/sched/scheduler.hpp"
#include "bindersim/topology/topology.hpp"
#include "sched_fixture.hpp"

namespace bindersim::sched {
namespace {

using engine::SimTime;
using namespace fixture;  // NOLINT(google-build-using-namespace): test helpers

constexpr int kSilver = 0;  // cluster ids
constexpr int kGold = 1;
constexpr int kPrimeCluster = 2;

SchedTunables governed(Governor governor, int rt_uclamp_min = 1024, bool util_est = true) {
  SchedTunables tunables;
  tunables.governor = governor;
  tunables.rt_uclamp_min = rt_uclamp_min;
  tunables.util_est = util_est;
  return tunables;
}

// A scheduler under a chosen governor, its parts reachable from a test body.
class FreqHarness : public SchedHarness {
 public:
  explicit FreqHarness(Governor governor, int rt_uclamp_min = 1024, bool util_est = true)
      : SchedHarness(governed(governor, rt_uclamp_min, util_est)) {}
  // Other tunables, and the SA8155P document changed by `topology_edit` first.
  FreqHarness(const SchedTunables& tunables,
              const std::function<void(nlohmann::json&)>& topology_edit)
      : SchedHarness(tunables, "mainline", IdleStates::kWfiOnly, topology_edit) {}

  Scheduler& sched() { return sched_; }
  FakeOwner& owner() { return owner_; }

  const topology::FrequencyDomain& domain(int cluster) const {
    return topology_.frequency_domain(cluster);
  }
  std::int64_t fmin(int cluster) const { return domain(cluster).opps.front().freq_khz; }
  std::int64_t fmax(int cluster) const { return domain(cluster).opps.back().freq_khz; }
  int top(int cluster) const { return static_cast<int>(domain(cluster).opps.size()) - 1; }
  // What sugov_update_shared() asks for now: the busiest CPU's utilisation (fair + RT, raised to
  // the RT clamp while an RT task is runnable) x 1.25, as a fraction of the cluster's capacity,
  // times fmax, resolved to an operating point.
  int expected_opp(int cluster) const {
    double util = 0;
    for (int cpu : topology_.cluster_cpus(cluster)) {
      util = std::max(util, sched_.cpu_frequency_util(cpu));
    }
    const double capacity = topology_.capacity(topology_.cluster_cpus(cluster).front());
    return opp_at_or_above(domain(cluster),
                           1.25 * static_cast<double>(fmax(cluster)) * util / capacity);
  }
};

class SchedutilTest : public ::testing::Test, public FreqHarness {
 protected:
  SchedutilTest() : FreqHarness(Governor::kSchedutil) {}
};

// schedutil following PELT alone: without util_est, whose estimate would hold the frequency
// of a task's last activation while it is enqueued (util_est_test.cpp).
class SchedutilPeltTest : public ::testing::Test, public FreqHarness {
 protected:
  SchedutilPeltTest() : FreqHarness(Governor::kSchedutil, 1024, false) {}
};

// --- schedutil -----------------------------------------------------------------------------

TEST_F(SchedutilTest, ContinuouslyBusyTaskDrivesItsClusterToTheTopOpp) {
  // A task that never sleeps starts without utilisation, so schedutil first drops its cluster
  // to the lowest operating point. Its utilisation then grows towards the CPU's current
  // (frequency-scaled) capacity; every time it passes 80% of it, 1.25 x util asks for a higher
  // point, until the cluster runs at its top one.
  occupy(kGold0, fair_params("gold"));
  occupy(kPrime, fair_params("prime"));
  run_until(100 * kMicrosecond);
  EXPECT_EQ(sched_.current_freq_khz(kGold), fmin(kGold));
  EXPECT_EQ(sched_.current_freq_khz(kPrimeCluster), fmin(kPrimeCluster));
  run_until(200 * kMillisecond);
  EXPECT_GT(sched_.current_freq_khz(kGold), fmin(kGold));
  EXPECT_GT(sched_.current_freq_khz(kPrimeCluster), fmin(kPrimeCluster));
  run_until(engine::kSecond);
  EXPECT_EQ(sched_.current_freq_khz(kGold), fmax(kGold));
  EXPECT_EQ(sched_.current_freq_khz(kPrimeCluster), fmax(kPrimeCluster));
  EXPECT_EQ(sched_.cluster_frequency(kGold).requested_opp, top(kGold));
  EXPECT_GT(sched_.cpu_util(kGold0), 0.8 * topology_.capacity(kGold0));
  EXPECT_GT(sched_.frequency_changes(), 4U);
  // The ramp shows in the mean frequency.
  EXPECT_LT(sched_.mean_freq_khz(kGold), static_cast<double>(fmax(kGold)));
}

TEST_F(SchedutilPeltTest, PeriodicTaskSettlesWhereItsUtilisationWithHeadroomPoints) {
  // Every 10 ms, 3 ms of reference work arrives for a task on gold CPU 4 (added to its segment
  // if it is still running): a frequency-invariant utilisation around 1024 x 3 / 10 = 307. At
  // each wakeup and block of the task, schedutil either requests the lowest operating point at
  // or above 1.25 x fmax x util / capacity (util read back at that instant), or, within the
  // rate limit of its last request, requests nothing. Starting from the lowest point, where
  // the work keeps the CPU busy, it climbs; once settled it runs neither at the top nor at the
  // bottom point but around the frequency the mean utilisation asks for:
  // 1.25 x 2419200 x 307.2 / 872 = 1065 MHz.
  const SimTime period = 10 * kMillisecond;
  const std::int64_t work = 3 * kMillisecond;
  const SimTime limit = sched_.tunables().schedutil_rate_limit_ns;
  const SimTime settled_from = 400 * kMillisecond;
  const SimTime end = 800 * kMillisecond;
  int decisions = 0;
  int requests = 0;
  std::vector<int> settled_opps;
  auto check = [&] {
    ++decisions;
    const ClusterFrequency& f = sched_.cluster_frequency(kGold);
    const bool requested_now = f.last_request == now();
    const bool may_request = f.last_request == engine::kNever || now() - f.last_request >= limit;
    if (requested_now) ++requests;
    if (requested_now || may_request) {
      EXPECT_EQ(f.requested_opp, expected_opp(kGold)) << "at " << now();
    }
    if (requested_now && now() >= settled_from) settled_opps.push_back(f.requested_opp);
  };
  const int tid = sched_.create_task(fair_params("periodic", 0, only(kGold0)));
  owner_.on_done(tid, [&](int id) {
    sched_.block(id);
    check();
  });
  sched_.run(tid, work);
  sched_.wake_new(tid, -1);
  check();
  for (SimTime t = period; t < end; t += period) {
    at(t, [&, tid] {
      if (sched_.task(tid).state == TaskState::kSleeping) {
        wake(tid, WakeContext{}, work);
        check();
      } else {
        sched_.run(tid, work);
      }
    });
  }
  run_until(settled_from);
  const double mean_before = sched_.mean_freq_khz(kGold);
  run_until(end);
  const double window_mean = (sched_.mean_freq_khz(kGold) * static_cast<double>(end) -
                              mean_before * static_cast<double>(settled_from)) /
                             static_cast<double>(end - settled_from);

  EXPECT_GE(decisions, 2 * 40);
  EXPECT_GT(requests, 5);
  ASSERT_FALSE(settled_opps.empty());
  for (int opp : settled_opps) {
    EXPECT_GT(opp, 0);
    EXPECT_LT(opp, top(kGold));
  }
  const double mean_util_khz = 1.25 * static_cast<double>(fmax(kGold)) * 307.2 / 872.0;
  EXPECT_NEAR(window_mean, mean_util_khz, 0.1 * mean_util_khz);
}

TEST_F(SchedutilTest, NewFrequencyTakesEffectAfterTheTransitionLatency) {
  // schedutil starts at the top operating point. A task without utilisation woken on gold CPU
  // 4 at 1 ms makes it request the lowest point at once; the cluster keeps running at the top
  // one for its transition latency (40 us), then switches.
  const SimTime latency = topology_.frequency_domain(kGold).transition_latency_ns;
  ASSERT_EQ(latency, 40 * kMicrosecond);
  run_until(kMillisecond);
  ASSERT_EQ(sched_.current_freq_khz(kGold), fmax(kGold));
  spawn(fair_params("task", 0, only(kGold0)), 10 * kMillisecond);
  EXPECT_EQ(sched_.cluster_frequency(kGold).last_request, kMillisecond);
  EXPECT_EQ(sched_.cluster_frequency(kGold).requested_opp, 0);
  run_until(kMillisecond + latency - 1);
  EXPECT_EQ(sched_.current_freq_khz(kGold), fmax(kGold));
  EXPECT_EQ(sched_.frequency_changes(), 0U);
  run_until(kMillisecond + latency);
  EXPECT_EQ(sched_.current_freq_khz(kGold), fmin(kGold));
  EXPECT_EQ(sched_.frequency_changes(), 1U);
  // The other clusters saw no decision and stay where they booted.
  EXPECT_EQ(sched_.current_freq_khz(kSilver), fmax(kSilver));
  EXPECT_EQ(sched_.current_freq_khz(kPrimeCluster), fmax(kPrimeCluster));
}

TEST_F(SchedutilTest, NoSecondRequestWithinTheRateLimit) {
  // After a request at 1 ms, decisions on the cluster before 1 ms + rate_limit (1 ms) request
  // nothing, even though the utilisation (raised to 600 at 1.5 ms) calls for a much higher
  // point; the first decision at or after 2 ms requests it, and it applies 40 us later.
  const SimTime limit = sched_.tunables().schedutil_rate_limit_ns;
  const SimTime latency = topology_.frequency_domain(kGold).transition_latency_ns;
  ASSERT_EQ(limit, kMillisecond);
  run_until(kMillisecond);
  const int task = spawn(fair_params("task", 0, only(kGold0)), 100 * kMillisecond);
  const ClusterFrequency& f = sched_.cluster_frequency(kGold);
  ASSERT_EQ(f.last_request, kMillisecond);
  ASSERT_EQ(f.requested_opp, 0);
  const std::uint64_t generation = f.generation;

  // 1.5 ms: the task's utilisation jumps; a short task woken on CPU 5 (and its block) are
  // decision points within the rate limit.
  run_until(1500 * kMicrosecond);
  sched_.set_task_util(task, 600);
  ASSERT_GT(expected_opp(kGold), 0);
  spawn(fair_params("short", 0, only(5)), 10 * kMicrosecond);
  EXPECT_EQ(f.generation, generation);
  run_until(kMillisecond + limit - 1);
  EXPECT_EQ(f.generation, generation);
  EXPECT_EQ(f.last_request, kMillisecond);
  EXPECT_EQ(f.requested_opp, 0);
  EXPECT_EQ(sched_.current_freq_khz(kGold), fmin(kGold));

  // 2 ms: a wakeup on CPU 6 is the next decision point.
  int expected = -1;
  at(kMillisecond + limit, [&] {
    spawn(fair_params("next", 0, only(6)), 10 * kMicrosecond);
    expected = expected_opp(kGold);
  });
  run_until(kMillisecond + limit);
  EXPECT_EQ(f.generation, generation + 1);
  EXPECT_EQ(f.last_request, kMillisecond + limit);
  EXPECT_EQ(f.requested_opp, expected);
  EXPECT_GT(expected, 0);
  run_until(kMillisecond + limit + latency);
  EXPECT_EQ(sched_.current_freq_khz(kGold),
            topology_.frequency_domain(kGold).opps[static_cast<std::size_t>(expected)].freq_khz);
}

TEST_F(SchedutilTest, RunnableRtTaskRaisesItsClusterToTheTopOpp) {
  // With sched_util_clamp_min_rt_default at 1024, a runnable RT task clamps its CPU's
  // frequency utilisation up to the CPU's capacity, so schedutil asks for the top operating
  // point however little the task has run. When it sleeps again (after the rate limit), that
  // decision drops the frequency back.
  run_until(kMillisecond);
  spawn(fair_params("fair", 0, only(5)), 10 * kMicrosecond);
  run_until(3 * kMillisecond);
  ASSERT_EQ(sched_.current_freq_khz(kGold), fmin(kGold));
  const int rt = spawn(rt_params("rt", 50, only(5)), 2 * kMillisecond);
  EXPECT_EQ(sched_.task(rt).cpu, 5);
  EXPECT_EQ(sched_.cpu_frequency_util(5), topology_.capacity(5));
  EXPECT_EQ(sched_.cluster_frequency(kGold).requested_opp, top(kGold));
  run_until(3 * kMillisecond + topology_.frequency_domain(kGold).transition_latency_ns);
  EXPECT_EQ(sched_.current_freq_khz(kGold), fmax(kGold));
  run_until(10 * kMillisecond);
  ASSERT_EQ(sched_.task(rt).state, TaskState::kSleeping);
  EXPECT_EQ(sched_.current_freq_khz(kGold), fmin(kGold));
}

TEST(SchedutilRtClampTest, ZeroRtClampLeavesTheFrequencyToUtilisation) {
  // Android's sched_util_clamp_min_rt_default of 0: the same RT wakeup leaves the frequency
  // to the (small) utilisation, and the cluster stays at its lowest point.
  const auto h = std::make_unique<FreqHarness>(Governor::kSchedutil, 0);
  h->run_until(kMillisecond);
  h->spawn(fair_params("fair", 0, only(5)), 10 * kMicrosecond);
  h->run_until(3 * kMillisecond);
  ASSERT_EQ(h->sched().current_freq_khz(kGold), h->fmin(kGold));
  h->spawn(rt_params("rt", 50, only(5)), 500 * kMicrosecond);
  EXPECT_LT(h->sched().cpu_frequency_util(5), 10.0);
  EXPECT_EQ(h->sched().cluster_frequency(kGold).requested_opp, 0);
  h->run_until(3 * kMillisecond + 100 * kMicrosecond);
  EXPECT_EQ(h->sched().current_freq_khz(kGold), h->fmin(kGold));
}

// --- schedutil's boundaries ------------------------------------------------------------------

// The gold cluster made as fast as the prime core (capacity 1024 at 2841.6 MHz) with four
// operating points at which schedutil's target, 1.25 x 2841600 x util / 1024 = 3468.75 x util
// kHz, is exact in doubles: 1776000 kHz at util 512 and 2220000 kHz at util 640.
void round_gold_opps(nlohmann::json& doc) {
  nlohmann::json& gold = doc.at("clusters").at(1);
  gold["max_freq_khz"] = 2841600;
  gold.at("cpufreq")["opps"] = nlohmann::json::array({
      {{"freq_khz", 710400}, {"power", 165}},
      {{"freq_khz", 1776000}, {"power", 500}},
      {{"freq_khz", 2220000}, {"power", 700}},
      {{"freq_khz", 2841600}, {"power", 1022}},
  });
}

// schedutil without a rate limit (every decision point requests) and without util_est (a
// task's utilisation is what set_task_util() gives it).
SchedTunables unlimited_schedutil() {
  SchedTunables tunables = governed(Governor::kSchedutil, 1024, false);
  tunables.schedutil_rate_limit_ns = 0;
  return tunables;
}

// That schedutil on the gold cluster of round_gold_opps().
class SchedutilBoundaryTest : public ::testing::Test, public FreqHarness {
 protected:
  SchedutilBoundaryTest() : FreqHarness(unlimited_schedutil(), round_gold_opps) {}

  // At `time`, the task running on gold CPU 4 gets utilisation `util`, then a task without
  // utilisation woken on CPU `cpu` of the cluster makes schedutil decide. Returns the requested
  // point (the earlier request's if this decision made none). Only at that instant is the
  // utilisation exactly `util`: the hog runs on, and its utilisation grows.
  int decide_at(SimTime time, int hog, double util, int cpu) {
    at(time, [this, hog, util, cpu] {
      sched_.set_task_util(hog, util);
      spawn(fair_params("decider", 0, only(cpu)), 10 * kMicrosecond);
    });
    run_until(time);
    return sched_.cluster_frequency(kGold).requested_opp;
  }
};

TEST_F(SchedutilBoundaryTest, TheEditedGoldClusterIsAsFastAsThePrimeCore) {
  ASSERT_EQ(topology_.capacity(kGold0), 1024);
  ASSERT_EQ(top(kGold), 3);
  EXPECT_EQ(fmax(kGold), 2841600);
}

TEST_F(SchedutilBoundaryTest, ATargetExactlyOnAnOperatingPointRequestsThatPoint) {
  // CPUFREQ_RELATION_L: the lowest point at or above the target. 512 asks for exactly 1776000
  // kHz, point 1; a utilisation a little above it for the next point.
  const int hog = occupy(kGold0, fair_params("hog"));
  EXPECT_EQ(decide_at(kMillisecond, hog, 512, 5), 1);
  EXPECT_EQ(sched_.cpu_frequency_util(kGold0), 512.0);
  EXPECT_EQ(decide_at(2 * kMillisecond, hog, 512.25, 6), 2);
}

TEST_F(SchedutilBoundaryTest, FromTheTopPointATargetExactlyOnThePointBelowRequestsThatPoint) {
  // While the top point is requested, a CPU whose target is above the point below it settles
  // the request (the busiest CPU can only ask for more). A target exactly on that point does
  // not: the request drops to it.
  const int hog = occupy(kGold0, fair_params("hog"));
  const ClusterFrequency& f = sched_.cluster_frequency(kGold);
  ASSERT_EQ(decide_at(kMillisecond, hog, 1024, 5), top(kGold));
  EXPECT_EQ(decide_at(2 * kMillisecond, hog, 640.25, 6), top(kGold));
  EXPECT_EQ(f.last_request, kMillisecond);
  EXPECT_EQ(decide_at(3 * kMillisecond, hog, 640, 5), top(kGold) - 1);
  EXPECT_EQ(f.last_request, 3 * kMillisecond);
}

TEST_F(SchedutilBoundaryTest, AUtilisationAboveTheCapacityAsksForNoMoreThanTheCapacity) {
  // schedutil's utilisation is capped at the CPU's capacity (effective_cpu_util()), so a
  // utilisation above it asks for the top point, not beyond; placement's estimates see the
  // same cap.
  const int hog = occupy(kGold0, fair_params("hog"));
  EXPECT_EQ(decide_at(kMillisecond, hog, 1500, 5), top(kGold));
  EXPECT_EQ(sched_.cpu_util(kGold0), 1500.0);
  EXPECT_EQ(sched_.cpu_frequency_util(kGold0), 1024.0);
  EXPECT_EQ(sched_.frequency_util(kGold0, 2000.0), 1024.0);
  EXPECT_EQ(sched_.frequency_util(kSilver0, 2000.0), topology_.capacity(kSilver0));
}

TEST_F(SchedutilBoundaryTest, ARequestUndoneWithinTheTransitionLatencyChangesNothing) {
  // At 1 ms the cluster (at its lowest point since the boot-time decision) is asked for the
  // top point, and 10 us later, before that takes effect, for the lowest point again. The
  // first change is superseded; the second finds the cluster already there: no frequency
  // change is counted, and the mean frequency is the lowest point's.
  const int hog = occupy(kGold0, fair_params("hog"));
  run_for(domain(kGold).transition_latency_ns);
  ASSERT_EQ(sched_.current_freq_khz(kGold), fmin(kGold));
  const std::uint64_t changes = sched_.frequency_changes();
  EXPECT_EQ(decide_at(kMillisecond, hog, 1024, 5), top(kGold));
  EXPECT_EQ(decide_at(kMillisecond + 10 * kMicrosecond, hog, 0, 6), 0);
  run_until(2 * kMillisecond);
  EXPECT_EQ(sched_.current_freq_khz(kGold), fmin(kGold));
  EXPECT_EQ(sched_.frequency_changes(), changes);
}

TEST(SchedutilSingleOppTest, AClusterWithOneOperatingPointStaysAtIt) {
  // A frequency domain with a single operating point: schedutil has nothing to choose, busy or
  // idle, and never reads a point below it.
  const auto h = std::make_unique<FreqHarness>(unlimited_schedutil(), [](nlohmann::json& doc) {
    doc.at("clusters").at(2).at("cpufreq")["opps"] =
        nlohmann::json::array({{{"freq_khz", 2841600}, {"power", 1022}}});
  });
  ASSERT_EQ(h->top(kPrimeCluster), 0);
  const int hog = h->occupy(kPrime, fair_params("hog"));
  h->sched().set_task_util(hog, 1024);
  h->run_until(20 * kMillisecond);
  EXPECT_EQ(h->sched().cluster_frequency(kPrimeCluster).requested_opp, 0);
  EXPECT_EQ(h->sched().current_freq_khz(kPrimeCluster), 2841600);
  EXPECT_DOUBLE_EQ(h->sched().mean_freq_khz(kPrimeCluster), 2841600.0);
}

// --- execution speed and the fixed governors -----------------------------------------------

// Duration of the second of two back-to-back segments of `work_ref_ns` on gold CPU 4 (the
// second pays no context switch).
SimTime second_segment_ns(Governor governor, std::int64_t work_ref_ns) {
  const auto h = std::make_unique<FreqHarness>(governor);
  const int tid = h->sched().create_task(fair_params("task", 0, only(kGold0)));
  h->owner().repeat(tid, 1, work_ref_ns);
  h->sched().run(tid, work_ref_ns);
  h->sched().wake_new(tid, kGold0);
  h->run_until(100 * kMillisecond);
  const auto dones = h->owner().dones_of(tid);
  EXPECT_EQ(dones.size(), 2U);
  return dones.size() == 2 ? dones[1].time - dones[0].time : 0;
}

TEST(GovernorTest, WorkTakesLongerAtALowerFrequency) {
  // Reference work is defined at a capacity-1024 CPU's top frequency: on gold CPU 4 (872) a
  // segment takes work x 1024 / 872 at the top operating point (performance) and fmax / fmin
  // (2419200 / 710400) times longer at the lowest (powersave).
  const std::int64_t work = kMillisecond;
  const SimTime at_max = second_segment_ns(Governor::kPerformance, work);
  const SimTime at_min = second_segment_ns(Governor::kPowersave, work);
  EXPECT_NEAR(static_cast<double>(at_max), static_cast<double>(work) * 1024.0 / 872.0, 1.0);
  // (The CPU's speed is kept in integers: within a few parts per million.)
  const double expected_at_min = static_cast<double>(work) * 1024.0 / 872.0 * 2419200.0 / 710400.0;
  EXPECT_NEAR(static_cast<double>(at_min), expected_at_min, 1e-5 * expected_at_min);
}

TEST(GovernorTest, PerformanceHoldsTheTopAndPowersaveTheLowestOpp) {
  // The fixed governors never change frequency, whatever runs: busy, periodic and RT tasks
  // on every cluster.
  for (const Governor governor : {Governor::kPerformance, Governor::kPowersave}) {
    const auto h = std::make_unique<FreqHarness>(governor);
    h->occupy(kGold0, fair_params("busy"));
    const int periodic = h->occupy(1, fair_params("periodic"), kMillisecond);
    h->owner().repeat(periodic, 50, kMillisecond);
    h->occupy(kPrime, rt_params("rt", 50), 20 * kMillisecond);
    const auto expected = [&](int cluster) {
      return governor == Governor::kPerformance ? h->fmax(cluster) : h->fmin(cluster);
    };
    int samples = 0;
    for (SimTime t = kMillisecond; t <= 100 * kMillisecond; t += kMillisecond) {
      h->at(t, [&] {
        ++samples;
        for (int cluster : {kSilver, kGold, kPrimeCluster}) {
          EXPECT_EQ(h->sched().current_freq_khz(cluster), expected(cluster)) << cluster;
        }
      });
    }
    h->run_until(100 * kMillisecond);
    EXPECT_EQ(samples, 100);
    EXPECT_EQ(h->sched().frequency_changes(), 0U);
    for (int cluster : {kSilver, kGold, kPrimeCluster}) {
      EXPECT_DOUBLE_EQ(h->sched().mean_freq_khz(cluster), static_cast<double>(expected(cluster)));
    }
  }
}

}  // namespace
}  // namespace bindersim::sched
