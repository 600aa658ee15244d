// The trace reader on malformed traces: every error is a TraceError with its line, column and a
// message saying what was expected and what was found.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "frontend/trace_reader.h"

namespace vf {
namespace {

using ::testing::HasSubstr;

struct BadTrace {
  const char* name;
  std::string text;
  int line;
  int column;
  const char* message;
};

// Two-line header: `def f(x):` and x's annotation; the statement under test is on line 3.
std::string with_x(const std::string& body) { return "def f(x):\n  # x: \"cpu f32[2, 3]\"\n" + body; }

// Three-line header: x and an int64 index i [2, 4]; the statement under test is on line 4.
std::string with_i(const std::string& body) {
  return "def f(x, i):\n  # x: \"cpu f32[2, 3]\"\n  # i: \"cpu i64[2, 4]\"\n" + body;
}

std::vector<BadTrace> bad_traces() {
  std::string deep = "  y = prims.neg(" + std::string(200, '(') + "x" + std::string(200, ')') + ")\n";
  return {
      {"UnknownPrim", with_x("  y = prims.convolution(x, x)\n  return y\n"), 3, 7, "unsupported op 'prims.convolution'"},
      {"MatmulMixedDtypes", with_i("  y = prims.matmul(x, i)\n  return y\n"), 4, 7,
       "prims.matmul(x: f32[2, 3], i: i64[2, 4]): operands must have one dtype, got f32 and i64"},
      {"LinearBiasShape", with_x("  y = ltorch.linear(x, x, x)\n  return y\n"), 3, 27,
       "ltorch.linear: expected a bias of shape [2], got f32[2, 3]"},
      {"UnknownTorchOp", with_x("  y = torch.nn.functional.linear(x, x)\n  return y\n"), 3, 7,
       "unsupported op 'torch.nn.functional.linear'"},
      {"PrimsIndexPut", with_x("  y = prims.index_put(x, x, x, 0)\n  return y\n"), 3, 7, "unsupported op 'prims.index_put'"},
      {"IndexAdd2dIndex", with_x("  y = prims.index_add(x, x, x, 0)\n  return y\n"), 3, 26,
       "prims.index_add: expected a 0-D or 1-D index, got f32[2, 3]"},
      {"ScatterAddFloatIndex", with_x("  y = prims.scatter_add(x, x, x, 0)\n  return y\n"), 3, 7,
       "the index must have an integer dtype, got f32"},
      {"ScatterAddIndexWiderThanSource", with_i("  y = prims.scatter_add(x, i, x, 1)\n  return y\n"), 4, 7,
       "the index's shape [2, 4] exceeds src's [2, 3] in dim 1"},
      {"EmbeddingBackwardScaleByFreq",
       with_i("  y = ltorch.embedding_backward(x, i, 10, -1, True, False)\n  return y\n"), 4, 47,
       "scale_grad_by_freq=True is not supported"},
      {"EmbeddingBackwardIndexShape",
       with_i("  y = prims.embedding_backward(x, i, 10, -1, False, False)\n  return y\n"), 4, 35,
       "expected indices of shape [2] (grad f32[2, 3] without its last dim), got i64[2, 4]"},
      {"CumsumDimOutOfRange", with_x("  y = ltorch.cumsum(x, 2)\n  return y\n"), 3, 7,
       "prims.cumsum(x: f32[2, 3]): dim 2 is out of range for a tensor of rank 2"},
      {"CumsumToBool", with_x("  y = torch.cumsum(x, 0, dtype=dtypes.bool8)\n  return y\n"), 3, 32,
       "torch.cumsum: expected a numeric dtype, got b8"},
      {"CumsumWithoutDim", with_x("  y = prims.cumsum(x)\n  return y\n"), 3, 7,
       "prims.cumsum: missing argument 'dim' (expected 2 argument(s): a, dim), got 1"},
      {"FrexpOfIntegers", with_i("  (m, e) = prims.frexp(i)\n  return m\n"), 4, 12,
       "prims.frexp_mantissa(i: i64[2, 4]): expects a floating dtype, got i64"},
      {"FrexpOneTarget", with_x("  y = prims.frexp(x)\n  return y\n"), 3, 3,
       "the right of '=' gives 2 value(s) but 1 name(s) are assigned"},
      {"TakeFloatIndex", with_x("  y = prims.take(x, x, 0)\n  return y\n"), 3, 7,
       "the index must have an integer dtype, got f32"},
      {"NllLossBackwardReduction", with_x("  y = ltorch.nll_loss_backward(x, x, x, None, 'avg', -1, x)\n  return y\n"), 3,
       47, "ltorch.nll_loss_backward: expected reduction 'none', 'sum' or 'mean', got 'avg'"},
      {"UniformPhiloxNoSeed",
       with_x("  y = prims.uniform_philox((2,), 0.0, 1.0, device=devices.Device('cpu'), dtype=dtypes.float32)\n"
              "  return y\n"),
       3, 7, "prims.uniform_philox: expected the seed= and offset= arguments"},
      {"UniformPhiloxFloatSeed",
       with_x("  y = prims.uniform_philox((2,), 0.0, 1.0, device=devices.Device('cpu'), dtype=dtypes.float32, "
              "seed=1.5, offset=0)\n  return y\n"),
       3, 7, "seed must be an int scalar, got a float"},
      {"UniformPhiloxEmptyRange",
       with_x("  y = prims.uniform_philox((2,), 1.0, 1.0, device=devices.Device('cpu'), dtype=dtypes.float32, "
              "seed=1, offset=0)\n  return y\n"),
       3, 7, "minval must be less than maxval, both finite, got minval 1 and maxval 1"},
      {"UniformPhiloxIntDtype",
       with_x("  y = prims.uniform_philox((2,), 0.0, 1.0, device=devices.Device('cpu'), dtype=dtypes.int64, "
              "seed=1, offset=0)\n  return y\n"),
       3, 7, "dtype must be a floating type, got i64"},
      {"NextafterHalf", "def f(x):\n  # x: \"cpu bf16[2, 3]\"\n  y = prims.nextafter(x, x)\n  return y\n", 3, 7,
       "expects f32 or f64 (the next value of a 16-bit float is not supported), got bf16"},
      {"ShiftOfFloats", with_x("  y = prims.bitwise_left_shift(x, x)\n  return y\n"), 3, 7,
       "prims.bitwise_left_shift(x: f32[2, 3], x: f32[2, 3]): expects an integer dtype, got f32"},
      {"ShiftOfBools", "def f(b):\n  # b: \"cpu b8[2]\"\n  y = prims.bitwise_right_shift(b, b)\n  return y\n", 3, 7,
       "expects a numeric dtype, got b8 (convert it first)"},
      {"MissingAnnotation", "def f(x, w):\n  # x: \"cpu f32[2]\"\n  return x\n", 1, 10,
       "argument 'w' has no annotation"},
      {"AnnotationShapeMismatch", with_x("  y = prims.neg(x)  # y: \"cpu f32[2, 4]\"\n  return y\n"), 3, 27,
       "annotation of 'y' expects f32[2, 4] but f32[2, 3] was inferred"},
      {"AnnotationDTypeMismatch", with_x("  y = prims.neg(x)  # y: \"cpu f64[2, 3]\"\n  return y\n"), 3, 27,
       "expects f64[2, 3] but f32[2, 3] was inferred"},
      {"ViewKeyword", with_x("  y = Tensor.view(x, 6, bad=1)\n  return y\n"), 3, 29, "unexpected keyword argument 'bad'"},
      {"TooManyArgs", with_x("  y = prims.add(x, x, x)\n  return y\n"), 3, 23,
       "prims.add: takes at most 2 argument(s) (a, b), got 3"},
      {"MissingArg", with_x("  y = prims.add(x)\n  return y\n"), 3, 7, "prims.add: missing argument 'b'"},
      {"UnknownKeyword", with_x("  y = prims.sum(x, (0,), foo=1)\n  return y\n"), 3, 30,
       "unexpected keyword argument 'foo'"},
      {"UseAfterDel", with_x("  del x\n  y = prims.neg(x)\n  return y\n"), 4, 17, "'x' is used after 'del x' at line 3"},
      {"UndefinedName", with_x("  y = prims.neg(z)\n  return y\n"), 3, 17, "undefined name 'z'"},
      {"DelUndefined", with_x("  del q\n  return x\n"), 3, 7, "undefined name 'q'"},
      {"Redefinition", with_x("  x = prims.neg(x)\n  return x\n"), 3, 3, "'x' is already defined at line 2"},
      {"UnmatchedClose", with_x("  y = prims.neg(x))\n  return y\n"), 3, 19, "unmatched ')'"},
      {"MissingEquals", with_x("  y prims.neg(x)\n  return y\n"), 3, 5, "expected '=' after the assignment target"},
      {"ExpressionStatement", with_x("  prims.neg(x)\n  return x\n"), 3, 15, "expected '='"},
      {"UnterminatedString", with_x("  y = prims.convert_element_type(x, \"f32)\n  return y\n"), 3, 37,
       "unterminated string"},
      {"UnterminatedBracket", with_x("  y = prims.neg(x\n  return y\n"), 3, 16, "unterminated '('"},
      {"BadDType", "def f(x):\n  # x: \"cpu f33[2]\"\n  return x\n", 2, 13, "unknown dtype 'f33'"},
      {"BadAnnotationForm", "def f(x):\n  # x: \"cpu f32\"\n  return x\n", 2, 13, "expected \"device dtype[shape]\""},
      {"HugeAnnotatedShape", "def f(x):\n  # x: \"cpu f32[99999999999999999999]\"\n  return x\n", 2, 13,
       "too large"},
      {"IntOverflow", with_x("  y = prims.add(x, 99999999999999999999)\n  return y\n"), 3, 20,
       "does not fit in 64 bits"},
      {"IntOneAboveMax", with_x("  y = prims.add(x, 9223372036854775808)\n  return y\n"), 3, 20,
       "does not fit in int64"},
      {"FloatOverflow", with_x("  y = prims.add(x, 1e999)\n  return y\n"), 3, 20, "overflows a double"},
      {"HugeReshape", with_x("  y = prims.reshape(x, (4294967296, 4294967296))\n  return y\n"), 3, 24, "too large"},
      {"ReshapeFromAddNode", with_x("  y = prims.reshape(x, (4, 2))\n  return y\n"), 3, 7,
       "cannot reshape [2, 3] (6 elements) to [4, 2]"},
      {"ShapeMismatchFromAddNode",
       "def f(x, w):\n  # x: \"cpu f32[2, 3]\"\n  # w: \"cpu f32[3]\"\n  y = prims.add(x, w)\n  return y\n", 4, 7,
       "operands must have the same shape"},
      {"ExpandFromSpelling", with_x("  y = Tensor.expand(x, (5, 5))\n  return y\n"), 3, 7, "cannot expand"},
      {"TooManyTargets", with_x("  a, b, c = prims.var_mean(x, (1,), correction=0)\n  return a\n"), 3, 13,
       "returns 2 value(s), but 3 name(s)"},
      {"DeepNesting", with_x(deep + "  return y\n"), 3, 0, "nested too deeply"},
      {"MissingReturn", with_x("  y = prims.neg(x)\n"), 3, 1, "expected a 'return' statement"},
      {"StatementAfterReturn", with_x("  return x\n  y = prims.neg(x)\n"), 4, 3, "expected nothing after 'return'"},
      {"TwoFunctions", with_x("  return x\ndef g(x):\n  return x\n"), 4, 1, "second 'def g'"},
      {"NonAsciiByte", with_x("  y = prims.neg(x) \xc3\xa9\n  return y\n"), 3, 20, "unexpected byte 0xc3"},
      {"ScalarOutput", "def f(s):\n  # s: \"float\"\n  return s\n", 3, 10, "expected a tensor to return"},
      {"EmptyTrace", "", 1, 1, "expected a function 'def NAME(ARGS):' (or a trace's statements), found an empty trace"},
      {"OnlyComments", "# a comment\n\n  # x: \"cpu f32[2]\"\n", 1, 1, "found only comments"},
      {"ScalarTooStrong", "def f(x):\n  # x: \"cpu i32[2]\"\n  y = prims.add(x, 0.5)\n  return y\n", 3, 7,
       "a float number cannot combine with i32 tensors"},
  };
}

TEST(TraceErrors, EachBadTrace_ReportsLineColumnAndMessage) {
  for (const BadTrace& bad : bad_traces()) {
    SCOPED_TRACE(bad.name);
    try {
      read_trace(bad.text, "bad.py");
      ADD_FAILURE() << "no error for " << bad.name;
    } catch (const TraceError& e) {
      EXPECT_EQ(e.file(), "bad.py");
      EXPECT_EQ(e.line(), bad.line) << e.what();
      if (bad.column) {
        EXPECT_EQ(e.column(), bad.column) << e.what();
      }
      EXPECT_THAT(e.message(), HasSubstr(bad.message));
      EXPECT_THAT(std::string(e.what()), HasSubstr("bad.py:" + std::to_string(bad.line) + ":"));
    }
  }
}

TEST(TraceErrors, MissingFile_IsTraceError) {
  EXPECT_THROW(read_trace_file("/nonexistent/trace.py"), TraceError);
}

}  // namespace
}  // namespace vf
