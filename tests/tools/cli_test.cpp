// The command-line tool end to end: exit codes, messages, and --check on the examples.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/wait.h>

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

struct Result {
  int status = -1;
  std::string output;  // stdout and stderr together
};

Result run_tool(const std::string& args) {
  std::string cmd = std::string(VF_TOOL_PATH) + " " + args + " 2>&1";
  Result r;
  FILE* pipe = popen(cmd.c_str(), "r");
  std::array<char, 4096> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), pipe)) r.output.append(buf.data(), n);
  int raw = pclose(pipe);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return r;
}

std::string example(const char* name) { return (fs::path(VF_SOURCE_DIR) / "examples" / name).string(); }

fs::path write_temp(const std::string& name, const std::string& text) {
  fs::path p = fs::temp_directory_path() / name;
  std::ofstream(p) << text;
  return p;
}

TEST(Cli, RunSeedWithCheck_ExitsZero) {
  Result r = run_tool("run " + example("seed_permute_reshape.py") + " --check");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("check: ok"));
  EXPECT_THAT(r.output, HasSubstr("1 kernel launch(es), 16384 bytes allocated"));
}

TEST(Cli, RunWithBookend_ReportsTwoKernels) {
  Result r = run_tool("run " + (fs::path(VF_SOURCE_DIR) / "tests/segment/golden/compute_then_merge_heads.py").string() +
                      " --check --bookend");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("2 kernel launch(es), 8192 bytes allocated"));
}

TEST(Cli, ExplainJson_HasTheSchemaKeys) {
  Result r = run_tool("explain " + example("seed_permute_reshape.py") + " --json");
  EXPECT_EQ(r.status, 0) << r.output;
  for (const char* key : {"\"bookend\"", "\"kernels\"", "\"allocated_bytes\"", "\"peak_bytes\"", "\"outputs\"",
                          "\"segments\"", "\"view_ops\"", "\"alias_of\"", "\"decision\""})
    EXPECT_THAT(r.output, HasSubstr(key));
}

TEST(Cli, MalformedTrace_ExitsTwoWithFileLineColumn) {
  fs::path p = write_temp("vf_cli_bad.py", "def f(x):\n  # x: \"cpu f32[2]\"\n  t0 = prims.nosuchop(x)\n  return t0\n");
  Result r = run_tool("run " + p.string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr(p.string() + ":3:"));
  EXPECT_THAT(r.output, HasSubstr("error:"));
  EXPECT_THAT(r.output, HasSubstr("nosuchop"));
}

TEST(Cli, CodegenKernelIr_PrintsIrAndTheTargetsSchedule) {
  Result cuda = run_tool("codegen " + example("seed_permute_reshape.py") + " --target cuda --kernel-ir");
  EXPECT_EQ(cuda.status, 0) << cuda.output;
  EXPECT_THAT(cuda.output, HasSubstr("nest #0 pointwise over out0"));
  EXPECT_THAT(cuda.output, HasSubstr("= load f32 in0"));
  EXPECT_THAT(cuda.output, HasSubstr("schedule cuda: 32-bit index math, blocks of 128 threads"));
  EXPECT_THAT(cuda.output, HasSubstr("nest #0 row-vector: packs of 4"));
  EXPECT_THAT(cuda.output, Not(HasSubstr("__global__")));
  Result cpu = run_tool("codegen " + example("seed_permute_reshape.py") + " --kernel-ir");
  EXPECT_THAT(cpu.output, HasSubstr("schedule cpu: 64-bit index math"));
  EXPECT_EQ(run_tool("codegen " + example("seed_permute_reshape.py") + " --kernel-ir --specialize").status, 2);
}

TEST(Cli, EmptyTrace_ExitsTwoAtLineOne) {
  fs::path p = write_temp("vf_cli_empty.py", "");
  for (const char* command : {"run ", "explain ", "codegen "}) {
    Result r = run_tool(command + p.string());
    EXPECT_EQ(r.status, 2) << command << r.output;
    EXPECT_THAT(r.output, HasSubstr(p.string() + ":1:1: error: expected a function"));
  }
}

TEST(Cli, MissingFile_ExitsTwo) {
  Result r = run_tool("explain /nonexistent/trace.py");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("/nonexistent/trace.py"));
}

TEST(Cli, UnknownDevice_ExitsTwo) {
  Result r = run_tool("run " + example("seed_permute_reshape.py") + " --device tpu");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--device"));
}

TEST(Cli, CodegenCpu_PrintsTheKernel) {
  Result r = run_tool("codegen " + example("transpose_add.py") + " --target cpu");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("segment #0"));
  EXPECT_THAT(r.output, HasSubstr("extern \"C\""));
}

}  // namespace
