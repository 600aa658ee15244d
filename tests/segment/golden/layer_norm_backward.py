# A layer norm's backward with its weight's and bias's gradients (nanoGPT's, at 1024 rows of 64):
# the input gradient's two row sums and the two column sums in one pass over the rows, then the
# column partials' kernel.
def ln_backward(dy, x, mean, rstd, w):
  # dy: "cuda:0 bf16[4, 256, 64]"
  # x: "cuda:0 f32[4, 256, 64]"
  # mean: "cuda:0 f32[4, 256, 1]"
  # rstd: "cuda:0 f32[4, 256, 1]"
  # w: "cuda:0 bf16[64]"
  g = prims.convert_element_type(dy, dtypes.float32)
  mb = prims.broadcast_in_dim(mean, (4, 256, 64), (0, 1, 2))
  rb = prims.broadcast_in_dim(rstd, (4, 256, 64), (0, 1, 2))
  xc = prims.sub(x, mb)
  xhat = prims.mul(xc, rb)
  wb = prims.broadcast_in_dim(w, (4, 256, 64), (2,))
  wf = prims.convert_element_type(wb, dtypes.float32)
  gw = prims.mul(g, wf)
  s1 = prims.sum(gw, (2,))
  gwx = prims.mul(gw, xhat)
  s2 = prims.sum(gwx, (2,))
  b1 = prims.broadcast_in_dim(s1, (4, 256, 64), (0, 1))
  b2 = prims.broadcast_in_dim(s2, (4, 256, 64), (0, 1))
  n = prims.mul(gw, 64.0)
  d1 = prims.sub(n, b1)
  xb2 = prims.mul(xhat, b2)
  d2 = prims.sub(d1, xb2)
  r = prims.mul(rb, d2)
  q = prims.div(r, 64.0)
  dx = prims.convert_element_type(q, dtypes.bfloat16)
  gx = prims.mul(g, xhat)
  sw = prims.sum(gx, (0, 1))
  dw = prims.convert_element_type(sw, dtypes.bfloat16)
  sb = prims.sum(g, (0, 1))
  db = prims.convert_element_type(sb, dtypes.bfloat16)
  return (dx, dw, db)
