// The printer and the reader together: every example reads, prints and reads back to the same
// program; the printer's text for each attribute form; mutated examples only raise vf::Error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "frontend/trace_reader.h"
#include "ir/print_trace.h"

namespace vf {
namespace {

std::filesystem::path source_dir() {
  if (const char* env = std::getenv("VF_SOURCE_DIR")) return env;
  return VF_SOURCE_DIR;
}

std::vector<std::filesystem::path> example_files() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(source_dir() / "examples"))
    if (entry.path().extension() == ".py") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string describe_operand(const Value* v) {
  return v->is_constant() ? "const " + scalar_to_python(*v->constant) : v->name + ":" + v->type_string();
}

// Asserts two fusions are the same program: inputs, nodes (op, attributes, operands, results) and outputs.
void expect_same_program(const Fusion& a, const Fusion& b) {
  ASSERT_EQ(a.inputs().size(), b.inputs().size());
  for (size_t i = 0; i < a.inputs().size(); ++i)
    EXPECT_EQ(describe_operand(a.inputs()[i]), describe_operand(b.inputs()[i]));
  ASSERT_EQ(a.nodes().size(), b.nodes().size());
  for (size_t n = 0; n < a.nodes().size(); ++n) {
    const Node& x = *a.nodes()[n];
    const Node& y = *b.nodes()[n];
    EXPECT_EQ(x.op, y.op) << "node " << n;
    EXPECT_TRUE(x.attrs == y.attrs) << "node " << n << " (" << op_name(x.op) << ")";
    ASSERT_EQ(x.inputs.size(), y.inputs.size());
    for (size_t i = 0; i < x.inputs.size(); ++i)
      EXPECT_EQ(describe_operand(x.inputs[i]), describe_operand(y.inputs[i])) << "node " << n;
    ASSERT_EQ(x.outputs.size(), y.outputs.size());
    for (size_t i = 0; i < x.outputs.size(); ++i)
      EXPECT_EQ(describe_operand(x.outputs[i]), describe_operand(y.outputs[i])) << "node " << n;
  }
  ASSERT_EQ(a.outputs().size(), b.outputs().size());
  for (size_t i = 0; i < a.outputs().size(); ++i) EXPECT_EQ(a.outputs()[i]->name, b.outputs()[i]->name);
}

TEST(RoundTrip, EveryExample_PrintsAndReadsBackEqual) {
  std::vector<std::filesystem::path> files = example_files();
  ASSERT_GE(files.size(), 9u);
  for (const auto& path : files) {
    SCOPED_TRACE(path.filename().string());
    Fusion first = read_trace_file(path.string());
    EXPECT_FALSE(first.nodes().empty());
    EXPECT_FALSE(first.outputs().empty());
    std::string text1 = print_trace(first);
    Fusion second = read_trace(text1, "printed");
    std::string text2 = print_trace(second);
    EXPECT_EQ(text1, text2);
    expect_same_program(first, second);
  }
}

TEST(RoundTrip, SeedExample_MatchesTheIssue) {
  Fusion f = read_trace_file((source_dir() / "examples" / "seed_permute_reshape.py").string());
  EXPECT_EQ(print_trace(f),
            "def computation(t_2):\n"
            "  # t_2: \"cpu f32[2, 16, 8, 16]\"\n"
            "  t1 = prims.transpose(t_2, (0, 2, 1, 3))  # t1: \"cpu f32[2, 8, 16, 16]\"\n"
            "  t3 = prims.reshape(t1, (2, 8, 256))  # t3: \"cpu f32[2, 8, 256]\"\n"
            "  return t3\n");
}

TEST(PrintTrace, AttributeForms_SpelledAsPrims) {
  Fusion f;
  Value* x = f.add_tensor_input("x", DType::BFloat16, {2, 3});
  Value* s = f.add_scalar_input("s", ScalarKind::Float);
  Value* c = f.add_node(OpKind::ConvertElementType, {x}, CastAttrs{DType::Float32}, {"c"}).at(0);
  Value* p = f.add_node(OpKind::Pad, {c, f.add_constant(Scalar::from_float(0.1))},
                        PadAttrs{{PadDim{0, 0, 0}, PadDim{1, -1, 2}}}, {"p"}).at(0);
  const auto& vm = f.add_node(OpKind::VarMean, {p}, VarAttrs{{1}, 0}, {"v", "m"});
  Value* full = f.add_node(OpKind::Full, {}, FullAttrs{{2}, Scalar::from_float(-0.0), DType::Float32}, {"z"}).at(0);
  Value* iota = f.add_node(OpKind::Iota, {}, IotaAttrs{2, -1, 3, DType::Int32}, {"i"}).at(0);
  Value* sum = f.add_node(OpKind::Add, {vm[1], f.add_constant(Scalar::from_float(1.0 / 3))}, NoAttrs{}, {"a"}).at(0);
  Value* mul = f.add_node(OpKind::Mul, {sum, s}, NoAttrs{}, {"b"}).at(0);
  Value* cat = f.add_node(OpKind::Cat, {mul, full}, AxisAttrs{0}, {"k"}).at(0);
  f.add_output(cat);
  f.add_output(iota);
  std::string text = print_trace(f, "g");
  EXPECT_EQ(text,
            "def g(x, s):\n"
            "  # x: \"cpu bf16[2, 3]\"\n"
            "  # s: \"float\"\n"
            "  c = prims.convert_element_type(x, dtypes.float32)  # c: \"cpu f32[2, 3]\"\n"
            "  p = prims.pad(c, 0.1, ((0, 0, 0), (1, -1, 2)))  # p: \"cpu f32[2, 7]\"\n"
            "  (v, m) = prims.var_mean(p, (1,), correction=0)\n"
            "  z = prims.full((2,), -0.0, device=devices.Device(\"cpu\"), dtype=dtypes.float32)  # z: \"cpu f32[2]\"\n"
            "  i = prims.iota(2, start=-1, step=3, device=devices.Device(\"cpu\"), dtype=dtypes.int32)  # i: \"cpu i32[2]\"\n"
            "  a = prims.add(m, 0.3333333333333333)  # a: \"cpu f32[2]\"\n"
            "  b = prims.mul(a, s)  # b: \"cpu f32[2]\"\n"
            "  k = prims.cat([b, z], 0)  # k: \"cpu f32[4]\"\n"
            "  return (k, i)\n");
  Fusion back = read_trace(text);
  expect_same_program(f, back);
  EXPECT_EQ(back.nodes()[5]->inputs[1]->constant->f, 1.0 / 3);
  EXPECT_TRUE(std::signbit(back.nodes()[3]->attr<FullAttrs>().value.f));
}

TEST(PrintTrace, UniformPhilox_SeedAndOffsetAsKeywords) {
  Fusion f;
  Value* seed = f.add_scalar_input("seed", ScalarKind::Int);
  Value* u = f.add_node(OpKind::UniformPhilox, {seed, f.add_constant(Scalar::from_int(4))},
                        UniformAttrs{{2, 3}, -0.5, 2.0, DType::BFloat16}, {"u"}).at(0);
  f.add_output(u);
  const std::string text = print_trace(f, "g");
  EXPECT_EQ(text,
            "def g(seed):\n"
            "  # seed: \"int\"\n"
            "  u = prims.uniform_philox((2, 3), -0.5, 2.0, device=devices.Device(\"cpu\"), dtype=dtypes.bfloat16, "
            "seed=seed, offset=4)  # u: \"cpu bf16[2, 3]\"\n"
            "  return u\n");
  Fusion back = read_trace(text);
  expect_same_program(f, back);
}

TEST(PrintTrace, SpecialFloats_RoundTripExactly) {
  for (double v : {5e-324, 1.7976931348623157e308, -2.5e-10, 0.1 + 0.2, std::nan(""), -HUGE_VAL}) {
    Fusion f;
    Value* x = f.add_tensor_input("x", DType::Float64, {1});
    f.add_output(f.add_node(OpKind::Add, {x, f.add_constant(Scalar::from_float(v))}, NoAttrs{}, {"y"}).at(0));
    Fusion back = read_trace(print_trace(f));
    EXPECT_EQ(*back.nodes()[0]->inputs[1]->constant, Scalar::from_float(v)) << v;
  }
}

TEST(ReaderFuzz, MutatedExamples_OnlyVfErrors) {
  std::vector<std::string> texts;
  for (const auto& path : example_files()) texts.push_back(read_text(path));
  ASSERT_FALSE(texts.empty());
  std::mt19937 rng(20240531);
  const std::string alphabet = "()[]{},:=#\"'0123456789.-e_ \n\\xtprims";
  int accepted = 0, rejected = 0;
  for (int iter = 0; iter < 2000; ++iter) {
    std::string text = texts[rng() % texts.size()];
    int mutations = 1 + static_cast<int>(rng() % 4);
    for (int m = 0; m < mutations && !text.empty(); ++m) {
      size_t at = rng() % text.size();
      switch (rng() % 3) {
        case 0: text.erase(at, 1 + rng() % 3); break;
        case 1: text.insert(at, text.substr(at, 1 + rng() % 8)); break;
        default: text.insert(text.begin() + static_cast<std::ptrdiff_t>(at), alphabet[rng() % alphabet.size()]); break;
      }
    }
    try {
      Fusion f = read_trace(text, "fuzz.py");
      print_trace(f);
      ++accepted;
    } catch (const Error&) {
      ++rejected;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "non-vf exception " << e.what() << " for:\n" << text;
    }
  }
  EXPECT_GT(rejected, 0);
  EXPECT_GT(accepted, 0);
}

}  // namespace
}  // namespace vf
