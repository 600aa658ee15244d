# Position ids from an attention mask, as Hugging Face models compute them: cumsum(mask) - 1 where
# the mask is set, 1 elsewhere. The bool mask's cumsum sums in int64 (torch's promotion) in a scan
# kernel of its own, the mask's conversion inside it; the where reads the scan's buffer in a second
# kernel. Batch 4, sequence 128.
def position_ids(mask):
  # mask: "cuda:0 b8[4, 128]"
  t0 = torch.cumsum(mask, -1)  # t0: "cuda:0 i64[4, 128]"
  t1 = prims.sub(t0, 1)  # t1: "cuda:0 i64[4, 128]"
  t2 = prims.where(mask, t1, 1)  # t2: "cuda:0 i64[4, 128]"
  return t2
