// What a graded student object may call, and which includes it may use.
#include "cudalab/catch.h"
#include "policy.h"

using namespace cudalab;

TEST_CASE("The calls a kernel launcher needs are allowed") {
  const std::vector<std::string> ok = {
      "cudaLaunchKernel",
      "__cudaPushCallConfiguration",
      "__cudaRegisterFatBinary",
      "cudaGetLastError",
      "cudaFuncSetAttribute",
      "printf",
      "memset",
      "sqrtf",
      "_Znwm",
      "_ZdlPvm",
      "__cxa_throw",
      "_ZN7cudalab15not_implementedEPKcS1_i",
      "_ZNSt6vectorIfSaIfEE17_M_realloc_insertIJRKfEEEvN9__gnu_cxx17__normal_iteratorIPfS1_EEDpOT_"};
  CHECK(check_symbols(ok, {}).empty());
}

TEST_CASE("Calls into the reference, cuBLAS and the system are refused with the symbol named") {
  const auto v =
      check_symbols({"fopen", "_ZN3ref12matmul_tiledEPKfS1_Pfiii", "cublasSgemm_v2", "cudaDeviceReset"}, {});
  REQUIRE(v.size() == 4);
  // The most telling reasons first.
  CHECK_THAT(v[0].symbol, Catch::Contains("ref::matmul_tiled"));
  CHECK_THAT(v[0].why, Catch::Contains("reference solution"));
  CHECK(v[1].symbol == "cublasSgemm_v2");
  CHECK_THAT(v[1].why, Catch::Contains("cuBLAS"));
  CHECK_THAT(v[2].why, Catch::Contains("reset or reconfigure the GPU"));
  CHECK(v[3].symbol == "fopen");
  CHECK_THAT(v[3].why, Catch::Contains("file, process and network calls are not allowed"));
}

TEST_CASE("Thrust is named as such, not by the many calls its headers make") {
  const auto v =
      check_symbols({"dlopen", "cudaSetDevice", "getenv"}, {"_ZN6thrust6detail6vectorIfE6resizeEm"});
  REQUIRE(v.size() == 1);
  CHECK_THAT(v[0].why, Catch::Contains("Thrust"));
}

TEST_CASE("Including the course's own files is refused, its public headers are not") {
  const auto bad = forbidden_includes(
      {"/course/labs/03_tiling/matmul_tiled.cu", "/usr/include/stdio.h",
       "/course/harness/include/cudalab/lab.cuh", "/course/solutions/03_tiling/matmul_tiled.cu"},
      "/course", "/course/labs/03_tiling");
  REQUIRE(bad.size() == 1);
  CHECK(bad[0] == "solutions/03_tiling/matmul_tiled.cu");
}
