// The CUDA source of a saxpy kernel (y = a * x + y over n floats) that the runtime tests compile.
#pragma once

namespace vf::test {

inline constexpr const char* kSaxpy = R"(
struct SaxpyArgs { const float* x; float* y; float a; long long n; };
extern "C" __global__ void vf_test_saxpy(SaxpyArgs args) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < args.n) args.y[i] = args.a * args.x[i] + args.y[i];
}
)";

}  // namespace vf::test
