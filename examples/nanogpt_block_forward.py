# A nanoGPT block forward without its matmuls (their outputs are inputs): merge heads of the
# attention output, first residual, layer norm (ln_2), GELU (tanh form) of the MLP activation and
# the second residual. B=2, T=8, nh=4, hs=8, C=32 (REFERENCE.md section 5 uses [16, 32, 2048, 128]
# for merge heads and [16384, 4096] for the norms).
import thunder.core.dtypes as dtypes

@torch.no_grad()
@no_autocast
def nanogpt_block_forward(y, x, ln_w, ln_b, fc_out, proj_out):
  # y: "cuda:0 bf16[2, 4, 8, 8]"
  # x: "cuda:0 bf16[2, 8, 32]"
  # ln_w: "cuda:0 bf16[32]"
  # ln_b: "cuda:0 bf16[32]"
  # fc_out: "cuda:0 bf16[2, 8, 128]"
  # proj_out: "cuda:0 bf16[2, 8, 32]"
  # Merge heads: [B, nh, T, hs] -> [B, T, nh, hs] -> [B, T, C].
  t0 = prims.transpose(y, (0, 2, 1, 3))  # t0: "cuda:0 bf16[2, 8, 4, 8]"
  del y
  t1 = prims.reshape(t0, (2, 8, 32))  # t1: "cuda:0 bf16[2, 8, 32]"
  del t0
  t2 = prims.convert_element_type(t1, dtypes.float32)  # t2: "cuda:0 f32[2, 8, 32]"
  t3 = prims.convert_element_type(x, dtypes.float32)  # t3: "cuda:0 f32[2, 8, 32]"
  # First residual.
  t4 = prims.add(t3, t2)  # t4: "cuda:0 f32[2, 8, 32]"
  del t2, t3
  # Layer norm over C.
  (t5, t6) = prims.var_mean(t4, (2,), correction=0)
  t7 = prims.add(t5, 1e-05)  # t7: "cuda:0 f32[2, 8]"
  t8 = prims.rsqrt(t7)  # t8: "cuda:0 f32[2, 8]"
  t9 = prims.broadcast_in_dim(t6, (2, 8, 32), (0, 1))  # t9: "cuda:0 f32[2, 8, 32]"
  t10 = prims.broadcast_in_dim(t8, (2, 8, 32), (0, 1))  # t10: "cuda:0 f32[2, 8, 32]"
  t11 = prims.sub(t4, t9)  # t11: "cuda:0 f32[2, 8, 32]"
  t12 = prims.mul(t11, t10)  # t12: "cuda:0 f32[2, 8, 32]"
  t13 = prims.convert_element_type(ln_w, dtypes.float32)  # t13: "cuda:0 f32[32]"
  t14 = prims.broadcast_in_dim(t13, (2, 8, 32), (2,))  # t14: "cuda:0 f32[2, 8, 32]"
  t15 = prims.mul(t12, t14)  # t15: "cuda:0 f32[2, 8, 32]"
  t16 = prims.convert_element_type(ln_b, dtypes.float32)  # t16: "cuda:0 f32[32]"
  t17 = prims.broadcast_in_dim(t16, (2, 8, 32), (2,))  # t17: "cuda:0 f32[2, 8, 32]"
  t18 = prims.add(t15, t17)  # t18: "cuda:0 f32[2, 8, 32]"
  t19 = prims.convert_element_type(t18, dtypes.bfloat16)  # t19: "cuda:0 bf16[2, 8, 32]"
  # GELU, tanh form: 0.5 * a * (1 + tanh(sqrt(2 / pi) * (a + 0.044715 * a^3))).
  t20 = prims.convert_element_type(fc_out, dtypes.float32)  # t20: "cuda:0 f32[2, 8, 128]"
  t21 = prims.mul(t20, t20)  # t21: "cuda:0 f32[2, 8, 128]"
  t22 = prims.mul(t21, t20)  # t22: "cuda:0 f32[2, 8, 128]"
  t23 = prims.mul(0.044715, t22)  # t23: "cuda:0 f32[2, 8, 128]"
  t24 = prims.add(t20, t23)  # t24: "cuda:0 f32[2, 8, 128]"
  t25 = prims.mul(0.7978845608028654, t24)  # t25: "cuda:0 f32[2, 8, 128]"
  t26 = prims.tanh(t25)  # t26: "cuda:0 f32[2, 8, 128]"
  t27 = prims.add(1.0, t26)  # t27: "cuda:0 f32[2, 8, 128]"
  t28 = prims.mul(0.5, t20)  # t28: "cuda:0 f32[2, 8, 128]"
  t29 = prims.mul(t28, t27)  # t29: "cuda:0 f32[2, 8, 128]"
  t30 = prims.convert_element_type(t29, dtypes.bfloat16)  # t30: "cuda:0 bf16[2, 8, 128]"
  # Second residual: the MLP projection's output added to the first residual.
  t31 = prims.convert_element_type(proj_out, dtypes.float32)  # t31: "cuda:0 f32[2, 8, 32]"
  t32 = prims.add(t4, t31)  # t32: "cuda:0 f32[2, 8, 32]"
  t33 = prims.convert_element_type(t32, dtypes.bfloat16)  # t33: "cuda:0 bf16[2, 8, 32]"
  return {'output': (t19, t30, t33), 'flat_args': [x, ln_w, ln_b, fc_out, proj_out]}
