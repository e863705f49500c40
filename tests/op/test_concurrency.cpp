// Calls on one instance from several threads (docs/framework.md, The binding group). Run these
// under the tsan preset too.
#include <gtest/gtest.h>

#include <barrier>
#include <latch>
#include <set>
#include <thread>

#include "op/binding.hpp"
#include "toy_ops.hpp"

namespace tileops::optest {
namespace {

constexpr int kThreads = 8;

template <class F>
void on_threads(int n, F&& f) {
  std::vector<std::thread> threads;
  for (int t = 0; t < n; ++t) threads.emplace_back([&f, t] { f(t); });
  for (auto& t : threads) t.join();
}

TEST(Concurrency, FirstCallsRacingToBindAllSucceedAndBindOnce) {
  const std::string name = unique_op("Race");
  const std::string target = unique("race_target");
  auto log = std::make_shared<BuilderLog>();
  register_kernel_builder(name, target, logging_builder(log));
  OpClass& cls = with_selection_table(toy_class(name));
  ToyOp served(cls, {}, Target::named(target));
  ToyOp builtin(cls);
  const int builds = counters().builds.load();
  std::barrier start(kThreads);
  std::atomic<int> ok{0};
  on_threads(kThreads, [&](int) {
    start.arrive_and_wait();
    Tensor a = served(cpu({20}));
    Tensor b = builtin(cpu({20}));
    if (a.shape() == Shape{20} && b.shape() == Shape{20}) ok++;
  });
  EXPECT_EQ(ok.load(), kThreads);
  EXPECT_EQ(served.serving_target(), Target::named(target));
  EXPECT_EQ(log->build_count(), 1);
  EXPECT_EQ(log->run_count(), kThreads);
  EXPECT_EQ(builtin.serving_target(), kBuiltin);
  EXPECT_EQ(counters().builds.load(), builds + 1);  // one entry, built once
  EXPECT_EQ(builtin.built_entries("scale").size(), 1u);
}

TEST(Concurrency, FailingCallsResettingTheBindingWhileOthersCall) {
  ToyOp op(with_selection_table(toy_class(unique_op("Resets"))), {}, std::nullopt,
           [](ToyOp& self, const CallArgs& a) -> CallResult {
             CallResult r = self.compute(a);
             if (a.call.index("N").as_int() == 13) throw std::runtime_error("bad size");
             return r;
           });
  const std::int64_t sizes[] = {4, 20, 200};
  std::atomic<int> wrong{0};
  std::atomic<int> failures{0};
  on_threads(kThreads, [&](int t) {
    for (int i = 0; i < 150; ++i) {
      if (t < 2) {
        op.reset_binding();  // so that the failing call is often the one that selects
        try {
          op(cpu({13}));
        } catch (const std::runtime_error&) {
          failures++;
        }
      } else {
        const std::int64_t n = sizes[(t + i) % 3];
        Tensor y = op(cpu({n}));
        if (y.shape() != Shape{n}) wrong++;
      }
    }
  });
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(failures.load(), 300);
  // Still consistent: a call selects (if it must) and serves.
  op(cpu({20}));
  EXPECT_EQ(op.serving_target(), kBuiltin);
  EXPECT_NE(op.last_call()->index("N").as_int(), 13);
  EXPECT_EQ(op.key_for("scale", scaling(20)), "band");
}

TEST(Concurrency, TargetCallsStayCorrectWhileTheBindingIsReset) {
  // A call runs the target kernel of the binding it read, even when another thread swaps the
  // binding for a fresh, unselected one in between.
  const std::string name = unique_op("TargetResets");
  const std::string target = unique("target_resets");
  auto log = std::make_shared<BuilderLog>();
  register_kernel_builder(name, target, logging_builder(log));
  ToyOp op(with_selection_table(toy_class(name)), {}, Target::named(target));
  std::atomic<int> wrong{0};
  on_threads(kThreads, [&](int t) {
    for (int i = 0; i < 200; ++i) {
      if (t < 2) {
        op.reset_binding();
      } else {
        Tensor y = op(cpu({4 + t}));
        if (y.shape() != Shape{4 + t}) wrong++;
      }
    }
  });
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(log->run_count(), (kThreads - 2) * 200);
  EXPECT_EQ(op.forward_calls(), 0);
}

TEST(Concurrency, LastCallIsOneOfTheCompletedCalls) {
  ToyOp op(with_selection_table(toy_class(unique_op("Last"))), {}, std::nullopt,
           [](ToyOp& self, const CallArgs& a) -> CallResult {
             if (a.call.index("N").as_int() % 2 == 1) throw std::runtime_error("odd sizes fail");
             return self.compute(a);
           });
  std::atomic<bool> seen_odd{false};
  on_threads(kThreads, [&](int t) {
    for (int i = 0; i < 100; ++i) {
      const std::int64_t n = 2 + t * 2 + (i % 2);  // even succeed, odd fail
      try {
        op(cpu({n}));
      } catch (const std::runtime_error&) {
      }
      if (op.last_call()->index("N").as_int() % 2 == 1) seen_odd = true;
    }
  });
  EXPECT_FALSE(seen_odd.load());
  const std::int64_t last = op.last_call()->index("N").as_int();
  EXPECT_TRUE(last >= 2 && last <= 2 * kThreads && last % 2 == 0) << last;
}

TEST(Concurrency, CallStackIsThreadLocal) {
  // Thread A's composite call waits inside forward while thread B calls A's held sub-op on its
  // own; B's call must not be filed under A's call.
  std::latch entered(1);
  std::latch released(1);
  ToyOp parent(composite_class(unique_op("Stack")), {}, std::nullopt,
               [&](ToyOp& self, const CallArgs& a) -> CallResult {
                 entered.count_down();
                 released.wait();
                 self.hold<ToySubOp>("first", Identity())(a.input(0));
                 return {self.output(a, 0)};
               });
  ToySubOp& sub = parent.hold<ToySubOp>("first", Identity());
  std::thread a([&] { parent(cpu({4})); });
  entered.wait();
  std::thread b([&] {
    for (int i = 0; i < 5; ++i) sub(cpu({8}));
  });
  b.join();
  released.count_down();
  a.join();
  const auto& stages = parent.last_call()->stages();
  ASSERT_EQ(stages[0].second.size(), 1u);
  EXPECT_EQ(stages[0].second[0]->index("N").as_int(), 4);
  EXPECT_TRUE(stages[1].second.empty());
}

TEST(Concurrency, ParallelCompositeCallsFileTheirOwnSubCalls) {
  ToyOp parent(composite_class(unique_op("Parallel")), {}, std::nullopt,
               [](ToyOp& self, const CallArgs& a) {
                 return through(self, a, {"first", "second", "second"});
               });
  std::atomic<int> wrong{0};
  on_threads(kThreads, [&](int t) {
    for (int i = 0; i < 50; ++i) parent(cpu({1 + t}));
  });
  // Each record holds exactly its own three sub-calls, of its own size.
  auto rec = parent.last_call();
  const std::int64_t n = rec->index("N").as_int();
  ASSERT_EQ(rec->stages()[0].second.size(), 1u);
  ASSERT_EQ(rec->stages()[1].second.size(), 2u);
  for (const auto& [stage, calls] : rec->stages())
    for (const auto& c : calls)
      if (c->index("N").as_int() != n) wrong++;
  EXPECT_EQ(wrong.load(), 0);
}

TEST(Concurrency, TuningRequestedWhileEntriesAreBeingBuiltReachesEveryEntry) {
  ToyOp op(toy_class(unique_op("TuneRace"))
               .interface<Scaling>("scale")
               .kernel<AnyDeviceKernel>("any_device"));
  std::barrier start(kThreads + 1);
  std::thread tuner([&] {
    start.arrive_and_wait();
    op.request_tune();
  });
  on_threads(kThreads, [&](int t) {
    start.arrive_and_wait();
    for (int i = 0; i < 40; ++i) op.kernel_for<Scaling>(scaling((t * 40 + i) * 10));
  });
  tuner.join();
  const auto built = op.built_entries("scale");
  EXPECT_EQ(built.size(), static_cast<std::size_t>(kThreads * 40));
  int untuned = 0;
  for (const auto& e : built) {
    auto entry = std::dynamic_pointer_cast<FakeEntry>(e.entry);
    ASSERT_NE(entry, nullptr);
    if (entry->tunes.load() != 1) untuned++;
  }
  EXPECT_EQ(untuned, 0);
}

TEST(Concurrency, KernelForHitsStayRightWhileNewSpecsGrowTheTable) {
  // Hits read the call-spec table without a lock (Note [Lock-free entry table]) while writers add
  // thousands of distinct specs, each with an entry of its own, so the table grows many times
  // under the readers.
  ToyOp op(toy_class(unique_op("HitRace"))
               .interface<Scaling>("scale")
               .kernel<AnyDeviceKernel>("any_device"));
  constexpr int kWriters = 2;
  constexpr int kSpecsPerWriter = 1500;
  constexpr int kHot = 8;
  auto n_of = [](int writer, int k) {
    return static_cast<std::int64_t>(kHot + writer * kSpecsPerWriter + k) * 10;
  };
  std::vector<std::shared_ptr<Scaling>> hot;
  for (int h = 0; h < kHot; ++h) hot.push_back(op.kernel_for<Scaling>(scaling(h * 10)));
  // What each writer got for its k-th spec, and how many of its specs it has published so far.
  std::vector<std::vector<std::atomic<const Scaling*>>> got;
  for (int w = 0; w < kWriters; ++w) got.emplace_back(kSpecsPerWriter);
  std::atomic<int> published[kWriters] = {};
  std::atomic<int> writing{kWriters};
  std::atomic<int> wrong{0};
  std::atomic<long> reader_hits{0};
  std::barrier start(kThreads);
  on_threads(kThreads, [&](int t) {
    start.arrive_and_wait();
    if (t < kWriters) {
      for (int k = 0; k < kSpecsPerWriter; ++k) {
        std::shared_ptr<Scaling> e = op.kernel_for<Scaling>(scaling(n_of(t, k)));
        auto entry = std::dynamic_pointer_cast<FakeEntry>(e);
        if (!entry || entry->call.n != n_of(t, k)) wrong++;
        got[t][k].store(e.get(), std::memory_order_relaxed);
        published[t].store(k + 1, std::memory_order_release);
      }
      writing--;
      return;
    }
    long hits = 0;
    for (unsigned i = static_cast<unsigned>(t); writing.load() > 0 || hits < 1000; ++i) {
      const int h = static_cast<int>(i % kHot);
      if (op.kernel_for<Scaling>(scaling(h * 10)) != hot[h]) wrong++;
      const int w = static_cast<int>(i % kWriters);
      const int n = published[w].load(std::memory_order_acquire);
      if (n > 0) {
        const int k = static_cast<int>((i * 2654435761u) % static_cast<unsigned>(n));
        std::shared_ptr<Scaling> e = op.kernel_for<Scaling>(scaling(n_of(w, k)));
        if (e.get() != got[w][k].load(std::memory_order_relaxed)) wrong++;
      }
      hits += 2;
    }
    reader_hits += hits;
  });
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GT(reader_hits.load(), 0);
  EXPECT_EQ(op.built_entries("scale").size(),
            static_cast<std::size_t>(kHot + kWriters * kSpecsPerWriter));
  for (int w = 0; w < kWriters; ++w)
    for (int k = 0; k < kSpecsPerWriter; ++k)
      ASSERT_EQ(op.kernel_for<Scaling>(scaling(n_of(w, k))).get(), got[w][k].load())
          << w << " " << k;
}

TEST(Concurrency, HitsAndCallsStayRightWhileGroupsAreRetiredAndFreed) {
  // Resets retire groups that other threads are reading (kernel_for hits, calls) and free those
  // no running call may still be inside (Note [Binding reclamation]); run under ASan and TSan.
  ToyOp op(with_selection_table(toy_class(unique_op("Reclaimed"))));
  std::atomic<int> wrong{0};
  std::barrier start(kThreads);
  on_threads(kThreads, [&](int t) {
    start.arrive_and_wait();
    for (int i = 0; i < 400; ++i) {
      if (t < 2) {
        op.reset_binding();
      } else if (t < 5) {
        if (op.kernel_for<Scaling>(scaling(20 + t))->key() != "band") wrong++;
      } else {
        Tensor y = op(cpu({4 + t}));
        if (y.shape() != Shape{4 + t}) wrong++;
      }
    }
  });
  EXPECT_EQ(wrong.load(), 0);
  op.reset_binding();  // no call runs any more: every retired group is freed
  EXPECT_EQ(detail::Binding::retired_count(op), 0u);
}

// See Note [Dispatch sink removal]: sinks come and go while other threads select; a sink runs on
// one thread at a time, and once removed it hears nothing more.
TEST(Concurrency, DispatchSinksAddedAndRemovedWhileThreadsSelect) {
  ToyOp op(with_selection_table(toy_class(unique_op("Sinks"))));
  std::atomic<int> selections{0};
  std::atomic<bool> stop{false};
  int heard_after_removal = 0;  // only the sink writes it, and calls to one sink are serialised
  on_threads(kThreads, [&](int t) {
    if (t == 0) {
      // At least 200 rounds, and on until the other threads have selected: under TSan on a busy
      // machine they may not have started within 200 rounds.
      for (int i = 0; i < 200 || selections.load() == 0; ++i) {
        bool removed = false;
        const DispatchSinkId id = add_dispatch_sink([&](const DispatchEvent&) {
          if (removed) ++heard_after_removal;
        });
        std::this_thread::yield();
        remove_dispatch_sink(id);
        removed = true;  // read by the sink only if it were still called
      }
      stop = true;
      return;
    }
    // Each call spec is new, so every kernel_for misses and selects.
    for (std::int64_t n = 1000 * t; !stop.load(); ++n) {
      op.kernel_for<Scaling>(scaling(n));
      selections++;
    }
  });
  EXPECT_EQ(heard_after_removal, 0);
  EXPECT_GT(selections.load(), 0);
}

}  // namespace
}  // namespace tileops::optest
