// A batch on Slurm (grader/platforms/slurm.h): shares, tasks, sbatch's output, the
// array task's script. The real cluster: tests/slurm/test_slurm.py.
#include <set>
#include <string>

#include "cudalab/catch.h"
#include "platforms/slurm.h"

using namespace cudalab;

TEST_CASE("--shard I/N takes share I of N, from 0", "[slurm][grader]") {
  Shard s;
  std::string error;
  REQUIRE(parse_shard("2/5", s, error));
  CHECK(s.index == 2);
  CHECK(s.count == 5);
  for (const char* bad : {"5/5", "1", "a/2", "1/0", "-1/3", "1/2/3", "", "/3"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_shard(bad, s, error));
    CHECK(error.find("expected I/N") != std::string::npos);
  }
}

TEST_CASE("the shares of a batch cover every submission once, in contiguous runs of nearly equal size",
          "[slurm][grader]") {
  for (std::size_t total : {0u, 1u, 7u, 10u, 23u}) {
    for (std::size_t n : {1u, 2u, 3u, 10u, 30u}) {
      std::set<std::size_t> seen;
      std::size_t next = 0, smallest = total, largest = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const auto [first, last] = shard_range(total, Shard{i, n});
        CHECK(first == next);  // contiguous, in order
        next = last;
        smallest = std::min(smallest, last - first);
        largest = std::max(largest, last - first);
        for (std::size_t k = first; k < last; ++k) CHECK(seen.insert(k).second);
      }
      CHECK(seen.size() == total);
      CHECK(largest - std::min(smallest, largest) <= 1);
    }
  }
}

TEST_CASE("a batch becomes one array task per chunk, at least one", "[slurm][grader]") {
  CHECK(slurm_tasks(200, 10) == 20);
  CHECK(slurm_tasks(201, 10) == 21);
  CHECK(slurm_tasks(3, 2) == 2);
  CHECK(slurm_tasks(1, 10) == 1);
  CHECK(slurm_tasks(5, 0) == 5);  // a chunk of 0 counts as 1
}

TEST_CASE("sbatch --parsable's job id, with or without the cluster's name", "[slurm][grader]") {
  CHECK(sbatch_job_id("1234\n") == "1234");
  CHECK(sbatch_job_id("1234;cluster\n") == "1234");
  CHECK(sbatch_job_id("sbatch: error: Batch job submission failed") == "");
  CHECK(sbatch_job_id("") == "");
}

TEST_CASE("the array task's script grades its share in its own slots, its words quoted", "[slurm][grader]") {
  CHECK(shell_quote("/srv/course/build/grader/cudalab") == "/srv/course/build/grader/cudalab");
  CHECK(shell_quote("it's here") == "'it'\\''s here'");
  CHECK(shell_quote("") == "''");
  const std::string script =
      slurm_task_script({"/c/cudalab", "grade", "--batch", "/sub mits", "--out", "/res"}, "/w", 20);
  CHECK(script.rfind("#!/bin/sh\n", 0) == 0);
  CHECK(script.find(
            "exec /c/cudalab grade --batch '/sub mits' --out /res --shard \"$task/20\" --work-dir /w\n") !=
        std::string::npos);
  CHECK(script.find("SLURM_ARRAY_TASK_ID:?") != std::string::npos);
}
