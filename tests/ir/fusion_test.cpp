// Tests of the Fusion container (names, uses, outputs) and of verify_fusion on valid fusions.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/error.h"
#include "ir/ir.h"
#include "ir/verify.h"

namespace vf {
namespace {

using testing::HasSubstr;

// The seed trace: permute + reshape, a bf16 weight broadcast, mul and var_mean.
void build_seed(Fusion& f) {
  Value* t2 = f.add_tensor_input("t_2", DType::Float32, {2, 16, 8, 16});
  Value* w = f.add_tensor_input("w", DType::BFloat16, {256});
  Value* t1 = f.add_node(OpKind::Transpose, {t2}, PermuteAttrs{{0, 2, 1, 3}}, {"t1"}).at(0);
  Value* t3 = f.add_node(OpKind::Reshape, {t1}, ReshapeAttrs{{2, 8, 256}}, {"t3"}).at(0);
  Value* t4 = f.add_node(OpKind::ConvertElementType, {w}, CastAttrs{DType::Float32}, {"t4"}).at(0);
  Value* t5 = f.add_node(OpKind::BroadcastInDim, {t4}, BroadcastAttrs{{2, 8, 256}, {2}}, {"t5"}).at(0);
  Value* t6 = f.add_node(OpKind::Mul, {t3, t5}, NoAttrs{}, {"t6"}).at(0);
  const auto& vm = f.add_node(OpKind::VarMean, {t6}, VarAttrs{{2}, 0}, {"t7", "t8"});
  f.add_output(t6);
  f.add_output(vm.at(0));
}

TEST(Fusion, SeedTrace_TypesAndVerify) {
  Fusion f;
  build_seed(f);
  EXPECT_EQ(f.find("t3")->type_string(), "f32[2, 8, 256]");
  EXPECT_EQ(f.find("t5")->type_string(), "f32[2, 8, 256]");
  EXPECT_EQ(f.find("t7")->type_string(), "f32[2, 8]");
  EXPECT_EQ(f.find("t8")->type_string(), "f32[2, 8]");
  EXPECT_EQ(f.nodes().size(), 6u);
  EXPECT_NO_THROW(verify_fusion(f));
}

TEST(Fusion, EveryCategory_Verifies) {
  Fusion f;
  Value* x = f.add_tensor_input("x", DType::Float32, {2, 3});
  Value* s = f.add_scalar_input("s", ScalarKind::Float);
  Value* one = f.add_constant(Scalar::from_float(1.0));
  Value* t = f.add(OpKind::Transpose, {x}, PermuteAttrs{{-1, -2}});
  Value* sl = f.add(OpKind::SlicePrim, {t}, SliceAttrs{{0, 0}, {3, 2}, {}});
  Value* p = f.add(OpKind::Pad, {sl, one}, PadAttrs{{{1, -1, 0}, {0, 0, 1}}});
  Value* c = f.add(OpKind::Cat, {p, p}, AxisAttrs{-1});
  Value* e = f.add(OpKind::Exp, {c});
  Value* a = f.add(OpKind::Add, {e, s});
  Value* cond = f.add(OpKind::Gt, {a, one});
  Value* w = f.add(OpKind::Where, {cond, a, one});
  Value* r = f.add(OpKind::Sum, {w}, DimsAttrs{{-1}});
  Value* full = f.add(OpKind::Full, {}, FullAttrs{{3}, Scalar::from_float(2.0), DType::Float32});
  Value* m = f.add(OpKind::Mul, {r, full});
  Value* io = f.add(OpKind::Iota, {}, IotaAttrs{3, 0, 1, DType::Int64});
  f.add_output(m);
  f.add_output(io);
  EXPECT_EQ(c->type_string(), "f32[3, 6]");
  EXPECT_EQ(m->type_string(), "f32[3]");
  EXPECT_NO_THROW(verify_fusion(f));
}

TEST(Fusion, FreshNames_SkipTakenNames) {
  Fusion f;
  Value* t0 = f.add_tensor_input("t0", DType::Float32, {2});
  Value* a = f.add(OpKind::Neg, {t0});
  EXPECT_EQ(a->name, "t1");
  EXPECT_EQ(f.find("t1"), a);
  EXPECT_EQ(f.find("nope"), nullptr);
}

TEST(Fusion, UsesListed_OncePerNode) {
  Fusion f;
  Value* x = f.add_tensor_input("x", DType::Float32, {2});
  Value* m = f.add(OpKind::Mul, {x, x});
  Value* n = f.add(OpKind::Neg, {x});
  ASSERT_EQ(x->uses.size(), 2u);
  EXPECT_EQ(x->uses[0], m->producer);
  EXPECT_EQ(x->uses[1], n->producer);
  EXPECT_TRUE(f.is_input(x));
  EXPECT_FALSE(f.is_input(m));
}

TEST(Fusion, DuplicateInputName_Throws) {
  Fusion f;
  f.add_tensor_input("x", DType::Float32, {2});
  EXPECT_THROW(
      {
        try {
          f.add_scalar_input("x", ScalarKind::Int);
        } catch (const UserError& e) {
          EXPECT_THAT(e.what(), HasSubstr("the name 'x' is defined twice"));
          throw;
        }
      },
      UserError);
}

TEST(Fusion, NegativeInputSize_Throws) {
  Fusion f;
  try {
    f.add_tensor_input("x", DType::Float32, {2, -1});
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("input 'x': sizes must be >= 0, got [2, -1]"));
  }
}

// Regression: a repeated output name used to leave the first result behind as a value with no
// producer.
TEST(Fusion, DuplicateOutputNames_ThrowAndAddNothing) {
  Fusion f;
  Value* x = f.add_tensor_input("x", DType::Float32, {2, 3});
  const size_t values = f.values().size();
  try {
    f.add_node(OpKind::VarMean, {x}, VarAttrs{{1}, 1}, {"a", "a"});
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("the name 'a' is defined twice"));
  }
  EXPECT_EQ(f.values().size(), values);
  EXPECT_EQ(f.find("a"), nullptr);
  EXPECT_TRUE(f.nodes().empty());
  EXPECT_NO_THROW(verify_fusion(f));
}

TEST(Fusion, OutputNameTaken_ThrowsAndAddsNothing) {
  Fusion f;
  Value* x = f.add_tensor_input("x", DType::Float32, {2});
  try {
    f.add_node(OpKind::Neg, {x}, NoAttrs{}, {"x"});
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("the name 'x' is defined twice"));
  }
  EXPECT_TRUE(x->uses.empty());
  EXPECT_TRUE(f.nodes().empty());
}

TEST(Fusion, ScalarOutput_Throws) {
  Fusion f;
  Value* s = f.add_scalar_input("s", ScalarKind::Int);
  try {
    f.add_output(s);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("fusion outputs must be tensors; 's' is a int"));
  }
}

}  // namespace
}  // namespace vf
